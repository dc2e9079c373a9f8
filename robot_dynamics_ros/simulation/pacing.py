"""Real-time pacing of a simulation on the wall clock, without ROS: how many publish periods of sim time a timer
tick steps, and whether the achieved real-time factor keeps up with the target.

Sim time is tied to wall time at an anchor (sim0 at wall0); at a tick, sim time due is
sim0 + (wall - wall0) * real_time_factor. A late tick steps every period due (the command held over them), at most
``CATCH_UP_PER_TICK`` of sim time; lag beyond ``MAX_LAG`` (a stall) is forgiven by anchoring anew, and counts
against the achieved real-time factor.
"""
MAX_LAG = 0.05             # s of sim time the stepping may fall behind the wall clock before it is forgiven
CATCH_UP_PER_TICK = 0.008  # s of sim time at most one late tick steps (at least one publish period)
KEEP_UP_WINDOW = 2.0       # wall seconds over which the achieved real-time factor is checked
KEEP_UP_FRACTION = 0.95    # below this fraction of the target the simulation does not keep up


class Pacing:
    """Pacing at ``real_time_factor`` (0 or negative: as fast as possible, one period per tick) with publish
    periods of ``period`` s of sim time. Times are the caller's: ``wall`` from a monotonic clock, ``sim`` the sim
    time."""

    def __init__(self, real_time_factor: float, period: float) -> None:
        self.real_time_factor, self.period = real_time_factor, period
        self.anchor = (0.0, 0.0)   # (wall, sim) tied together
        self.window = None         # (wall, sim) at the start of the keep-up window

    def tie(self, wall: float, sim: float) -> None:
        """Tie sim time ``sim`` to wall time ``wall``: stepping catches up with the wall from here (after a pause,
        a wait, a reset); the keep-up window starts anew."""
        self.anchor = (wall, sim)
        self.window = None

    def periods_due(self, wall: float, sim: float) -> int:
        """The publish periods of sim time due at ``wall`` with sim time at ``sim``."""
        if self.real_time_factor <= 0:
            return 1
        wall0, sim0 = self.anchor
        lag = sim0 + (wall - wall0) * self.real_time_factor - sim
        if lag > MAX_LAG:   # a stall: forgiven
            self.anchor = (wall, sim)
            return 1
        return min(int(lag / self.period + 0.5), max(1, int(CATCH_UP_PER_TICK / self.period)))

    def shortfall(self, wall: float, sim: float) -> tuple[float, float] | None:
        """(achieved real-time factor, window s) when a keep-up window of at least KEEP_UP_WINDOW wall seconds ends
        at ``wall`` with the achieved factor below KEEP_UP_FRACTION of the target; else None. A window that ends
        starts the next."""
        if self.window is None:
            self.window = (wall, sim)
            return None
        wall0, sim0 = self.window
        if wall - wall0 < KEEP_UP_WINDOW:
            return None
        self.window = (wall, sim)
        achieved = (sim - sim0) / (wall - wall0)
        return (achieved, wall - wall0) if achieved < KEEP_UP_FRACTION * self.real_time_factor else None
