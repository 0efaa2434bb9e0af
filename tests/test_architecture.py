"""The package map holds: no import circle, no private module reached across packages, layers.

Read from the source with :mod:`ast`, nothing imported, so it runs in a fraction of a
second. The layers and the rule each package keeps are ``docs/design/package-map.md``;
the tables below are that note's, and a change to one is a change to the other.

An import inside a function counts like one at the top of a module: deferring an
import hides a circle from the interpreter, not from a reader. Imports under
``if TYPE_CHECKING:`` do not count: they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = SRC / "cypherturn"
BENCHMARKS = ROOT / "benchmarks"

BASE = frozenset({"errors", "_registry"})
"""Top-level modules every part may import: the one exception hierarchy and the registry type."""

TIERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundations", frozenset({"cypher", "graph", "models", "records"})),
    (
        "analysis and data",
        frozenset({"grounding", "worlds", "sessions", "metrics", "answers", "memory"}),
    ),
    ("players", frozenset({"agent", "strategies", "protocols"})),
    ("runs", frozenset({"runner", "experiments", "reports", "chat"})),
    ("api", frozenset({"api"})),
    ("surfaces", frozenset({"cli", "mcp_server", "viewer", "integrations"})),
)
"""Bottom to top: a package imports packages of its own tier or below, never above."""

ALLOWED: dict[str, frozenset[str]] = {
    # foundations import nothing above them, and only cypher below graph
    "cypher": BASE,
    "graph": BASE | {"cypher"},
    "models": BASE,
    "records": BASE,
    # grounding is pure analysis: a schema, a value lookup and a query; no model calls
    "grounding": BASE | {"cypher", "graph"},
    # a scorer needs only a run log and an engine, so any log can be scored
    "metrics": BASE | {"cypher", "graph", "records"},
    # the memory stores and recalls pairs; it checks a query on the graph, nothing more
    "memory": BASE | {"graph"},
}
"""Packages held to a stricter rule than their tier: every package they may import."""


@dataclass(frozen=True)
class Import:
    """One import statement's target, resolved to a module name."""

    source: Path
    line: int
    importer: str
    target: str


def _module_name(path: Path, base: Path) -> str:
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p, SRC): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import under ``node`` that runs, at any depth: not those under ``if TYPE_CHECKING:``."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
        return
    is_type_checking = isinstance(node, ast.If) and _is_type_checking(node)
    children = (
        node.orelse if isinstance(node, ast.If) and is_type_checking else ast.iter_child_nodes(node)
    )
    for child in children:
        yield from _import_nodes(child)


def _targets(importer: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import names: ``from a import b`` is ``a.b`` when that is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        anchor = importer.split(".")
        if not is_package:
            anchor = anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        module = ".".join([*anchor, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    targets = []
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        targets.append(submodule if submodule in MODULES else module)
    return targets


def _imports(path: Path, importer: str) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    return [
        Import(path, node.lineno, importer, target)
        for node in _import_nodes(tree)
        for target in _targets(importer, is_package, node)
        if target == "cypherturn" or target.startswith("cypherturn.")
    ]


SRC_IMPORTS = [i for name, path in MODULES.items() for i in _imports(path, name)]
BENCHMARK_IMPORTS = [
    i for path in sorted(BENCHMARKS.glob("*.py")) for i in _imports(path, f"benchmarks.{path.stem}")
]


def _listed(found: list[str]) -> str:
    """One line per offending statement (an import of several names is found once per name)."""
    return "\n".join(dict.fromkeys(found))


def _where(i: Import) -> str:
    return f"{i.source.relative_to(ROOT)}:{i.line} imports {i.target}"


def _package(module: str) -> str:
    """``cypherturn.graph._guard`` -> ``graph``; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_map_reads_the_source() -> None:
    # a sanity floor: a resolver that lost its way would find nothing and pass everything
    assert len(MODULES) > 150
    assert len(SRC_IMPORTS) > 800
    packages = {_package(m) for m in MODULES} - {"", "__main__"}
    assert packages == set().union(*(members for _, members in TIERS)) | BASE


def test_no_module_imports_itself_back() -> None:
    edges: dict[str, set[str]] = {}
    for i in SRC_IMPORTS:
        if i.target in MODULES and i.target != i.importer:
            edges.setdefault(i.importer, set()).add(i.target)
    circles = _circles(edges)
    assert not circles, "modules that import each other:\n" + "\n".join(map(" ".join, circles))


def test_no_package_imports_itself_back() -> None:
    edges: dict[str, set[str]] = {}
    for i in SRC_IMPORTS:
        source, target = _package(i.importer), _package(i.target)
        if source and target and source != target:
            edges.setdefault(source, set()).add(target)
    circles = _circles(edges)
    assert not circles, "packages that import each other:\n" + "\n".join(map(" ".join, circles))


def _private_owner(target: str) -> str | None:
    """The package whose private module ``target`` is (``cypherturn.graph`` for
    ``cypherturn.graph._guard``), ``None`` when no part of it is private."""
    parts = target.split(".")
    for k, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:k])
    return None


@pytest.mark.parametrize("imports", [SRC_IMPORTS, BENCHMARK_IMPORTS], ids=["src", "benchmarks"])
def test_no_private_module_is_reached_from_another_package(imports: list[Import]) -> None:
    crossings = []
    for i in imports:
        owner = _private_owner(i.target)
        if owner is not None and i.importer != owner and not i.importer.startswith(f"{owner}."):
            crossings.append(_where(i))
    assert not crossings, "import the public name from the package instead:\n" + _listed(crossings)


def _tier(package: str) -> int:
    return next(k for k, (_, members) in enumerate(TIERS) if package in members)


def test_no_package_imports_a_tier_above_it() -> None:
    upward = []
    for i in SRC_IMPORTS:
        source, target = _package(i.importer), _package(i.target)
        if source in BASE | {"", "__main__"} or target in BASE | {""} or source == target:
            continue
        if _tier(target) > _tier(source):
            upward.append(f"{_where(i)} ({TIERS[_tier(target)][0]} above {source})")
    assert not upward, _listed(upward)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_the_stricter_packages_import_only_what_they_may(package: str) -> None:
    beyond = [
        _where(i)
        for i in SRC_IMPORTS
        if _package(i.importer) == package
        and _package(i.target) not in ALLOWED[package] | {package, ""}
    ]
    assert not beyond, _listed(beyond)


def test_the_base_modules_import_only_errors() -> None:
    beyond = [
        _where(i)
        for i in SRC_IMPORTS
        if _package(i.importer) in BASE and _package(i.target) not in {"errors", ""}
    ]
    assert not beyond, _listed(beyond)
