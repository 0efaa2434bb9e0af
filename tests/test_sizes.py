"""Modules and functions sized to their idea: an AST count over ``src/cypherturn``.

A module past 800 lines holds more than one idea and is split; a function past
80 lines (its signature and docstring included, decorators not) is doing more
than one step. At most :data:`MOST_LONG_FUNCTIONS` such functions are tolerated
while the last ones are taken apart; the list printed on failure names them.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "cypherturn"

MOST_MODULE_LINES = 800
"""Longest module, lines."""

MOST_FUNCTION_LINES = 80
"""Longest function that does not count as long, lines from ``def`` to its last line."""

MOST_LONG_FUNCTIONS = 10
"""Functions over :data:`MOST_FUNCTION_LINES` allowed in the whole package."""


def _modules(root: Path = SOURCE) -> list[Path]:
    return sorted(root.rglob("*.py"))


def _long_functions(root: Path = SOURCE) -> list[str]:
    """``path:line name (N lines)`` of every function under ``root`` over :data:`MOST_FUNCTION_LINES`."""
    found: list[tuple[int, str]] = []
    for path in _modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MOST_FUNCTION_LINES:
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    found.append((lines, f"{where} {node.name} ({lines} lines)"))
    return [text for _, text in sorted(found, reverse=True)]


def test_no_module_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(SOURCE)): count
        for path in _modules()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MOST_MODULE_LINES
    }
    assert not long, f"modules over {MOST_MODULE_LINES} lines: {long}"


def test_at_most_10_functions_are_over_80_lines() -> None:
    long = _long_functions()
    assert len(long) <= MOST_LONG_FUNCTIONS, (
        f"{len(long)} functions over {MOST_FUNCTION_LINES} lines (at most "
        f"{MOST_LONG_FUNCTIONS}):\n" + "\n".join(long)
    )


def test_the_count_sees_long_functions_and_methods_only(tmp_path: Path) -> None:
    def function(name: str, lines: int, indent: str = "") -> str:
        body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))
        return f"{indent}def {name}() -> None:\n{body}"

    (tmp_path / "module.py").write_text(
        function("long", MOST_FUNCTION_LINES + 1)
        + function("short", MOST_FUNCTION_LINES)
        + "class Holder:\n"
        + function("method", MOST_FUNCTION_LINES + 5, indent="    "),
        encoding="utf-8",
    )
    assert _long_functions(tmp_path) == [
        f"module.py:{2 * MOST_FUNCTION_LINES + 3} method ({MOST_FUNCTION_LINES + 5} lines)",
        f"module.py:1 long ({MOST_FUNCTION_LINES + 1} lines)",
    ]
