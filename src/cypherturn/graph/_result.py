"""The result of executing one query: ordered columns and rows of plain Python values."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["QueryResult"]


class QueryResult(BaseModel):
    """Rows returned by a graph engine, engine-neutral.

    Values are plain Python: ``None``, ``bool``, ``int`` (exact, never rounded
    through a float), ``float``, ``str``, ``list``, ``dict``. Nodes serialise to
    ``{"_kind": "node", "id": ..., "labels": [...], "properties": {...}}``,
    relationships to ``{"_kind": "relationship", "id": ..., "type": ...,
    "start": ..., "end": ..., "properties": {...}}``, paths to
    ``{"_kind": "path", "nodes": [...], "relationships": [...]}`` and temporal
    values to ISO-8601 strings.
    """

    columns: list[str] = Field(description="Column names in RETURN order.")
    rows: list[list[Any]] = Field(description="One list per row, aligned with `columns`.")
    truncated: bool = Field(
        default=False,
        description="True when the row cap cut the result; `rows` holds the first cap rows.",
    )
    elapsed_ms: float = Field(
        default=0.0, description="Wall time of the engine call, milliseconds."
    )

    @property
    def row_count(self) -> int:
        """Number of rows held (after any truncation)."""
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name (a duplicate name keeps the last value)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]
