"""SIGINT and SIGTERM as a request to stop, for the package's processes (nodes and ``robot-dynamics``).

``catch()`` is the first thing their entry points do, before the heavy imports: a signal is then recorded
(``received()``) instead of killing the process silently (SIGTERM's default) or raising KeyboardInterrupt
at whatever line it lands on (a traceback); the process looks at it when it can stop cleanly. A signal
in the tens of milliseconds before Python runs the entry point still ends the process, unless its parent
started it with the signals blocked (``blocked()``, as bringup and record do): it then waits, pending,
until ``catch()``. Imports nothing but the standard library.
"""
import contextlib
import signal
import sys

SIGNALS = {signal.SIGINT, signal.SIGTERM}

_received = []   # names of the signals received, oldest first
_wake_up = [None]  # called on each signal, e.g. to wake an executor waiting for work


def catch(wake_up=None):
    """Record SIGINT and SIGTERM from now on, and call wake_up() (no arguments) on each; the handler never
    raises. Signals received before are kept. Returns the handlers it replaced (for ``restore``)."""
    _wake_up[0] = wake_up
    previous = {sig: signal.signal(sig, _on_signal) for sig in SIGNALS}
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)   # a signal pending since the start arrives now
    return previous


def interrupt():
    """Record SIGINT and SIGTERM from now on and raise KeyboardInterrupt where the program is, for work that
    has no loop to look at ``received()``. Where it lands in a callback from C that cannot pass it on (numba's
    compiler writing its cache), Python would print it with a traceback and go on: the signal is recorded, so it
    goes on quietly and the caller stops at its next look at ``received()``."""
    if sys.unraisablehook is not _quiet_unraisable:
        _unraisablehook[0] = sys.unraisablehook
        sys.unraisablehook = _quiet_unraisable
    for sig in SIGNALS:
        signal.signal(sig, _raise)


def restore(handlers):
    """Put back the handlers that ``catch`` replaced and forget the signals received."""
    for sig, handler in handlers.items():
        signal.signal(sig, handler)
    _received.clear()


@contextlib.contextmanager
def blocked():
    """SIGINT and SIGTERM blocked in this thread meanwhile, and in the processes it starts until they catch()
    them (a blocked signal stays pending across exec)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore():
    """Ignore SIGINT and SIGTERM from now on (a second signal must not interrupt a clean-up)."""
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def received():
    """The name of the first signal received ('SIGINT', 'SIGTERM'), or None."""
    return _received[0] if _received else None


def interrupted(error):
    """Whether ``error`` is the KeyboardInterrupt of a recorded signal (``interrupt``), itself or wrapped: Python
    3.11 wraps an exception raised in ``__set_name__`` while a class is created in a RuntimeError (seen in CI:
    a SIGINT while a node was built landed in an enum's creation)."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return bool(_received)
        error = error.__cause__ or error.__context__
    return False


def exit_code():
    """128 + the first signal's number, the shell's code for a command stopped by it (130, 143; 130 when no
    signal was received: a KeyboardInterrupt raised otherwise)."""
    return 128 + signal.Signals[received() or 'SIGINT'].value


_unraisablehook = [sys.unraisablehook]   # the hook ``interrupt`` replaced


def _quiet_unraisable(unraisable):
    """sys.unraisablehook: nothing for the KeyboardInterrupt of a recorded signal, the replaced hook otherwise."""
    if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _received):
        _unraisablehook[0](unraisable)


def _raise(signum, frame):
    _on_signal(signum, frame)
    raise KeyboardInterrupt


def _on_signal(signum, frame):
    _received.append(signal.Signals(signum).name)
    if _wake_up[0] is not None:
        _wake_up[0]()
