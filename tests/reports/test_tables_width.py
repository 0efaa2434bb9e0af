"""`to_rich(table, width)`: every table printed by `cypherturn report` stays readable at any width."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from cypherturn.reports import Table, fmt, to_rich

# Box-drawing characters and whitespace: what a wrapped cell is split by in the output.
_LAYOUT = re.compile(r"[\s\u2500-\u257f]+")

LABELS = [
    "qwen2.5-coder-1.5b agentic x3 persistent_schema [explicit, guards, note, repeat, "
    "schema first, grounding repair+values+question+reference]",
    "qwen2.5-coder-1.5b guided [grounding all, explicit, guards, note, chain, repeat, last action]",
    "qwen2.5-coder-0.5b agentic x10 [grammar]",
]


def _wide_table() -> Table:
    """A main-table-like table: long system labels and eleven number columns (12 in all)."""
    columns = ["System", "Sessions", "Turns", "EX [95% CI]", "rEX", "rEX⊆", "PSJS"]
    columns += ["PSJS-out", "SEM", "CER", "Tok/S", "QER"]
    rows: list[list[str | int | float | None]] = []
    for i, label in enumerate(LABELS):
        ex = f"0.{175 + i} [0.094, 0.26{i}]"
        rows.append([label, 21, 228 + i, ex, 0.232, 0.259 + i / 1000, 0.271, 0.309])
        rows[-1] += [None, 0.897, 1708.1 + i, 0.209]
    return Table(name="main", title="Main results", columns=columns, rows=rows, notes="EX: strict.")


def _narrow_table() -> Table:
    return Table(
        name="main",
        title="Main results",
        columns=["System", "EX", "QER"],
        rows=[["alpha agentic x3 [explicit]", 0.5, 0.25], ["beta guided", 0.75, None]],
        notes="A note.",
    )


def _render(table: Table, width: int, *, fit: bool = True) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(to_rich(table, width=console.width) if fit else to_rich(table))
    return console.export_text()


def _squeeze(text: str) -> str:
    return _LAYOUT.sub("", text)


def _assert_readable(table: Table, text: str, width: int) -> None:
    for line in text.splitlines():
        assert cell_len(line) <= width, line
    for row in table.rows:
        for i, cell in enumerate(row):
            value = fmt(cell)
            if i == 0:
                continue
            if width >= 40:
                # Numbers and CIs are never wrapped or folded: they appear as they are.
                assert value in text, (value, text)
            else:
                # Too narrow for a CI on one line: it wraps within its block's value cell.
                assert _squeeze(value) in _squeeze(text), (value, text)
    for column in table.columns:
        for word in column.split():
            assert word in text, word


def test_wide_table_at_80_columns_is_one_block_per_row_with_full_labels() -> None:
    table = _wide_table()
    text = _render(table, 80)
    _assert_readable(table, text, 80)
    squeezed = _squeeze(text)
    for label in LABELS:
        # A block holds the label in one cell, wrapped between words: whole once layout is removed.
        assert _squeeze(label) in squeezed
    assert text.count("System") == len(LABELS)
    assert "Main results" in text and "EX: strict." in text
    assert "┏" not in text  # not the grid


@pytest.mark.parametrize("width", [30, 40, 60, 80, 100, 120, 160, 200, 260, 400])
def test_wide_table_fits_any_width_and_keeps_every_word(width: int) -> None:
    table = _wide_table()
    text = _render(table, width)
    _assert_readable(table, text, width)
    words = set(text.split())
    label_words = {w for label in LABELS for w in label.split()}
    longest_fitting = width - 20  # a block's value column: width less field names and rules
    assert {w for w in label_words if len(w) <= longest_fitting} <= words
    if not label_words <= words:
        # Only a word longer than a block's value cell is folded, never cut.
        for label in LABELS:
            assert _squeeze(label) in _squeeze(text)


def test_wide_table_at_140_columns_is_a_compact_grid_with_wrapped_labels() -> None:
    table = _wide_table()
    text = _render(table, 140)
    _assert_readable(table, text, 140)
    assert "┼" in text and "┏" not in text  # the compact grid: header rule, no outer edge
    header = next(line for line in text.splitlines() if "Sessions" in line)
    assert all(column in header for column in table.columns)
    assert set(LABELS[0].split()) <= set(text.split())
    assert LABELS[0] not in text  # wrapped between words


def test_wide_table_at_200_columns_is_todays_grid_with_wrapped_labels() -> None:
    table = _wide_table()
    text = _render(table, 200)
    _assert_readable(table, text, 200)
    assert "┏" in text and "┃ System" in text
    assert set(LABELS[0].split()) <= set(text.split())
    assert LABELS[0] not in text
    assert LABELS[2] in text  # the short label still on one line


def test_narrow_table_that_fits_renders_as_todays_grid() -> None:
    table = _narrow_table()
    text = _render(table, 80)
    assert text == _render(table, 80, fit=False)
    assert "┏" in text and "┃ System" in text
    assert "│ alpha agentic x3 [explicit] │ 0.500 │ 0.250 │" in text
    assert "│ beta guided                 │ 0.750 │     - │" in text


def test_wide_table_without_width_is_the_full_grid() -> None:
    text = _render(_wide_table(), 1000, fit=False)
    row = next(line for line in text.splitlines() if "x10" in line)
    assert LABELS[2] in row and "0.177 [0.094, 0.262]" in row


def test_brackets_in_labels_titles_and_notes_are_text_not_markup() -> None:
    table = Table(
        name="t",
        title="Title [bold]",
        columns=["[System]", "EX"],
        rows=[["m guided [explicit, guards]", 0.5]],
        notes="note [red]",
    )
    for text in (_render(table, 80), _render(table, 80, fit=False), _render(table, 20)):
        for part in ("Title [bold]", "[System]", "[explicit,", "guards]", "note [red]"):
            assert part in text


def test_empty_table_renders_its_header() -> None:
    table = Table(name="t", title="Nothing", columns=["System", "EX"])
    text = _render(table, 80)
    assert "System" in text and "EX" in text
