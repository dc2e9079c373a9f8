"""A node's numba compilations, said as they happen: 'compiling <kernel> ...' and 'compiled <kernel> in N s' in
the node's log (rclpy's line format), so that a first run on a machine, which compiles the kernels (minutes under
load; numba caches them on disk for later runs), says what it is doing. Kernels loaded from the disk cache say
nothing (numba broadcasts its "numba:compile" event only when it compiles)."""
import importlib.util
import re
import sys
import time

COMPILING = ('simulator', 'computed_torque_controller', 'legged_controller', 'cartesian_controller')   # numba kernels


def install(node_name):
    """For the nodes that compile kernels, where numba is installed: log the outermost compilation of each kernel
    from now on in this process (a kernel compiles the kernels it calls inside its own compilation). Called as the
    node is built (``node_loop.run``), after its module's imports: numba imports numpy, which must load after the
    entry point has set BLAS's threads (``start.py``)."""
    if node_name not in COMPILING or importlib.util.find_spec('numba') is None:
        return
    from numba.core import event

    class Progress(event.Listener):
        def __init__(self):
            self.depth, self.started = 0, 0.0

        def on_start(self, ev):
            self.depth += 1
            if self.depth == 1:
                self.started = time.monotonic()
                _log(node_name, f"compiling {_name(ev)} (numba; the first run on this machine, cached afterwards)")

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                _log(node_name, f"compiled {_name(ev)} in {time.monotonic() - self.started:.1f} s")

    event.register('numba:compile', Progress())


def _name(ev):
    """The kernel's name, without the hash of its source that backends.compiled appends."""
    return re.sub(r'_[0-9a-f]{16}$', '', getattr(ev.data['dispatcher'].py_func, '__name__', 'a kernel'))


def _log(node_name, message):
    sys.stderr.write(f"[INFO] [{time.time():.9f}] [{node_name}]: {message}\n")
    sys.stderr.flush()
