"""The modules a Python file imports, read from its syntax tree (nothing is imported): ``import x``,
``from x import y`` and ``pytest.importorskip('x')``, at any depth (module level and inside functions)."""
import ast
from dataclasses import dataclass

IMPORT_ERRORS = {'ImportError', 'ModuleNotFoundError'}


@dataclass(frozen=True)
class Import:
    module: str     # top-level name: 'sensor_msgs' for `from sensor_msgs.msg import JointState`
    line: int
    guarded: bool   # a missing module is handled: importorskip, inside `try: ... except ImportError`, or
                    # after an importorskip earlier in the same block or an enclosing one


def imports(path):
    """Every absolute import in the file at ``path``, as a list of Import."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), filename=str(path))
    found = []
    _scan_block(tree.body, False, found)
    return found


def _scan_block(statements, guarded, found):
    for statement in statements:
        if isinstance(statement, ast.Import):
            found += [Import(alias.name.split('.')[0], statement.lineno, guarded) for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            found.append(Import(statement.module.split('.')[0], statement.lineno, guarded))
        elif isinstance(statement, ast.Try):
            catches = any(_catches_import_error(handler) for handler in statement.handlers)
            _scan_block(statement.body, guarded or catches, found)
            for handler in statement.handlers:
                _scan_block(handler.body, guarded, found)
            _scan_block(statement.orelse, guarded or catches, found)
            _scan_block(statement.finalbody, guarded, found)
        else:
            skips = _importorskips(statement)
            found += [Import(module, statement.lineno, True) for module in skips]
            guarded = guarded or bool(skips)
            for block in _blocks(statement):
                _scan_block(block, guarded, found)


def _blocks(statement):
    """The statement lists nested in a def, class, if, for, while or with."""
    return [value for field, value in ast.iter_fields(statement)
            if field in ('body', 'orelse', 'finalbody') and isinstance(value, list)]


def _catches_import_error(handler):
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(t is None or (isinstance(t, ast.Name) and t.id in IMPORT_ERRORS) for t in types)


def _importorskips(statement):
    """Modules of the `importorskip('name')` calls in a simple statement (one without nested blocks)."""
    if _blocks(statement):
        return []
    modules = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, 'id', None)
            if name == 'importorskip':
                modules.append(node.args[0].value.split('.')[0])
    return modules
