"""The layout's rules, checked on the source: no import circle between skdp's modules (imports
inside functions included, ``if TYPE_CHECKING:`` blocks excluded: they never run), packages in
layers, no private name imported from another module, and no module over 600 lines."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "skdp"
MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _runtime_nodes(tree: ast.AST):
    """Every node, except what sits under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", None) == "TYPE_CHECKING":
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _imports(module: str, path: Path):
    """``(imported module, imported names)`` for every import statement of ``module``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            yield source, [alias.name for alias in node.names]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        for source, names in _imports(module, path):
            submodules = [f"{source}.{name}" for name in names if f"{source}.{name}" in MODULES]
            targets = set(submodules)
            if source in MODULES and (not names or len(submodules) < len(names)):
                targets.add(source)
            graph[module] |= targets - {module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert _cycles(_graph()) == []


def test_the_circle_test_finds_a_circle():
    graph = {"skdp.a": {"skdp.b"}, "skdp.b": {"skdp.c"}, "skdp.c": {"skdp.a"}, "skdp.d": set()}
    assert _cycles(graph) == [["skdp.a", "skdp.b", "skdp.c"]]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module):
    lines = MODULES[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it along its seams"


# Packages in layers, lowest first: a module may import from its own layer and the ones below.
LAYERS = [
    ["skdp._version", "skdp._utils"],
    ["skdp.accounting"],
    ["skdp.budget"],
    ["skdp._engine"],
    ["skdp.mechanisms"],
    ["skdp._defaults"],
    ["skdp._fit"],
    ["skdp.preprocessing"],
    ["skdp._scale"],
    ["skdp.linear_model", "skdp.neural_network"],
    ["skdp.pipeline"],
    ["skdp.model_selection", "skdp.audit"],
    ["skdp.datasets", "skdp"],
]


def _layer(module: str) -> int:
    best = None
    for index, packages in enumerate(LAYERS):
        for package in packages:
            if module == package or module.startswith(package + "."):
                if best is None or len(package) > best[1]:
                    best = (index, len(package))
    assert best is not None, f"{module} belongs to no layer: add its package to LAYERS"
    return best[0]


def test_packages_import_only_from_their_layer_and_below():
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_no_private_name_is_imported_from_another_module():
    # A name another module needs is part of its module's interface: it has no underscore.
    # (Private modules are fine: skdp's modules are private to their packages.)
    found = []
    for module, path in MODULES.items():
        for source, names in _imports(module, path):
            if not source.startswith("skdp"):
                continue
            for name in names:
                private = name.startswith("_") and not name.startswith("__")
                if private and f"{source}.{name}" not in MODULES:
                    found.append(f"{module} imports {name} from {source}")
    assert found == []
