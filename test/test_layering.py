"""The package's rooms import only downward (docs/api_and_conventions.md, Package layout): model -> algorithms ->
fast -> parameters, simulation, control, viewer -> nodes -> commands; simulation/ and control/ never import each
other, nodes/ never imports commands/, and nothing in the package imports in a circle. Read from each file's syntax
tree: relative and absolute imports at any depth, and importlib.import_module calls (as far as their argument's
text is fixed)."""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / 'robot_dynamics_ros'

# What each room may import from the package (besides itself). The top-level leaf modules (errors, spatial,
# stopping, resources) may be imported by anyone; they import nothing of the package but each other.
LEAVES = {'errors', 'spatial', 'stopping', 'resources'}
ALLOWED = {
    'model': set(),
    'algorithms': {'model'},
    'fast': {'model', 'algorithms'},
    'parameters': {'model', 'algorithms', 'fast'},
    'simulation': {'model', 'algorithms', 'fast'},
    'control': {'model', 'algorithms', 'fast'},
    'viewer': {'model', 'algorithms', 'fast'},
    'nodes': {'model', 'algorithms', 'fast', 'parameters', 'simulation', 'control', 'viewer'},
    'commands': {'model', 'algorithms', 'fast', 'parameters', 'simulation', 'control', 'viewer', 'nodes'},
}


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def package_imports(path):
    """The package modules a file imports (dotted names, 'robot_dynamics_ros.x.y'), relative ones resolved."""
    tree = ast.parse(path.read_text(encoding='utf-8'))
    here = module_name(path).split('.')
    if path.name != '__init__.py':
        here = here[:-1]   # the package the file is in
    type_checking = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                     and ast.unparse(block.test) in ('TYPE_CHECKING', 'typing.TYPE_CHECKING')
                     for statement in block.body for n in ast.walk(statement)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in type_checking:   # annotations only: not imported when the program runs
            continue
        if isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            target = '.'.join(base + ([node.module] if node.module else []))
            targets = [target] if node.module else [f'{target}.{alias.name}' if is_module(f'{target}.{alias.name}')
                                                    else target for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif is_import_module_call(node):
            targets = [dynamic_target(node.args[0], path)]
        else:
            continue
        found |= {t for t in targets if t.split('.')[0] == 'robot_dynamics_ros'}
    return found


def is_import_module_call(node):
    return (isinstance(node, ast.Call) and node.args and ast.unparse(node.func) in ('importlib.import_module',
                                                                                   'import_module'))


def dynamic_target(argument, path):
    """The module an import_module argument names, as far as its text is fixed: f'{__package__}.{name}' in
    nodes/start.py names (a module of) robot_dynamics_ros.nodes."""
    own = module_name(path)
    names = {'__name__': own, '__package__': own if path.name == '__init__.py' else own.rsplit('.', 1)[0]}
    parts = argument.values if isinstance(argument, ast.JoinedStr) else [argument]
    text = ''
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text += part.value
        elif isinstance(part, ast.FormattedValue) and ast.unparse(part.value) in names:
            text += names[ast.unparse(part.value)]
        else:
            text = text.rsplit('.', 1)[0]   # a name's text unknown from here: only the packages before it are fixed
            break
    return text


def is_module(dotted):
    path = PACKAGE.parent.joinpath(*dotted.split('.'))
    return path.with_suffix('.py').exists() or (path / '__init__.py').exists()


def room(module):
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else None


FILES = sorted(PACKAGE.rglob('*.py'))


@pytest.mark.parametrize('path', FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_rooms_import_only_downward(path):
    own = room(module_name(path))
    if own not in ALLOWED:
        pytest.skip('top-level module: the package facade and the command-line entry import the rooms')
    crossing = sorted(m for m in package_imports(path)
                      if room(m) not in ALLOWED[own] | LEAVES | {own, None})
    assert crossing == [], f'{own}/ may not import {crossing}'


def test_leaf_modules_import_no_room():
    for name in LEAVES:
        rooms = {room(m) for m in package_imports(PACKAGE / f'{name}.py')} - LEAVES - {None}
        assert rooms == set(), f'{name}.py imports {rooms}'


def test_no_import_circle_between_modules():
    graph = {module_name(path): package_imports(path) for path in FILES}
    modules = set(graph)
    # An import of a package is an edge to its __init__; of a name inside a module, to that module.
    edges = {m: {t if t in modules else t.rsplit('.', 1)[0] for t in targets} & modules - {m}
             for m, targets in graph.items()}
    # Packages' __init__ files re-export their modules: following them would make every room a circle with itself.
    packages = {module_name(path) for path in FILES if path.name == '__init__.py'}
    edges = {m: targets - packages for m, targets in edges.items()}
    state, circles = {}, []

    def visit(m, stack):
        state[m] = 'open'
        for t in sorted(edges[m]):
            if state.get(t) == 'open':
                circles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = 'done'

    for m in sorted(modules):
        if m not in state:
            visit(m, [m])
    assert circles == []

