"""A small table model and its renderings: Markdown, HTML, rich (terminal) and JSON-ready dicts."""

from __future__ import annotations

import html
from collections.abc import Sequence

from pydantic import BaseModel, Field
from rich.table import Table as RichTable

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


def to_rich(table: Table) -> RichTable:
    """A :class:`rich.table.Table` for printing in the terminal."""
    out = RichTable(title=table.title, caption=table.notes or None)
    for i, column in enumerate(table.columns):
        # Names identify the row: never cut them; numbers may wrap on a narrow terminal.
        if i == 0:
            out.add_column(column, justify="left", no_wrap=True)
        else:
            out.add_column(column, justify="right", overflow="fold")
    for row in table.rows:
        out.add_row(*(fmt(c) for c in row))
    return out
