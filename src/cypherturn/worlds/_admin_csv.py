"""Reader for CSV files in the ``neo4j-admin database import`` header format.

The header row names one column per field: ``:ID`` / ``name:ID(group)`` (node
identity), ``:LABEL``, ``:START_ID(group)``, ``:END_ID(group)``, ``:TYPE``,
``:IGNORE``, and properties written ``key`` or ``key:type`` with ``type`` one of
``int long short byte float double boolean date string char``, optionally
followed by ``[]`` for an array whose elements are split on ``;``. This is the
format of the CSVs in the Neo4j Data Importer packages of the POLE and
Healthcare datasets.

Semantics follow neo4j-admin where it is well defined and are stricter where it
silently guesses:

* an ``:ID`` column without a name is not stored as a property; ``name:ID`` stores
  the raw identifier as a STRING property ``name``;
* an empty cell means the property is absent (it is not stored as ``""``);
* an unannotated column is a STRING unless the caller's ``types`` map gives it a
  type: datasets use this where their importer model types a column that the CSV
  header leaves bare (POLE ``Vehicle.year``);
* a cell that does not parse as its type raises :class:`DatasetError` naming the
  file and line, except for types marked lenient (see :func:`lenient`), whose
  unparseable cells are dropped and counted;
* booleans must read ``true`` or ``false`` (any case); neo4j-admin reads every
  other word as ``false``.

Records are produced as :class:`~cypherturn.graph.NodeRecord` and
:class:`~cypherturn.graph.RelationshipRecord`, keyed by the raw identifier
(prefixed ``group:`` for a named ID space).
"""

from __future__ import annotations

import csv
import datetime as dt
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from cypherturn.errors import DatasetError
from cypherturn.graph import NodeRecord, RelationshipRecord

__all__ = [
    "BOOLEAN",
    "DATE",
    "DATE_DMY",
    "FLOAT",
    "INTEGER",
    "STRING",
    "AdminCsvFile",
    "Column",
    "ColumnRole",
    "Header",
    "ValueType",
    "lenient",
    "parse_header",
]

log = logging.getLogger(__name__)

# ASCII digits only: int()/float() alone would also take "1_000", "nan" and non-Latin digits.
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# name, then optional ":" + field (ID, LABEL, int, ...), "(group)", "[]" for arrays.
_HEADER_RE = re.compile(
    r"(?P<name>[^:]*)(?::(?P<field>[A-Za-z_]+)(?:\((?P<group>[^)]*)\))?(?P<array>\[\])?)?"
)


def _parse_int(text: str) -> int:
    if not _INT_RE.fullmatch(text):
        raise ValueError(f"not an integer: {text!r}")
    return int(text)


def _parse_float(text: str) -> float:
    if not _FLOAT_RE.fullmatch(text):
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"not a boolean (true/false): {text!r}")
    return lowered == "true"


def _parse_iso_date(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def _parse_dmy_date(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%d/%m/%Y").date()


@dataclass(frozen=True, slots=True)
class ValueType:
    """How a cell becomes a property value.

    Attributes:
        name: the Cypher type name reported in schemas (``STRING``, ``INTEGER``,
            ``FLOAT``, ``BOOLEAN``, ``DATE``).
        parse: text -> value; raises ``ValueError`` on a malformed cell.
        lenient: when True an unparseable cell is dropped (property absent) and
            counted instead of raising :class:`DatasetError`.
    """

    name: str
    parse: Callable[[str], Any]
    lenient: bool = False


STRING = ValueType("STRING", str)
INTEGER = ValueType("INTEGER", _parse_int)
FLOAT = ValueType("FLOAT", _parse_float)
BOOLEAN = ValueType("BOOLEAN", _parse_bool)
DATE = ValueType("DATE", _parse_iso_date)
"""ISO-8601 date (``2014-03-25``) -> ``datetime.date``, as neo4j-admin's ``date``."""
DATE_DMY = ValueType("DATE", _parse_dmy_date)
"""British ``dd/mm/yyyy`` date (POLE ``Crime.date``) -> ``datetime.date``; not a neo4j-admin type."""

_ADMIN_TYPES: dict[str, ValueType] = {
    "string": STRING,
    "char": STRING,
    "int": INTEGER,
    "long": INTEGER,
    "short": INTEGER,
    "byte": INTEGER,
    "float": FLOAT,
    "double": FLOAT,
    "boolean": BOOLEAN,
    "date": DATE,
}


def lenient(value_type: ValueType) -> ValueType:
    """The same type, but unparseable cells are dropped and counted rather than fatal.

    Args:
        value_type: the strict type.

    Returns:
        A copy with ``lenient=True``.
    """
    return replace(value_type, lenient=True)


class ColumnRole(StrEnum):
    """What a header column holds."""

    ID = "ID"
    LABEL = "LABEL"
    START_ID = "START_ID"
    END_ID = "END_ID"
    TYPE = "TYPE"
    IGNORE = "IGNORE"
    PROPERTY = "PROPERTY"


_ROLE_FIELDS = frozenset(r.value for r in ColumnRole if r is not ColumnRole.PROPERTY)
_UNNAMED_ROLES = frozenset(
    {ColumnRole.LABEL, ColumnRole.TYPE, ColumnRole.START_ID, ColumnRole.END_ID}
)


@dataclass(frozen=True, slots=True)
class Column:
    """One parsed header field.

    Attributes:
        role: what the column holds.
        key: property key (for PROPERTY, and ID columns that are stored); else ``""``.
        value_type: how PROPERTY cells are parsed (STRING for the other roles).
        array: cells hold ``;``-separated lists.
        group: ID space of an ID / START_ID / END_ID column (``""`` = global).
        annotated: the header gave the type explicitly (``key:int``).
    """

    role: ColumnRole
    key: str = ""
    value_type: ValueType = STRING
    array: bool = False
    group: str = ""
    annotated: bool = False


@dataclass(frozen=True, slots=True)
class Header:
    """A parsed header row.

    Attributes:
        columns: one entry per field, in file order.
        kind: ``"nodes"`` or ``"relationships"``.
    """

    columns: tuple[Column, ...]
    kind: str

    @property
    def property_columns(self) -> dict[str, Column]:
        """Property key -> column, for the stored properties (ID names included)."""
        return {c.key: c for c in self.columns if c.key}

    def index(self, role: ColumnRole) -> int | None:
        """Position of the first column with ``role``, or None."""
        for i, column in enumerate(self.columns):
            if column.role is role:
                return i
        return None


def _parse_column(field: str, types: Mapping[str, ValueType]) -> Column:
    match = _HEADER_RE.fullmatch(field.strip())
    if match is None:
        raise ValueError(f"unreadable header field {field!r}")
    name, spec = match["name"], match["field"]
    group, array = match["group"] or "", match["array"] is not None
    if spec is None:
        if not name:
            raise ValueError("empty header field")
        return Column(ColumnRole.PROPERTY, name, types.get(name, STRING))
    if spec.upper() in _ROLE_FIELDS:
        role = ColumnRole(spec.upper())
        if name and role in _UNNAMED_ROLES:
            raise ValueError(f"{field!r}: a :{role} column takes no property name")
        # A named :ID column stores the raw identifier (neo4j-admin), an unnamed one does not.
        return Column(role, name if role is ColumnRole.ID else "", STRING, group=group)
    value_type = _ADMIN_TYPES.get(spec.lower())
    if value_type is None:
        raise ValueError(
            f"{field!r}: unsupported type {spec!r} (supported: {', '.join(_ADMIN_TYPES)})"
        )
    if not name:
        raise ValueError(f"{field!r}: a typed property column needs a name")
    return Column(ColumnRole.PROPERTY, name, value_type, array=array, annotated=True)


def parse_header(
    fields: Sequence[str], *, types: Mapping[str, ValueType] | None = None, source: str = "<csv>"
) -> Header:
    """Parse a neo4j-admin import header row.

    Args:
        fields: the header cells.
        types: property key -> type for unannotated columns (default STRING).
        source: file name used in error messages.

    Returns:
        The parsed :class:`Header`; its ``kind`` is ``relationships`` when a
        ``:START_ID``/``:END_ID``/``:TYPE`` column is present, else ``nodes``.

    Raises:
        DatasetError: an unreadable or unsupported field, a duplicate property
            key, or a missing ``:ID`` (nodes) / ``:START_ID`` or ``:END_ID``
            (relationships) column; the message names ``source``, line 1.
    """
    types = types or {}
    columns: list[Column] = []
    seen: set[str] = set()
    for field in fields:
        try:
            column = _parse_column(field, types)
        except ValueError as e:
            raise DatasetError(f"{source}, line 1: {e}") from e
        if column.key:
            if column.key in seen:
                raise DatasetError(f"{source}, line 1: duplicate property column {column.key!r}")
            seen.add(column.key)
        columns.append(column)
    roles = Counter(c.role for c in columns)
    for role, count in roles.items():
        if role not in (ColumnRole.PROPERTY, ColumnRole.IGNORE) and count > 1:
            raise DatasetError(f"{source}, line 1: more than one :{role} column")
    relationship_roles = (ColumnRole.START_ID, ColumnRole.END_ID, ColumnRole.TYPE)
    if any(roles[r] for r in relationship_roles):
        for required in (ColumnRole.START_ID, ColumnRole.END_ID):
            if not roles[required]:
                raise DatasetError(f"{source}, line 1: missing column :{required}")
        if roles[ColumnRole.ID] or roles[ColumnRole.LABEL]:
            raise DatasetError(f"{source}, line 1: mixes node and relationship columns")
        return Header(tuple(columns), "relationships")
    if not roles[ColumnRole.ID]:
        raise DatasetError(f"{source}, line 1: missing column :ID (or :START_ID/:END_ID)")
    return Header(tuple(columns), "nodes")


class AdminCsvFile:
    """One neo4j-admin import CSV file, read row by row with the stdlib ``csv`` module.

    Args:
        lines: the file's text lines (an open text file, ``newline=""``).
        source: file name used in error messages and logs.
        types: property key -> type for unannotated columns.
        default_labels: labels of rows without a ``:LABEL`` column or with an empty cell.
        default_type: relationship type of rows without a ``:TYPE`` column or cell.
        delimiter: field delimiter (neo4j-admin default ``,``).
        array_delimiter: array element delimiter (neo4j-admin default ``;``).

    Attributes:
        header: the parsed header.
        line: the physical line number of the last row read (1 = header).
        dropped: property key -> number of cells of a lenient type that did not
            parse and were left out.

    Raises:
        DatasetError: the file is empty or its header is malformed.
    """

    def __init__(
        self,
        lines: Iterable[str],
        *,
        source: str,
        types: Mapping[str, ValueType] | None = None,
        default_labels: Sequence[str] = (),
        default_type: str | None = None,
        delimiter: str = ",",
        array_delimiter: str = ";",
    ) -> None:
        self.source = source
        self._reader = csv.reader(lines, delimiter=delimiter, strict=True)
        self._array_delimiter = array_delimiter
        self._default_labels = tuple(default_labels)
        self._default_type = default_type
        self.dropped: Counter[str] = Counter()
        try:
            first = next(self._reader, None)
        except csv.Error as e:
            raise DatasetError(f"{source}, line 1: {e}") from e
        except UnicodeDecodeError as e:
            raise self._undecodable(e) from e
        if first is None:
            raise DatasetError(f"{source}: empty file, no header row")
        self.header = parse_header(first, types=types, source=source)

    @property
    def line(self) -> int:
        """Physical line number of the last row read."""
        return self._reader.line_num

    def _error(self, message: str) -> DatasetError:
        return DatasetError(f"{self.source}, line {self.line}: {message}")

    def _undecodable(self, e: UnicodeDecodeError) -> DatasetError:
        # Text is decoded in blocks ahead of the csv reader, so only a lower bound is known.
        return DatasetError(f"{self.source}: not UTF-8 text (after line {self.line}): {e}")

    def _rows(self) -> Iterator[list[str]]:
        width = len(self.header.columns)
        while True:
            try:
                row = next(self._reader)
            except StopIteration:
                return
            except csv.Error as e:
                raise self._error(str(e)) from e
            except UnicodeDecodeError as e:
                raise self._undecodable(e) from e
            if not row:
                continue
            if len(row) != width:
                raise self._error(f"expected {width} fields, found {len(row)}")
            yield row

    def _value(self, column: Column, cell: str) -> Any:
        value_type = column.value_type
        try:
            if column.array:
                return [value_type.parse(item) for item in cell.split(self._array_delimiter)]
            return value_type.parse(cell)
        except ValueError as e:
            if value_type.lenient:
                self.dropped[column.key] += 1
                return None
            raise self._error(f"column {column.key!r}: {value_type.name} expected: {e}") from e

    def _properties(self, row: list[str]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for column, cell in zip(self.header.columns, row, strict=True):
            if not column.key or cell == "":
                continue
            value = self._value(column, cell)
            if value is not None:
                properties[column.key] = value
        return properties

    def _key(self, cell: str, group: str, role: ColumnRole) -> str:
        if cell == "":
            raise self._error(f"empty :{role} value")
        return f"{group}:{cell}" if group else cell

    def _log_dropped(self) -> None:
        for key, count in self.dropped.items():
            log.info("%s: %d %r cell(s) did not parse and were left out", self.source, count, key)

    def nodes(self) -> Iterator[NodeRecord]:
        """Yield one :class:`NodeRecord` per data row.

        Raises:
            DatasetError: not a node file, a row of the wrong width, an empty
                ``:ID``, no label, or a malformed value (file and line named).
        """
        if self.header.kind != "nodes":
            raise DatasetError(f"{self.source}: a relationship file, not a node file")
        id_at = self.header.index(ColumnRole.ID)
        label_at = self.header.index(ColumnRole.LABEL)
        assert id_at is not None  # parse_header guarantees an :ID column for node files
        group = self.header.columns[id_at].group
        for row in self._rows():
            labels = self._default_labels
            if label_at is not None and row[label_at]:
                labels = tuple(x for x in row[label_at].split(self._array_delimiter) if x)
            if not labels:
                raise self._error("no label (empty :LABEL and no default label)")
            key = self._key(row[id_at], group, ColumnRole.ID)
            yield NodeRecord(key, labels, self._properties(row))
        self._log_dropped()

    def relationships(self) -> Iterator[RelationshipRecord]:
        """Yield one :class:`RelationshipRecord` per data row.

        Raises:
            DatasetError: not a relationship file, a row of the wrong width, an
                empty ``:START_ID``/``:END_ID``, no type, or a malformed value.
        """
        if self.header.kind != "relationships":
            raise DatasetError(f"{self.source}: a node file, not a relationship file")
        start_at = self.header.index(ColumnRole.START_ID)
        end_at = self.header.index(ColumnRole.END_ID)
        type_at = self.header.index(ColumnRole.TYPE)
        assert start_at is not None and end_at is not None  # guaranteed by parse_header
        start_group = self.header.columns[start_at].group
        end_group = self.header.columns[end_at].group
        for row in self._rows():
            rel_type = row[type_at] if type_at is not None and row[type_at] else self._default_type
            if not rel_type:
                raise self._error("no relationship type (empty :TYPE and no default type)")
            start = self._key(row[start_at], start_group, ColumnRole.START_ID)
            end = self._key(row[end_at], end_group, ColumnRole.END_ID)
            yield RelationshipRecord(start, end, rel_type, self._properties(row))
        self._log_dropped()
