"""The layer contract: a module imports only from its own layer's package or from lower ones.

Every import statement counts, function-local ones included (a lazy import is still a
dependency; two cycles once hid behind them). Siblings of one layer (`metrics | session`,
`transcripts | workspace`) never import each other. `make lint` runs this file too.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Top to bottom. The loop reads upward: store → transcripts/workspace → metrics/session →
# observe → schedule → reflect | evaluate → sync → watch → integrations → the entry points.
LAYERS: list[tuple[str, ...]] = [
    (
        "evolve.cli",
        "evolve.api",
        "evolve.arguments",
        "evolve.hookmain",
        "evolve.hookio",
        "evolve.precommit",
        "evolve.demo",
        "evolve.__main__",
        "evolve.commands",
    ),
    ("evolve.integrations",),
    ("evolve.watch",),
    ("evolve.sync",),
    ("evolve.reflect", "evolve.evaluate"),
    ("evolve.schedule",),
    ("evolve.observe",),
    ("evolve.metrics", "evolve.session"),
    ("evolve.transcripts", "evolve.workspace"),
    ("evolve.store",),
    ("evolve", "evolve.errors", "evolve.home", "evolve.config", "evolve.names", "evolve.clock"),
]
OPEN_LAYERS = {0, len(LAYERS) - 1}  # entry points and the kernel may use their siblings


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / "evolve").rglob("*.py"))}


def _statements(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and every statement under it, however deep (in a function, a branch, a handler).

    An import is a statement, never part of an expression: the expressions, most of a module's
    nodes, are not walked (a full `ast.walk` of the package was most of this file's second).
    """
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.expr):
            yield from _statements(child)


def _type_only(tree: ast.AST) -> set[int]:
    """Ids of the import nodes under `if TYPE_CHECKING:` (annotations only: never run)."""
    found: set[int] = set()
    for node in _statements(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            found |= {id(inner) for child in node.body for inner in _statements(child)}
    return found


def imports_of(path: Path, known: set[str], *, type_only: bool = True) -> set[str]:
    """Every evolve module `path` imports, anywhere in the file (`type_only`: annotations' too)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if type_only else _type_only(tree)
    for node in _statements(tree):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from evolve.x import y`: y may be a module of the package or a name in it
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                for a in node.names
            ]
        found.update(n for n in names if n == "evolve" or n.startswith("evolve."))
    return found


def graph(*, type_only: bool = True) -> dict[str, set[str]]:
    """Module -> the evolve modules it imports; a copy each call, for a test to change."""
    return {name: set(targets) for name, targets in _parsed_graph(type_only).items()}


@functools.cache
def _parsed_graph(type_only: bool) -> dict[str, frozenset[str]]:
    """Every module parsed once per run, not once per test that reads the graph."""
    mods = modules()
    known = set(mods)
    return {
        name: frozenset(m for m in imports_of(path, known, type_only=type_only) if m != name)
        for name, path in mods.items()
    }


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, the group inside it) of the longest matching prefix."""
    best: tuple[int, str] | None = None
    for index, groups in enumerate(LAYERS):
        for group in groups:
            if (module == group or module.startswith(group + ".")) and (
                best is None or len(group) > len(best[1])
            ):
                best = (index, group)
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best


def violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for source, targets in edges.items():
        s_layer, s_group = layer_of(source)
        for target in targets:
            t_layer, t_group = layer_of(target)
            if t_layer < s_layer:
                found.append(f"{source} imports {target}: a lower layer imports an upper one")
            elif t_layer == s_layer and s_group != t_group and s_layer not in OPEN_LAYERS:
                found.append(f"{source} imports {target}: siblings of one layer stay independent")
    return sorted(found)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_lower_layers_never_import_upper_ones():
    assert violations(graph()) == []


def test_no_import_cycles_even_through_function_local_imports():
    edges = graph(type_only=False)  # a type-only import never runs: it cannot close a cycle
    # a package's __init__ is imported with each of its modules: that is not a cycle of ours
    edges = {s: {t for t in ts if not s.startswith(t + ".")} for s, ts in edges.items()}
    assert cycles(edges) == []


def test_every_module_has_a_layer():
    for name in modules():
        layer_of(name)


def test_the_checks_would_notice():
    edges = graph()
    edges["evolve.store.repo"] = edges["evolve.store.repo"] | {"evolve.reflect.apply"}
    assert violations(edges) == [
        "evolve.store.repo imports evolve.reflect.apply: a lower layer imports an upper one"
    ]
    edges["evolve.metrics.rates"] = edges["evolve.metrics.rates"] | {"evolve.session.index"}
    assert (
        "evolve.metrics.rates imports evolve.session.index: siblings of one layer stay "
        "independent" in violations(edges)
    )
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
