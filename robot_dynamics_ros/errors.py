"""The package's exceptions. Every error a user can cause derives from RobotDynamicsError, so a program (and
the ``robot-dynamics`` command line) can catch them all and report them in one line."""


class RobotDynamicsError(Exception):
    """Base class of the errors this package raises for bad input or a model it cannot compute with."""


class URDFError(RobotDynamicsError, ValueError):
    """A URDF that cannot be turned into a model; the message names the offending element."""


class SRDFError(RobotDynamicsError, ValueError):
    """An SRDF (MoveIt's semantic description) that cannot be read or does not fit its URDF; the message names
    the offending element."""


class URDFWarning(UserWarning):
    """A URDF that loads but is suspect (an inconsistent inertia, equal joint limits, a massless moving
    subtree, a mimic joint); the message names the element."""


class SingularMassMatrixError(RobotDynamicsError):
    """Forward dynamics is undefined: the mass matrix is singular (or not positive definite) at this
    configuration, e.g. a joint that moves no mass or inertia; the message names the joint."""


class ContactSolverError(RobotDynamicsError, ValueError):
    """The contact problem of a simulator's step could not be solved (the interior-point oracle's budget spent, or a
    zero pivot); the simulator keeps the state before the step."""
