"""One source, three backends. Each recursion (``rnea.py``, ``crba.py``, ``aba.py``, ``udut.py``, ``regressor.py``)
is a plain Python function over the packed model (``packing.py``), written once, with the spatial operations of
``spatial_kernels.py``. Run as it is, it is the reference (and every path without numba); ``compiled`` gives
numba's machine code of the same source (``fast``); ``fast/codegen.py`` runs it on symbols to write per-robot code.
"""
import functools
import hashlib
import os
import types

# Each kernel's state arguments (its outputs follow them) and how many of (a0, f_ext) it takes after (table, work).
KERNEL_STATES = {'rnea': ('q', 'qd', 'qdd'), 'aba': ('q', 'qd', 'tau'), 'crba': ('q',), 'udut': ('q',),
                 'regressor': ('q', 'qd', 'qdd')}
KERNEL_FORCES = {'rnea': 2, 'aba': 2, 'crba': 0, 'udut': 0, 'regressor': 1}


def njit(*signature, cache=True, inline='never'):
    """Mark a function for ``compiled`` with numba's arguments (``numba.njit(*signature, cache=cache,
    inline=inline)``); the function itself is returned unchanged, so importing a recursion never imports numba."""
    def mark(function):
        function.njit_arguments = (signature, cache, inline)
        return function
    return mark


@functools.cache
def source_hash():
    """A hash of every source the compiled kernels and the generated code depend on (``algorithms/``, ``fast/``,
    the compiled steps of ``control/`` and ``simulation/``, and ``spatial.quaternion_rotation``):
    it names their machine code in numba's disk cache, so that an edit anywhere compiles anew (numba itself checks
    only the file of the function it compiles, not the helpers it calls)."""
    return hash_sources(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hash_sources(package):
    """``source_hash`` of the package folder ``package``."""
    digest = hashlib.sha256()
    sources = [os.path.join(package, 'spatial.py')] + [
        os.path.join(package, folder, name) for folder in ('algorithms', 'fast', 'control', 'simulation')
        for name in sorted(os.listdir(os.path.join(package, folder))) if name.endswith('.py')]
    for path in sources:
        with open(path, 'rb') as f:
            digest.update(os.path.basename(path).encode() + b'\0' + f.read())
    return digest.hexdigest()[:16]


def shaped(vector, shape):
    """``vector.reshape(shape)`` of a one-dimensional C-contiguous array; compiled, the view is written in place
    (``numba_views.py``; numba is imported by it only)."""
    return vector.reshape(shape)


@functools.cache
def compiled(function):
    """numba's compiled version of a marked function: its own code with the marked functions it calls replaced by
    their compiled versions (loaded from numba's on-disk cache, or compiled on first use; imports numba)."""
    from numba import njit as numba_njit
    namespace = dict(function.__globals__)
    for name in function.__code__.co_names:   # the global names it uses
        if hasattr(namespace.get(name), 'njit_arguments'):
            namespace[name] = compiled(namespace[name])
        elif namespace.get(name) is shaped:
            from .numba_views import shaped as compiled_shaped
            namespace[name] = compiled_shaped
    copy = types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__,
                              function.__closure__)
    signature, cache, inline = function.njit_arguments
    # numba's disk cache names an entry by module and qualified name: with the sources' hash in it, an edit of any
    # helper gets new machine code (old entries are left behind, unused)
    copy.__qualname__ = f'{function.__qualname__}_{source_hash()}' if cache else function.__qualname__
    return numba_njit(*signature, cache=cache, inline=inline)(copy)
