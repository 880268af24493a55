"""The shape of the package: layers (as dagtools/_layers.py writes them) import downward only, even for
type checking; no import cycle at run time, inside packages too; every module one concept, named in
the first line of its docstring; and tools dispatched by the toolset that owns them, never by
comparing names elsewhere."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from dagtools import _layers

PACKAGE = Path(__file__).resolve().parents[1] / "dagtools"

#: Lowest first, as dagtools/_layers.py writes them. A module may import its own layer and any layer
#: before it, never one after.
LAYERS = [set(members) for members, _ in _layers.LAYERS]


def _module_name(path: Path) -> str:
    parts = ["dagtools", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for every check here (read-only: no check changes it)."""
    return ast.parse(path.read_text())


def _imported(package: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """What one import statement in `package` names: the modules, and `from x import y` as x.y where y
    is a module of its own (`from . import x` may import a submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target, *(f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES)]


def _top_level_imports(name: str, path: Path) -> set[str]:
    """Modules imported when `name` is imported: the statements that run then (top level, class bodies,
    and the functions the module itself calls while it is imported), never TYPE_CHECKING blocks nor
    functions that run only when called later."""
    tree = _tree(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    explicit: set[str] = set()
    called: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not in_function:
            # Decorators and defaults run at import time; the body only when called.
            for child in [*getattr(node, "decorator_list", []), *node.args.defaults, *node.args.kw_defaults]:
                if child is not None:
                    visit(child, in_function)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            explicit.update(target for target in _imported(package, node) if target.startswith("dagtools"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions and node.func.id not in called:
            called.add(node.func.id)
            for statement in functions[node.func.id].body:  # a function the module runs while it is imported
                visit(statement, True)
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(tree, False)
    # Importing a.b.c runs a/__init__ and a/b/__init__ first, except the packages `name` lives in:
    # those are being imported already when `name` runs (an explicit `from . import x` still waits for them).
    found = set(explicit)
    for target in explicit:
        parts = target.split(".")
        found.update(p for p in (".".join(parts[:i]) for i in range(1, len(parts))) if not name.startswith(p + "."))
    return {t for t in found if t in MODULES and t != name}


GRAPH = {name: _top_level_imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    """The layer of the longest listed name `module` is or lives under."""
    matches = [
        (len(member), index)
        for index, members in enumerate(LAYERS)
        for member in members
        if module == member or module.startswith(member + ".")
    ]
    return max(matches)[1] if matches else -1


def test_every_module_has_a_layer():
    assert [m for m in MODULES if _layer(m) < 0] == []


def test_layers_import_only_downward():
    upward = [
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if _layer(target) > _layer(module) and not module.startswith(target + ".")
    ]
    assert upward == []


def _every_import(name: str, path: Path) -> list[tuple[int, str, str]]:
    """Every dagtools module `name` imports, wherever the import stands: (line, module, how), where how
    is "at import time", "for type checking only" (under `if TYPE_CHECKING:`) or "when called" (in a
    function)."""
    tree = _tree(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, how: str) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            how = "for type checking only"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and how == "at import time":
            how = "when called"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in _imported(package, node):
                while target not in MODULES and "." in target:  # `from pkg.mod import name`
                    target = target.rpartition(".")[0]
                if target.startswith("dagtools") and target != name:
                    found.append((node.lineno, target, how))
        for child in ast.iter_child_nodes(node):
            visit(child, how)

    visit(tree, "at import time")
    return found


def test_no_import_goes_up_even_for_type_checking_or_when_called():
    # An import under TYPE_CHECKING or inside a function still makes the lower layer know the upper
    # one: what it names belongs at or below the layer that uses it.
    upward = [
        f"{module}:{line} imports {target} {how}"
        for module, path in MODULES.items()
        for line, target, how in _every_import(module, path)
        if _layer(target) > _layer(module) and not module.startswith(target + ".")
    ]
    assert upward == []


def test_the_written_layers_name_real_modules_once():
    listed = [member for members in LAYERS for member in members]
    assert sorted(m for m in listed if m not in MODULES) == []
    assert len(listed) == len(set(listed))


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `edges` (a module -> the modules it imports), as the path that closes it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(edges):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_no_import_cycle_at_import_time():
    # Two threads that enter a cycle at different modules (a warm-up thread importing the package, a
    # request importing one of its modules) each hold one module's import lock and wait for the other's:
    # Python breaks the deadlock by handing one of them a partially initialised module ("cannot import
    # name ..."). A package's __init__ importing its modules counts, so a module of that package must
    # not import the package back (`from . import x`): it names what it needs from `._x` instead.
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle at import time: " + " -> ".join(cycle or [])


def test_the_cycle_check_sees_a_package_imported_back_and_a_function_run_at_import_time(tmp_path):
    """The graph counts what runs at import time: `from . import x` in a package's module (the cycle that
    raced), and a function the module calls while it is imported, but not a function called later."""
    package = tmp_path / "dagtools" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from ._a import A\n")
    (package / "_a.py").write_text("from . import _b\nA = 1\n")
    (package / "_b.py").write_text("def later():\n    from ._a import A\n    return A\n")
    (package / "_c.py").write_text("def now():\n    from ._b import later\n    return later\nNOW = now()\n")
    (package / "_d.py").write_text("from ._c import NOW\n")
    names = {"dagtools.pkg": package / "__init__.py", **{f"dagtools.pkg.{m}": package / f"{m}.py" for m in ("_a", "_b", "_c", "_d")}}
    saved = dict(MODULES)
    MODULES.update(names)
    try:
        graph = {name: _top_level_imports(name, path) for name, path in names.items()}
    finally:
        MODULES.clear()
        MODULES.update(saved)
    assert find_cycle(graph) == ["dagtools.pkg", "dagtools.pkg._a", "dagtools.pkg"]
    assert graph["dagtools.pkg._a"] == {"dagtools.pkg", "dagtools.pkg._b"}
    assert graph["dagtools.pkg._b"] == set(), "a function called later imports nothing at import time"
    assert graph["dagtools.pkg._c"] == {"dagtools.pkg._b"}, "a function run at import time imports then"
    assert graph["dagtools.pkg._d"] == {"dagtools.pkg._c"}, "the package a module lives in is being imported already"
    del graph["dagtools.pkg._a"]
    assert find_cycle(graph) is None


def _with_packages(name: str, targets: set[str]) -> set[str]:
    """`targets` and the packages each lives in (importing a.b.c runs a and a.b first), but those `name`
    lives in: they are being imported already when `name` runs."""
    found = set(targets)
    for target in targets:
        parts = target.split(".")
        found.update(p for p in (".".join(parts[:i]) for i in range(1, len(parts))) if not name.startswith(p + "."))
    return {t for t in found if t in MODULES and t != name}


def _run_time_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """What each module imports at any time it runs: when imported (as `GRAPH` counts it) and in its
    functions when they are called; never what it names for type checking only."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        called = {target for _, target, how in _every_import(name, path) if how == "when called"}
        graph[name] = _top_level_imports(name, path) | _with_packages(name, called)
    return graph


def test_no_import_cycle_at_run_time_inside_packages_too():
    # A cycle closed by an import inside a function does not deadlock, but it is still a circle: two
    # modules that each need the other are one concept split in two, or share a third that belongs
    # in a module of its own. Imports for type checking only are not counted: they never run.
    cycle = find_cycle(_run_time_graph(MODULES))
    assert cycle is None, "import cycle at run time: " + " -> ".join(cycle or [])


def test_the_run_time_graph_counts_a_functions_import_but_not_one_for_type_checking(tmp_path):
    package = tmp_path / "dagtools" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_a.py").write_text("from ._b import later\n")
    (package / "_b.py").write_text("def later():\n    from ._a import later\n    return later\n")
    (package / "_c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._d import D\nC = 1\n")
    (package / "_d.py").write_text("from ._c import C\nD = C\n")
    names = {"dagtools.pkg": package / "__init__.py", **{f"dagtools.pkg.{m}": package / f"{m}.py" for m in ("_a", "_b", "_c", "_d")}}
    saved = dict(MODULES)
    MODULES.update(names)
    try:
        graph = _run_time_graph(names)
    finally:
        MODULES.clear()
        MODULES.update(saved)
    assert find_cycle(graph) == ["dagtools.pkg._a", "dagtools.pkg._b", "dagtools.pkg._a"]
    assert graph["dagtools.pkg._c"] == set(), "an import for type checking never runs"
    del graph["dagtools.pkg._b"]
    assert find_cycle(graph) is None


def _first_line(path: Path) -> str:
    docstring = ast.get_docstring(_tree(path), clean=True) or ""
    return docstring.strip().splitlines()[0] if docstring.strip() else ""


def _names_a_concept(line: str) -> bool:
    """A sentence's start that names something: a capital, a quoted name, or a name as written (the
    project's own `dagtools`, a camelCase or hyphenated name, or any word followed by what it is:
    `callChain, the meta-tool ...`, `pydantic-ai: ...`)."""
    words = line.split()
    if len(words) < 3:
        return False
    first = words[0].rstrip(":,")
    as_written = first == "dagtools" or "-" in first or any(c.isupper() for c in first[1:]) or words[0].endswith((":", ","))
    return line[0].isupper() or line[0] in "`'\"" or as_written


def test_every_module_names_its_concept_in_its_first_docstring_line():
    # A module is one concept: its docstring's first line says which, as a sentence a reader can scan
    # the package by.
    unnamed = [f"{module}: {_first_line(path)!r}" for module, path in MODULES.items() if not _names_a_concept(_first_line(path))]
    assert unnamed == []


def test_no_two_modules_name_the_same_concept():
    by_line: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        by_line.setdefault(_first_line(path).lower(), []).append(module)
    assert {line: modules for line, modules in by_line.items() if len(modules) > 1} == {}


#: Packages split into subpackages that meet only through their faces: a module outside one of their
#: subpackages imports the subpackage (its `__init__`, which exports what other parts use), never one of
#: its private modules, whenever and for whatever the import runs.
FACED = ("dagtools.mcpserver",)


def _private_module_of_another_subpackage(module: str, target: str, faced: tuple[str, ...] = FACED) -> bool:
    package, _, leaf = target.rpartition(".")
    in_a_subpackage = any(package.startswith(root + ".") for root in faced)
    return leaf.startswith("_") and in_a_subpackage and not (module == package or module.startswith(package + "."))


def test_subpackages_meet_through_their_faces():
    through_a_side_door = [
        f"{module}:{line} imports {target} {how}"
        for module, path in MODULES.items()
        for line, target, how in _every_import(module, path)
        if _private_module_of_another_subpackage(module, target)
    ]
    assert through_a_side_door == []


def test_the_face_check_tells_a_face_from_a_private_module():
    side_door = _private_module_of_another_subpackage
    assert side_door("dagtools.mcpserver._server", "dagtools.mcpserver.gate._oauth")
    assert side_door("dagtools.shell._runner", "dagtools.mcpserver.sessions._toolsets")
    assert side_door("dagtools.mcpserver.transport._app", "dagtools.mcpserver.sessions._keys")
    assert not side_door("dagtools.mcpserver._server", "dagtools.mcpserver.gate")
    assert not side_door("dagtools.mcpserver.gate._exposure", "dagtools.mcpserver.gate._oauth"), "inside its own subpackage"
    assert not side_door("dagtools.mcpserver.gate._exposure", "dagtools.mcpserver._config"), "the package's own modules"
    assert not side_door("dagtools.cli._mcp", "dagtools.session._open"), "a package not split by faces"


#: The kinds of `Authenticator` (dagtools/mcpserver/gate): past the gate, callers are asked about
#: through the interface only, never told apart by kind.
AUTHENTICATORS = {"BearerTokens", "OAuthResource"}


def test_only_the_gate_tells_its_authenticators_apart():
    found = [
        f"{module}:{node.lineno}: {ast.unparse(node)}"
        for module, path in MODULES.items()
        if not module.startswith("dagtools.mcpserver.gate")
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and any(isinstance(n, ast.Name) and n.id in AUTHENTICATORS for arg in node.args[1:] for n in ast.walk(arg))
    ]
    assert found == []


#: A module of one concept may run to `ONE_CONCEPT` lines. Past it, the concept is listed here with why it
#: cannot be told in fewer; past `CEILING` a module fails whatever it says: that much text is rarely one concept.
ONE_CONCEPT = 600
CEILING = 800
LONG: dict[str, str] = {}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_one_concept_long(module):
    lines = MODULES[module].read_text().count("\n")
    assert lines <= CEILING, f"{module} has {lines} lines: more than one concept, surely; split it by concept"
    assert lines <= ONE_CONCEPT or module in LONG, f"{module} has {lines} lines: split it by concept, or list it in LONG with why it is one"


def test_every_long_module_listed_is_long():
    assert [m for m in LONG if m not in MODULES or MODULES[m].read_text().count("\n") <= ONE_CONCEPT] == []


#: Tool names that name built-in tools; comparing a name to one of them decides what runs.
BUILTIN_NAMES = {"selectTools", "save", "readResult", "callTool", "describeTools"}
BUILTIN_CONSTANTS = {"SELECT_TOOLS", "SAVE", "READ_RESULT", "CALL_TOOL", "DESCRIBE_TOOLS"}
#: The toolsets that own built-in tools, where comparing their own names is how they serve them.
OWNERS = {"dagtools.mcpserver.sessions._toolsets"}


def test_tools_are_dispatched_by_their_toolset_only():
    found = []
    for module, path in MODULES.items():
        if module in OWNERS:
            continue
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Compare):
                continue
            for side in [node.left, *node.comparators]:
                literal = isinstance(side, ast.Constant) and side.value in BUILTIN_NAMES
                constant = isinstance(side, ast.Name) and side.id in BUILTIN_CONSTANTS
                names = isinstance(side, (ast.Tuple, ast.List, ast.Set)) and any(
                    (isinstance(e, ast.Name) and e.id in BUILTIN_CONSTANTS) or (isinstance(e, ast.Constant) and e.value in BUILTIN_NAMES)
                    for e in side.elts
                )
                if literal or constant or names:
                    found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
