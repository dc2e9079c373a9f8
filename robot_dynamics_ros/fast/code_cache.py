"""The on-disk cache of generated code (``codegen.py``): one folder per version of the sources it depends on
(``backends.source_hash``), in it one module per robot and algorithm, named by a hash of the packed model it was
traced from, with numba's machine code beside it (``__pycache__``). Looking a model up costs a hash of its packed
table and a directory listing, not a trace; only ``compile`` traces and compiles.
"""
import glob
import hashlib
import importlib.util
import os
import sys
import tempfile
import time

from ..algorithms.backends import source_hash
from ..algorithms.packing import packed
from .codegen import check_size, module_source


def directory():
    """``$XDG_CACHE_HOME/robot_dynamics_ros/generated/<source hash>`` (``~/.cache`` without XDG_CACHE_HOME)."""
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'robot_dynamics_ros', 'generated', source_hash())


def module_path(model, algorithm):
    """Where the generated module of ``algorithm`` for ``model`` lives: named by what tracing reads (the packed
    table, the default gravity) and the algorithm."""
    pack = packed(model)
    digest = hashlib.sha256(algorithm.encode())
    for array in (pack.table, pack.default_base_acceleration):
        digest.update(repr(array.shape).encode() + array.tobytes())
    return os.path.join(directory(), f'{algorithm}_{digest.hexdigest()[:20]}.py')


def is_compiled(path):
    """Whether numba's on-disk cache holds machine code for the module at ``path`` (its index files)."""
    stem = os.path.basename(path)[:-len('.py')]
    return os.path.exists(path) and bool(glob.glob(os.path.join(os.path.dirname(path), '__pycache__', f'{stem}.*.nbi')))


def _import(path):
    """Import a generated module: numba loads its machine code from the disk cache, or compiles it (seconds)."""
    name = 'robot_dynamics_ros_generated_' + os.path.basename(path)[:-len('.py')]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _functions(algorithm, module):
    return {algorithm: getattr(module, algorithm), f'{algorithm}_batch': getattr(module, f'{algorithm}_batch')}


def load_compiled(model, algorithms):
    """{name: function} of those ``algorithms`` whose code for ``model`` is compiled in the disk cache (and their
    _batch versions); nothing is traced or compiled."""
    functions = {}
    if model.nv > 0:
        for algorithm in algorithms:
            path = module_path(model, algorithm)
            if is_compiled(path):
                functions.update(_functions(algorithm, _import(path)))
    return functions


def compile(model, algorithms, progress=None):
    """Trace, write and compile ``algorithms`` for ``model`` in this process, in the foreground (seconds each on a
    cold cache, well under one when already compiled); {name: function}. ``progress(algorithm, seconds)`` is
    called after each."""
    check_size(model)
    functions = {}
    for algorithm in algorithms:
        start = time.perf_counter()
        path = module_path(model, algorithm)
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with tempfile.NamedTemporaryFile('w', dir=os.path.dirname(path), suffix='.tmp', delete=False) as f:
                f.write(module_source(model, algorithm))
            os.replace(f.name, path)   # atomic: processes writing the same robot at once see a whole file
        functions.update(_functions(algorithm, _import(path)))
        if progress is not None:
            progress(algorithm, time.perf_counter() - start)
    return functions
