"""One source, three backends. Each recursion (``rnea.py``, ``crba.py``, ``aba.py``, ``udut.py``, ``regressor.py``)
is a plain Python function over the packed model (``packing.py``), written once, with the spatial operations of
``spatial_kernels.py``. Run as it is, it is the reference (and every path without numba); ``compiled`` gives
numba's machine code of the same source (``fast``); ``fast/codegen.py`` runs it on symbols to write per-robot code.
"""
import functools
import types


def njit(*signature, cache=True):
    """Mark a function for ``compiled`` with numba's arguments (``numba.njit(*signature, cache=cache)``); the
    function itself is returned unchanged, so importing a recursion never imports numba."""
    def mark(function):
        function.njit_arguments = (signature, cache)
        return function
    return mark


@functools.cache
def compiled(function):
    """numba's compiled version of a marked function: its own code with the marked functions it calls replaced by
    their compiled versions (loaded from numba's on-disk cache, or compiled on first use; imports numba)."""
    from numba import njit as numba_njit
    namespace = dict(function.__globals__)
    for name in function.__code__.co_names:   # the global names it uses
        if hasattr(namespace.get(name), 'njit_arguments'):
            namespace[name] = compiled(namespace[name])
    copy = types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__,
                              function.__closure__)
    copy.__qualname__ = function.__qualname__   # numba's disk cache is named by module and qualified name
    signature, cache = function.njit_arguments
    return numba_njit(*signature, cache=cache)(copy)
