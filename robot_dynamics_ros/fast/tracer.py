"""Symbols for tracing: a kernel run on ``Symbol`` values writes the straight-line code of what it computes
(``Trace``: one assignment per subexpression), the tree's constants folded in as literals (see ``codegen.py``)."""
import re

import numpy as np


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
