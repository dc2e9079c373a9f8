"""Per-robot generated code: RNEA, CRBA, ABA and the regressor of one Model written out as straight-line Python,
compiled with numba (the customized symbolic Newton-Euler idea: Khalil & Kleinfinger; Featherstone RBDA
Sec. 10.1, whose spatial_v2 runs its ID.m on symbols).

No recursion is written here: the one Python source of each recursion (``algorithms.rnea.rnea_kernel``, with the
helpers it calls, see ``algorithms/backends.py``) runs once on a work array of ``Symbol`` values, while the packed
table stays real numbers. So the tree structure, joint types and axes are decided while tracing, the
constant tree transforms and inertias become literals, products with a zero constant are dropped and constant
sums folded; what depends on the states is written out as assignments. Each generated function takes only its
states and out (as ``rnea(q, qd, qdd, out)``), with the default gravity baked in (other gravity vectors and
external forces go through the table kernels). The source is written once to the user's cache directory, named
by its own hash, and imported from there so that numba's on-disk cache holds the machine code.
"""
import functools
import glob
import hashlib
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import threading
import warnings

import numpy as np

from ..algorithms.packing import packed


class Trace:
    """The straight-line code a traced kernel emits: assignments ``t<k> = expression``, each expression once."""

    def __init__(self):
        self.lines, self.names = [], {}

    def assign(self, expression):
        """The local name of ``expression``, emitted on its first use (common subexpressions are shared)."""
        name = self.names.get(expression)
        if name is None:
            name = self.names[expression] = f't{len(self.names)}'
            self.lines.append((name, expression))
        return name

    def inputs(self, name, n):
        """Symbols name[0] ... name[n - 1] in an object array."""
        symbols = np.empty(n, dtype=object)
        symbols[:] = [Symbol(self, 1.0, (f'{name}[{i}]',)) for i in range(n)]
        return symbols

    def live_lines(self, stores):
        """The source lines the stores (``target = value``, values are names or literals) need, dead code left
        out, each store right after its value is computed (values waiting for a store at the end would be spilled
        from the registers)."""
        after, defined = {}, set(self.names.values())
        for target, value in stores:
            after.setdefault(value if value in defined else None, []).append(f'{target} = {value}')
        needed, lines = set(after), []
        for name, expression in reversed(self.lines):
            if name in needed:
                lines += after.get(name, [])[::-1] + [f'{name} = {expression}']
                needed.update(re.findall(r'\bt\d+\b', expression))
        return lines[::-1] + after.get(None, [])


def _term(c, names):
    """Source of the term c * product of names, with its sign apart: (' - ' or ' + ', text)."""
    text = '*'.join(names) if abs(c) == 1.0 and names else '*'.join((repr(abs(c)),) + names)
    return (' - ' if c < 0.0 else ' + '), text


class Symbol:
    """A number known only when the generated code runs, as coefficient * product of one or two names: a product
    is not written until it is used (constant factors fold into its coefficient), a sum or a quotient is written
    as a line of its own when it is formed (so the code computes values in the order of the kernel; sums collected
    lazily into longer ones took fewer operations but ran slower). Constants fold: 0 x = 0, 1 x = x, x + 0 = x,
    and arithmetic on floats alone stays floats, so what the packed table fixes is decided while tracing.
    ``np.cos`` and ``np.sin`` of a Symbol call its ``cos`` and ``sin`` (NumPy does so for objects)."""

    def __init__(self, trace, c, names):
        self.trace, self.c, self.names = trace, c, names

    def name(self):
        """A local name holding this value (assigned here unless it is one already)."""
        if self.c != 1.0 or len(self.names) > 1:
            sign, text = _term(self.c, self.names)
            self.c, self.names = 1.0, (self.trace.assign(text if sign == ' + ' else '-' + text),)
        return self.names[0]

    def _new(self, expression):
        return Symbol(self.trace, 1.0, (self.trace.assign(expression),))

    def __add__(self, other):
        if not isinstance(other, Symbol):
            other = float(other)
            if other == 0.0:
                return self
            other = Symbol(self.trace, other, ())
        if other.names == self.names:   # like terms
            c = self.c + other.c
            return Symbol(self.trace, c, self.names) if c != 0.0 else 0.0
        (first_sign, first), (sign, second) = _term(self.c, self.names), _term(other.c, other.names)
        return self._new((first if first_sign == ' + ' else '-' + first) + sign + second)

    __radd__ = __add__

    def __neg__(self):
        return Symbol(self.trace, -self.c, self.names)

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return -self + other

    def _factor(self, pair):
        """(sign, names) of this value as a factor of a product: a scaled value is named first (it is used in more
        products, as the entries of a rotation are), and a product of two names unless ``pair``."""
        if abs(self.c) != 1.0:
            return 1.0, (self.name(),)
        if len(self.names) == 2 and not pair:
            return self.c, (self.trace.assign('*'.join(self.names)),)
        return self.c, self.names

    def __mul__(self, other):
        if not isinstance(other, Symbol):
            other = float(other)
            if other == 0.0 or other == 1.0:
                return 0.0 if other == 0.0 else self
            c, names = (self.c, self.names) if len(self.names) == 1 else self._factor(pair=False)
            return Symbol(self.trace, c * other, names)
        (c1, names1), (c2, names2) = self._factor(pair=True), other._factor(pair=True)
        if len(names1) + len(names2) > 2:   # a*b*c is written (a*b)*c, with a*b once
            (c1, names1), (c2, names2) = self._factor(pair=False), other._factor(pair=False)
        return Symbol(self.trace, c1 * c2, tuple(sorted(names1 + names2)))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if not isinstance(other, Symbol):
            return self * (1.0 / float(other))
        return self._new(f'{self.name()} / {other.name()}')

    def __rtruediv__(self, other):
        return self._new(f'{float(other)!r} / {self.name()}')

    def cos(self):
        return self._trig('cos')

    def sin(self):
        return self._trig('sin')

    def _trig(self, function):
        """cos or sin of a joint angle q[i] is read from ``cos_q`` and ``sin_q``, which the generated function takes
        (see TEMPLATE); of anything else it is a call."""
        if self.c == 1.0 and len(self.names) == 1 and self.names[0].startswith('q['):
            return Symbol(self.trace, 1.0, (f'{function}_{self.names[0]}',))
        return self._new(f'np.{function}({self.name()})')


ALGORITHMS = ('rnea', 'crba', 'aba', 'regressor')   # those with generated code
# Each one's result: the shape the trace fills, the type and the shape check of the ``out`` argument.
OUTPUTS = {'rnea': (lambda n: (n,), 'f8[::1]', 'out.shape[0] != N'),
           'aba': (lambda n: (n,), 'f8[::1]', 'out.shape[0] != N'),
           'crba': (lambda n: (n, n), 'f8[:, ::1]', 'out.shape[0] != N or out.shape[1] != N'),
           'regressor': (lambda n: (n, 10 * n), 'f8[:, ::1]', 'out.shape[0] != N or out.shape[1] < 10 * N')}


def trace_body(model, algorithm):
    """The lines of the body of the generated ``algorithm`` (one of ALGORITHMS): its table kernel traced with
    symbols for the states and the default gravity, then ``out[...] = value`` for each result (the regressor's
    zeros are left out: its out must be zeros, as ``fast.regressor`` allocates it)."""
    from . import FORCES, STATES   # the table kernels' arguments, as the dispatcher passes them
    kernel = getattr(importlib.import_module(f'robot_dynamics_ros.algorithms.{algorithm}'), f'{algorithm}_kernel')
    pack, trace, n = packed(model), Trace(), model.nv
    work = np.full(pack.data.work.shape, 0.0, dtype=object)
    states = [trace.inputs(name, n) for name in STATES[algorithm]]
    forces = (pack.default_base_acceleration, pack.no_external_force)[:FORCES[algorithm]]
    out = np.full(OUTPUTS[algorithm][0](n), 0.0, dtype=object)
    try:
        with np.errstate(divide='raise'):
            kernel(pack.table, work, *forces, *states, out)
    except (ZeroDivisionError, FloatingPointError):   # a constant zero pivot (a massless subtree): aba raises,
        return ["raise ZeroDivisionError('zero articulated inertia')"]   # as the table kernel does
    stores = [(f'out[{", ".join(map(str, index))}]', value.name() if isinstance(value, Symbol) else repr(float(value)))
              for index, value in np.ndenumerate(out)
              if algorithm != 'regressor' or isinstance(value, Symbol) or value != 0.0]
    return trace.live_lines(stores)


# The generated functions let LLVM fuse a*b + c into one rounding (fused multiply-add, where the CPU has it): 5-18%
# less time per state on the bundled arm and tree, results within 1e-15 of the separate roundings.
# The traced code is compiled once, in ``{algorithm}_given_trig``, which takes cos q and sin q as tuples (values, no
# allocation): the single call computes them angle by angle (``trig.cos_sin``), the batch for all its states in one
# vectorized pass (``trig.sin_cos``, 2 ns per angle); libm's cos and sin took up to half the time of a batch.
# Batches of PARALLEL_STATES states or more run on numba's threads (all cores; NUMBA_NUM_THREADS=1 keeps them on
# one): on two idle cores 1.8-1.9x the serial loop, which stays for smaller batches (a launch costs ~2 us). The
# kernels hold the GIL, so Python threads never launch two at once (numba's default threading layer forbids it).
PARALLEL_STATES = 64
TEMPLATE = '''"""Generated by robot_dynamics_ros.fast.codegen: {algorithm} of {name!r} ({n} DOF). Do not edit."""
from numba import njit, prange
import numpy as np

from robot_dynamics_ros.fast.trig import cos_sin, sin_cos   # source hash {trig_hash} (a new version compiles anew)

N = {n}


@njit('void({types}, UniTuple(f8, {n}), UniTuple(f8, {n}), {out_type})', cache=True, fastmath={{'contract'}})
def {algorithm}_given_trig({states}, cos_q, sin_q, out):
{body}


@njit('void({types}, {out_type})', cache=True)
def {algorithm}({states}, out):
    if {checks} or {out_check}:
        raise ValueError('{algorithm}: {states} need length nv and out the shape of the result')
    trig = {cos_sin_q}
    {algorithm}_given_trig({states}, {cos_q}, {sin_q}, out)


@njit('void({batch_types}, {batch_out_type})', cache=True, parallel=True)
def {algorithm}_batch({batch_states}, OUT):
    if {batch_checks} or {batch_out_check}:
        raise ValueError('{algorithm}_batch: {states}, out need the same number of states')
    COS_Q, SIN_Q = np.empty(Q.shape), np.empty(Q.shape)
    sin_cos(Q, COS_Q, SIN_Q)
    if OUT.shape[0] < {parallel_states}:
        for s in range(OUT.shape[0]):
            {algorithm}_given_trig({rows}, {cos_row}, {sin_row}, OUT[s])
    else:
        for s in prange(OUT.shape[0]):
            {algorithm}_given_trig({rows}, {cos_row}, {sin_row}, OUT[s])
'''


def module_source(model, algorithm):
    """The Python source of the generated module of ``algorithm`` (one of ALGORITHMS) for ``model``."""
    from . import STATES
    names = STATES[algorithm]
    batch_names = [name.upper() for name in names]
    out_type = OUTPUTS[algorithm][1]
    lines = trace_body(model, algorithm) or ['pass']   # (a model without joints)
    return TEMPLATE.format(
        algorithm=algorithm, name=model.name, n=model.nv, body='\n'.join('    ' + line for line in lines),
        trig_hash=_trig_hash(), parallel_states=PARALLEL_STATES, states=', '.join(names), types=', '.join(['f8[::1]'] * len(names)),
        out_type=out_type, checks=' or '.join(f'{name}.shape[0] != N' for name in names),
        out_check=OUTPUTS[algorithm][2], batch_states=', '.join(batch_names),
        batch_types=', '.join(['f8[:, ::1]'] * len(names)), batch_out_type=out_type.replace('f8[', 'f8[:, '),
        batch_checks=' or '.join(f'{name}.shape[0] != OUT.shape[0] or {name}.shape[1] != N' for name in batch_names),
        batch_out_check=OUTPUTS[algorithm][2].replace('out.shape[1]', 'OUT.shape[2]').replace('out.shape[0]',
                                                                                             'OUT.shape[1]'),
        rows=', '.join(f'{name}[s]' for name in batch_names),
        cos_sin_q=_tuple('cos_sin(q[{}])', model.nv), cos_q=_tuple('trig[{}][0]', model.nv),
        sin_q=_tuple('trig[{}][1]', model.nv),
        cos_row=_tuple('COS_Q[s, {}]', model.nv), sin_row=_tuple('SIN_Q[s, {}]', model.nv))


def _tuple(element, n):
    """The source of the tuple (element.format(0), ..., element.format(n - 1))."""
    return '(' + ''.join(element.format(k) + ', ' for k in range(n)) + ')'


@functools.cache
def _trig_hash():
    """A hash of ``trig.py``'s source: numba's cache of a generated module does not see a change there."""
    with open(os.path.join(os.path.dirname(__file__), 'trig.py'), 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def _cache_directory():
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    directory = os.path.join(base, 'robot_dynamics_ros', 'generated')
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:  # no writable home: a private directory for this process (numba then compiles each time)
        directory = tempfile.mkdtemp(prefix='robot_dynamics_ros_')
    return directory


def _write(source):
    """The path of the generated module with this source, written once and named by its hash."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    path = os.path.join(_cache_directory(), f'robot_{digest}.py')
    if not os.path.exists(path):
        with tempfile.NamedTemporaryFile('w', dir=os.path.dirname(path), suffix='.tmp', delete=False) as f:
            f.write(source)
        os.replace(f.name, path)   # atomic: processes generating the same robot at once see a whole file
    return path


def _import(path):
    """Import a generated module: this loads the machine code from numba's cache next to it, or compiles it
    (seconds) when that cache is cold."""
    name = 'robot_dynamics_ros_generated_' + os.path.basename(path)[len('robot_'):-len('.py')]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def write_modules(model, algorithms=ALGORITHMS):
    """The paths of ``model``'s generated modules (one per algorithm), written to the cache directory."""
    return [_write(module_source(model, algorithm)) for algorithm in algorithms]


def load(paths, algorithms=ALGORITHMS):
    """The generated functions, {name: function}: each algorithm (taking its states, then out, as its table
    kernel) and its _batch version over rows."""
    functions = {}
    for algorithm, path in zip(algorithms, paths):
        module = _import(path)
        functions[algorithm], functions[f'{algorithm}_batch'] = module.__dict__[algorithm], \
            module.__dict__[f'{algorithm}_batch']
    return functions


MAX_DOF = 32   # compile time grows with the code (cold cache, loaded machine): rnea, crba, aba 10-40 s for 7 DOF,
#                2-4 min for 31; the regressor another 25 s for 7 DOF and 4 min for 31
HOT_CALLS = 100   # calls on the table kernels after which a model's code is compiled in the background
ENABLE = os.environ.get('ROBOT_DYNAMICS_ROS_CODEGEN', '1') != '0'   # '0': no automatic background compilation


def _check_size(model):
    if model.nv > MAX_DOF:
        raise ValueError(f"generated code is for models of at most {MAX_DOF} DOF (compile time); "
                         f"{model.name!r} has {model.nv}: the table kernels serve it")


def specialize(model):
    """Generate and compile per-robot code for ``model`` now (seconds on a cold disk cache, well under one
    when warm), so that its default-gravity calls (ALGORITHMS) use it from now on."""
    _check_size(model)
    functions = model._cache['generated'] = load(write_modules(model))
    return functions


def _compile_then_load(model):
    """The background tier-up: generate the modules, compile them in a separate process (numba's compiler
    would otherwise hold this process's GIL for seconds) into the on-disk cache, then load them here."""
    paths = write_modules(model)
    script = 'import sys; from robot_dynamics_ros.fast.codegen import _import; [_import(p) for p in sys.argv[1:]]'
    compiler = subprocess.run([sys.executable, '-c', script, *paths], check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if compiler.returncode != 0:   # the table kernels keep serving: the same results, slower per call
        warnings.warn(f"generated code for {model.name!r} did not compile: {compiler.stderr.strip()[-500:]}")
        return
    try:
        model._cache['generated'] = load(paths)   # loads the machine code from the disk cache
    except Exception as error:
        warnings.warn(f"generated code for {model.name!r} did not load ({error!r}); the table kernels serve it")


def specialize_in_background(model):
    """Start compiling ``model``'s generated code in the background (a thread waiting on a compiler process)
    and return the thread; calls switch to the code when it is loaded. Started at most once per model."""
    _check_size(model)
    thread = model._cache.get('compiling')
    if thread is None:
        thread = model._cache['compiling'] = threading.Thread(target=_compile_then_load, args=(model,), daemon=True,
                                                              name=f'robot_dynamics_ros codegen {model.name}')
        thread.start()
    return thread


def wait_for_generated(model, timeout=None):
    """Wait until ``model``'s background compilation (if one was started) is over; True when its generated code
    serves the default calls."""
    thread = model._cache.get('compiling')
    if thread is not None:
        thread.join(timeout)
    return model._cache.get('generated') is not None


def count_call(model):
    """Count a default call that the table kernels served: the HOT_CALLS-th starts ``specialize_in_background``
    (unless ``choose_once`` has decided for this process)."""
    cache = model._cache
    calls = cache['calls'] = cache.get('calls', 0) + 1
    if calls == HOT_CALLS and ENABLE and model.nv <= MAX_DOF and not cache.get('chosen'):
        specialize_in_background(model)


def _compiled(path):
    """Whether numba's on-disk cache holds machine code for the generated module at ``path`` (its index files)."""
    stem = os.path.basename(path)[:-len('.py')]
    return bool(glob.glob(os.path.join(os.path.dirname(path), '__pycache__', f'{stem}.*.nbi')))


def _nice():
    os.nice(19)


NODE_ALGORITHMS = ('rnea', 'crba', 'aba')   # what the nodes call (not the regressor: minutes of compile at 31 DOF)


def choose_once(model):
    """For a long-running process (the nodes): decide now which code serves ``model``'s default calls for the
    rest of the process. The generated code when numba's disk cache already holds it (loading takes well under
    a second); else the table kernels, while a detached lowest-priority process compiles the code for the next
    start. Nothing tiers up later: no compile or load stalls a control loop mid-run, and a run never switches
    code (two lockstep runs stay bit-identical). Returns what serves, for the log."""
    model._cache['chosen'] = True
    if not ENABLE or model.nv > MAX_DOF:
        return 'table kernels (' + ('ROBOT_DYNAMICS_ROS_CODEGEN=0' if not ENABLE else f'more than {MAX_DOF} DOF') + ')'
    paths = write_modules(model, NODE_ALGORITHMS)
    if all(_compiled(path) for path in paths):
        model._cache['generated'] = load(paths, NODE_ALGORITHMS)
        return 'generated per-robot code (from the on-disk cache)'
    script = 'import sys; from robot_dynamics_ros.fast.codegen import _import; [_import(p) for p in sys.argv[1:]]'
    subprocess.Popen([sys.executable, '-c', script, *paths], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, preexec_fn=_nice if hasattr(os, 'nice') else None)
    return 'table kernels; per-robot code is being compiled in the background for the next start'

