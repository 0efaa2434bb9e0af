"""A small table model and its renderings: Markdown, HTML, rich (terminal) and JSON-ready dicts."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from pydantic import BaseModel, Field
from rich.box import HEAVY_HEAD, SQUARE, Box
from rich.cells import cell_len
from rich.console import RenderableType
from rich.constrain import Constrain
from rich.table import Table as RichTable
from rich.text import Text

__all__ = ["Cell", "Table", "fmt", "render_html", "render_markdown", "to_rich"]

Cell = str | int | float | None


def fmt(value: Cell, digits: int = 3) -> str:
    """Format a cell: floats with ``digits`` decimals, ``None`` as an em dash substitute ``-``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


class Table(BaseModel):
    """A titled table of plain cells.

    Attributes:
        name: file-safe identifier (``main``, ``breakdown_phenomenon``).
        title: human title.
        columns: column headers.
        rows: rows of cells, aligned with ``columns``.
        notes: a sentence under the table (definitions, exclusions).
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = Field(default_factory=list)
    notes: str = ""


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(
    tables: Sequence[Table], images: Sequence[tuple[str, str]] = (), title: str = ""
) -> str:
    """Render tables (and image links) as a Markdown document.

    Args:
        tables: the tables, in order.
        images: ``(caption, relative path)`` pairs shown after the tables.
        title: document heading.

    Returns:
        The Markdown text.
    """
    lines = [f"# {title}", ""] if title else []
    for table in tables:
        lines += [f"## {table.title}", ""]
        lines.append("| " + " | ".join(_md_escape(c) for c in table.columns) + " |")
        lines.append("|" + "|".join("---" for _ in table.columns) + "|")
        lines += ["| " + " | ".join(_md_escape(fmt(c)) for c in row) + " |" for row in table.rows]
        if table.notes:
            lines += ["", table.notes]
        lines.append("")
    for caption, path in images:
        lines += [f"## {caption}", "", f"![{caption}]({path})", ""]
    return "\n".join(lines)


def render_html(
    tables: Sequence[Table], images: Sequence[tuple[str, str]] = (), title: str = ""
) -> str:
    """Render tables (and images) as a standalone HTML page.

    Args:
        tables: the tables, in order.
        images: ``(caption, relative path)`` pairs shown after the tables.
        title: page title.

    Returns:
        The HTML text.
    """
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        f"<html><head><meta charset='utf-8'><title>{esc(title)}</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:.5em}"
        "th,td{border:1px solid #bbb;padding:.25em .6em;text-align:right}"
        "th:first-child,td:first-child{text-align:left}th{background:#eee}</style>",
        "</head><body>",
    ]
    if title:
        parts.append(f"<h1>{esc(title)}</h1>")
    for table in tables:
        parts.append(f"<h2 id='{esc(table.name)}'>{esc(table.title)}</h2><table>")
        parts.append("<tr>" + "".join(f"<th>{esc(c)}</th>" for c in table.columns) + "</tr>")
        for row in table.rows:
            parts.append("<tr>" + "".join(f"<td>{esc(fmt(c))}</td>" for c in row) + "</tr>")
        parts.append("</table>")
        if table.notes:
            parts.append(f"<p>{esc(table.notes)}</p>")
    for caption, path in images:
        parts.append(
            f"<h2>{esc(caption)}</h2><img src='{esc(path)}' alt='{esc(caption)}' width='800'>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


@dataclass(frozen=True)
class _Frame:
    """How a rich table spends width beside its cells: the box, cell padding and outer edge."""

    box: Box
    padding: int
    edge: bool

    def overhead(self, columns: int) -> int:
        """Characters a row of ``columns`` cells takes beyond the cells' text."""
        return columns * 2 * self.padding + (columns - 1) + (2 if self.edge else 0)


# Today's look first; the compact frame (no outer edge, no padding) saves 2n+2 characters
# and is tried before giving up on a grid.
_FULL = _Frame(box=HEAVY_HEAD, padding=1, edge=True)
_COMPACT = _Frame(box=SQUARE, padding=0, edge=False)


def _is_text(text: str) -> bool:
    """Whether a cell is words (a label, a header), not a number, a CI or a percentage."""
    return any(ch.isalpha() for ch in text)


def _cell_extent(text: str) -> tuple[int, int]:
    """``(narrowest, widest)`` width a cell can take without cutting anything.

    Text may wrap between words; anything else stays on one line.
    """
    widest = max((cell_len(line) for line in text.splitlines()), default=0)
    if not _is_text(text):
        return widest, widest
    return max((cell_len(word) for word in text.split()), default=0), widest


def _column_extents(table: Table) -> list[tuple[int, int]]:
    """``(narrowest, widest)`` width of each column over its header and cells."""
    extents = []
    for i, column in enumerate(table.columns):
        cells = [_cell_extent(column)] + [_cell_extent(fmt(row[i])) for row in table.rows]
        # At least one character: rich cannot draw a column of width 0.
        extents.append((max(1, *(lo for lo, _ in cells)), max(1, *(hi for _, hi in cells))))
    return extents


def _fit_widths(extents: Sequence[tuple[int, int]], room: int) -> list[int] | None:
    """Column widths summing to at most ``room``, or ``None`` when the narrowest do not fit.

    The widest columns give way first (as rich does), but none below its narrowest width:
    the widths are ``clamp(cap, narrowest, widest)`` for the largest cap that fits, and
    the characters left over go one each to the columns still short of their widest.
    """
    if sum(lo for lo, _ in extents) > room:
        return None

    def widths_at(cap: int) -> list[int]:
        return [max(lo, min(hi, cap)) for lo, hi in extents]

    cap = max(hi for _, hi in extents)
    while sum(widths_at(cap)) > room:
        cap -= 1
    widths = widths_at(cap)
    spare = room - sum(widths)
    for i, (_, hi) in enumerate(extents):
        if spare and widths[i] < hi:
            widths[i] += 1
            spare -= 1
    return widths


def _annotations(table: Table) -> tuple[Text, Text | None]:
    # Text, not str: rich would read "[explicit, guards]" in a title or note as markup and drop it.
    title = Text(table.title, style="table.title")
    caption = Text(table.notes, style="table.caption") if table.notes else None
    return title, caption


def _grid(table: Table, frame: _Frame, widths: Sequence[int] | None) -> RichTable:
    """The table as a grid in ``frame``; with ``widths``, columns of exactly those widths."""
    title, caption = _annotations(table)
    out = RichTable(
        title=title,
        caption=caption,
        box=frame.box,
        padding=(0, frame.padding),
        show_edge=frame.edge,
    )
    for i, column in enumerate(table.columns):
        # Words read from the left, numbers line up on the right.
        text = i == 0 or any(_is_text(fmt(row[i])) for row in table.rows)
        out.add_column(
            Text(column),
            justify="left" if text else "right",
            # Names identify the row: unwrapped while every column gets its widest width.
            no_wrap=i == 0 and widths is None,
            overflow="fold",
            width=None if widths is None else widths[i],
        )
    for row in table.rows:
        out.add_row(*(Text(fmt(c)) for c in row))
    return out


def _blocks(table: Table) -> RichTable:
    """The table turned on its side: one block of ``column | value`` lines per row.

    Each block starts with the row's first cell in bold; the blocks are separated by rules.
    """
    title, caption = _annotations(table)
    out = RichTable(title=title, caption=caption, show_header=False, box=SQUARE, padding=(0, 1))
    out.add_column(overflow="fold")
    out.add_column(overflow="fold")
    for row in table.rows:
        for i, (column, cell) in enumerate(zip(table.columns, row, strict=True)):
            style = "bold" if i == 0 else ""
            out.add_row(
                Text(column, style=style),
                Text(fmt(cell), style=style),
                end_section=i == len(row) - 1,
            )
    return out


@overload
def to_rich(table: Table, width: None = None) -> RichTable: ...


@overload
def to_rich(table: Table, width: int) -> RenderableType: ...


def to_rich(table: Table, width: int | None = None) -> RenderableType:
    """A rich renderable of ``table`` for printing in the terminal.

    Without ``width``: the table as a grid sized by rich, which squeezes the columns
    (down to one character) on a console narrower than the table.

    With ``width`` (the console's width): the first of these that fits in ``width``
    characters, so that no cell is cut and no column drops to a character:

    1. the same grid, when every column fits at its widest;
    2. the same grid with the widest text columns wrapped between words, when every
       column fits at its narrowest (its longest header word or word of a text cell;
       numbers are never wrapped);
    3. a compact grid (no outer edge, no cell padding) wrapped the same way;
    4. one block of ``column | value`` lines per row, labels wrapped (and a word
       longer than the whole width folded) rather than cut.

    Args:
        table: the table.
        width: the characters available per line, or ``None`` for the full grid.

    Returns:
        The renderable; with ``width``, none of its lines is wider than ``width``.
    """
    if width is None or not table.columns:
        return _grid(table, _FULL, None)
    extents = _column_extents(table)
    if sum(hi for _, hi in extents) + _FULL.overhead(len(extents)) <= width:
        return _grid(table, _FULL, None)
    for frame in (_FULL, _COMPACT):
        widths = _fit_widths(extents, width - frame.overhead(len(extents)))
        if widths is not None:
            return _grid(table, frame, widths)
    return Constrain(_blocks(table), width)
