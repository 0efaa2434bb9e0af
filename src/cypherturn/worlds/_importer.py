"""Public datasets shipped as Neo4j Data Importer packages (a zip of neo4j-admin CSVs).

A dataset declares its schema once, as :class:`LabelSpec` and
:class:`RelationshipSpec` entries with exact counts; :class:`ImporterDataset`
derives from that declaration the file names to read, the types of unannotated
columns, the checks run on every file and the :class:`GraphSchema` it promises.
The package is read straight from the zip (packaged with cypherturn, or one the
user points at) or from a folder of extracted CSVs; nothing is written to disk.
"""

from __future__ import annotations

import io
import logging
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO, ClassVar

from cypherturn.errors import DatasetError
from cypherturn.graph import (
    GraphData,
    GraphSchema,
    LabelSchema,
    NodeRecord,
    RelationshipPattern,
    RelationshipRecord,
    RelationshipTypeSchema,
)
from cypherturn.worlds._admin_csv import AdminCsvFile, Header, ValueType
from cypherturn.worlds._base import WorldInfo

__all__ = ["ImporterDataset", "LabelSpec", "RelationshipSpec"]

log = logging.getLogger(__name__)

_ENCODING = "utf-8-sig"


@dataclass(frozen=True, slots=True)
class LabelSpec:
    """A node label of a dataset: its exact count and its property types.

    Attributes:
        label: the node label, also the ``<prefix>.nodes.<label>.csv`` file name part.
        count: number of nodes the package holds.
        properties: property key -> type; every key must be a column of the file.
    """

    label: str
    count: int
    properties: Mapping[str, ValueType]


@dataclass(frozen=True, slots=True)
class RelationshipSpec:
    """A relationship type of a dataset: its patterns with exact counts, and property types.

    Attributes:
        type: the relationship type, also the ``<prefix>.relationships.<type>.csv`` name part.
        patterns: ``(source label, target label)`` -> number of relationships.
        properties: property key -> type; every key must be a column of the file.
    """

    type: str
    patterns: Mapping[tuple[str, str], int]
    properties: Mapping[str, ValueType] = field(default_factory=dict)

    @property
    def count(self) -> int:
        """Number of relationships of this type."""
        return sum(self.patterns.values())


class _CsvFiles:
    """Text access to the CSVs of one package, from a zip or a folder."""

    def __init__(
        self, where: str, *, folder: Path | None = None, archive: zipfile.ZipFile | None = None
    ) -> None:
        self.where = where
        self._folder = folder
        self._archive = archive
        # Zip members are matched by base name so a zip with a top-level folder also works.
        self._members = (
            {Path(n).name: n for n in archive.namelist() if not n.endswith("/")} if archive else {}
        )

    def open(self, name: str) -> IO[str]:
        """Open one CSV as text (the caller closes it)."""
        if self._folder is not None:
            file = self._folder / name
            if not file.is_file():
                raise DatasetError(f"{self.where}: file {name} is missing")
            try:
                return file.open(encoding=_ENCODING, newline="")
            except OSError as e:
                raise DatasetError(f"{self.where}: cannot read {name}: {e}") from e
        if self._archive is None or name not in self._members:
            raise DatasetError(f"{self.where}: file {name} is missing")
        binary = self._archive.open(self._members[name])
        return io.TextIOWrapper(binary, encoding=_ENCODING, newline="")


class ImporterDataset:
    """Base class of the public-dataset worlds; subclasses only declare data.

    Class attributes to set:
        INFO: the catalogue entry (``expected_nodes`` / ``expected_relationships`` set).
        PACKAGE_FOLDER: folder under ``cypherturn/data/datasets`` holding the zip.
        ARCHIVE: file name of the Data Importer zip.
        FILE_PREFIX: CSV name prefix (``crime-investigation``).
        LABELS / RELATIONSHIPS: the declared schema with exact counts.
        INDEXES: ``(label, property key)`` pairs to index after loading.

    Implements the :class:`~cypherturn.worlds.World` protocol. ``seed`` and
    ``scale`` are ignored: a dataset is what it is.
    """

    INFO: ClassVar[WorldInfo]
    PACKAGE_FOLDER: ClassVar[str]
    ARCHIVE: ClassVar[str]
    FILE_PREFIX: ClassVar[str]
    LABELS: ClassVar[tuple[LabelSpec, ...]]
    RELATIONSHIPS: ClassVar[tuple[RelationshipSpec, ...]]
    INDEXES: ClassVar[tuple[tuple[str, str], ...]]

    @property
    def info(self) -> WorldInfo:
        """The catalogue entry."""
        return self.INFO

    def declared_schema(self) -> GraphSchema:
        """The schema of the dataset as declared (labels, types, patterns, exact counts).

        Returns:
            A :class:`GraphSchema` with Cypher type names (STRING, INTEGER, FLOAT,
            BOOLEAN, DATE) for every property key the CSVs carry.
        """
        return GraphSchema(
            labels=[
                LabelSchema(
                    label=s.label,
                    count=s.count,
                    properties={k: t.name for k, t in s.properties.items()},
                )
                for s in self.LABELS
            ],
            relationship_types=[
                RelationshipTypeSchema(
                    type=s.type,
                    count=s.count,
                    properties={k: t.name for k, t in s.properties.items()},
                )
                for s in self.RELATIONSHIPS
            ],
            patterns=[
                RelationshipPattern(source=src, type=s.type, target=dst)
                for s in self.RELATIONSHIPS
                for src, dst in s.patterns
            ],
        )

    def build(self, *, seed: int = 0, scale: float = 1.0, path: Path | None = None) -> GraphData:
        """Read the whole package into a :class:`GraphData`.

        Args:
            seed: ignored (datasets are fixed).
            scale: ignored.
            path: the Data Importer zip, a folder of extracted CSVs, or a folder
                holding either (directly, under ``data/``, or as in the dataset's
                repository); default: the zip packaged with cypherturn.

        Returns:
            Every node and relationship, with the declared indexes; node keys are
            the CSV ``:ID`` values (strings).

        Raises:
            DatasetError: the package cannot be found, a file is missing or
                malformed (file and line named), or a count differs from the
                declared one (both numbers given).
        """
        del seed, scale
        with self._files(path) as files:
            log.info("building %s from %s", self.INFO.name, files.where)
            label_of: dict[str, str] = {}
            patterns: Counter[tuple[str, str, str]] = Counter()
            nodes = [n for spec in self.LABELS for n in self._read_nodes(files, spec, label_of)]
            relationships = [
                rel
                for spec in self.RELATIONSHIPS
                for rel in self._read_relationships(files, spec, label_of, patterns)
            ]
        data = GraphData(
            name=self.INFO.name,
            nodes=nodes,
            relationships=relationships,
            indexes=list(self.INDEXES),
            source=self.INFO.source,
        )
        self._check_counts(data, patterns)
        return data

    @contextmanager
    def _files(self, path: Path | None) -> Iterator[_CsvFiles]:
        with ExitStack() as stack:
            if path is None:
                packaged = resources.files("cypherturn") / "data" / "datasets"
                yield self._zip(stack, packaged / self.PACKAGE_FOLDER / self.ARCHIVE)
                return
            path = Path(path).expanduser()
            if path.is_file():
                yield self._zip(stack, path)
                return
            if not path.is_dir():
                raise DatasetError(f"{self.INFO.name}: {path} does not exist")
            first = self._file_name("nodes", self.LABELS[0].label)
            stem = self.ARCHIVE.removesuffix(".zip")
            for folder in (path, path / stem, path / "data" / stem):
                if (folder / first).is_file():
                    yield _CsvFiles(str(folder), folder=folder)
                    return
            for archive in (path / self.ARCHIVE, path / "data" / self.ARCHIVE):
                if archive.is_file():
                    yield self._zip(stack, archive)
                    return
            raise DatasetError(
                f"{self.INFO.name}: no {self.ARCHIVE} and no extracted CSVs ({first}, ...) "
                f"in {path}, {path / stem}, {path / 'data'} or {path / 'data' / stem}"
            )

    def _zip(self, stack: ExitStack, location: Traversable | Path) -> _CsvFiles:
        try:
            binary = stack.enter_context(location.open("rb"))
            archive = stack.enter_context(zipfile.ZipFile(binary))
        except OSError as e:
            raise DatasetError(f"{self.INFO.name}: cannot read {location}: {e}") from e
        except zipfile.BadZipFile as e:
            raise DatasetError(f"{self.INFO.name}: {location} is not a zip file: {e}") from e
        return _CsvFiles(str(location), archive=archive)

    def _file_name(self, kind: str, name: str) -> str:
        return f"{self.FILE_PREFIX}.{kind}.{name}.csv"

    @staticmethod
    def _check_header(header: Header, declared: Mapping[str, ValueType], source: str) -> None:
        columns = header.property_columns
        missing = sorted(set(declared) - set(columns))
        extra = sorted(set(columns) - set(declared))
        if missing:
            raise DatasetError(f"{source}, line 1: missing column(s) {', '.join(missing)}")
        if extra:
            raise DatasetError(f"{source}, line 1: undeclared column(s) {', '.join(extra)}")
        for key, column in columns.items():
            if column.annotated and column.value_type.name != declared[key].name:
                raise DatasetError(
                    f"{source}, line 1: column {key!r} is typed {column.value_type.name} "
                    f"in the header but declared {declared[key].name}"
                )

    def _read_nodes(
        self, files: _CsvFiles, spec: LabelSpec, label_of: dict[str, str]
    ) -> Iterator[NodeRecord]:
        name = self._file_name("nodes", spec.label)
        source = f"{files.where}/{name}"
        with files.open(name) as lines:
            yield from self._checked_nodes(
                AdminCsvFile(
                    lines, source=source, types=spec.properties, default_labels=(spec.label,)
                ),
                spec,
                label_of,
            )

    def _checked_nodes(
        self, reader: AdminCsvFile, spec: LabelSpec, label_of: dict[str, str]
    ) -> Iterator[NodeRecord]:
        source = reader.source
        self._check_header(reader.header, spec.properties, source)
        for node in reader.nodes():
            if node.labels != (spec.label,):
                raise DatasetError(
                    f"{source}, line {reader.line}: labels {':'.join(node.labels)}, "
                    f"expected {spec.label}"
                )
            key = str(node.key)
            if key in label_of:
                raise DatasetError(f"{source}, line {reader.line}: duplicate :ID {key}")
            label_of[key] = spec.label
            yield node

    def _read_relationships(
        self,
        files: _CsvFiles,
        spec: RelationshipSpec,
        label_of: Mapping[str, str],
        patterns: Counter[tuple[str, str, str]],
    ) -> Iterator[RelationshipRecord]:
        name = self._file_name("relationships", spec.type)
        source = f"{files.where}/{name}"
        with files.open(name) as lines:
            yield from self._checked_relationships(
                AdminCsvFile(lines, source=source, types=spec.properties, default_type=spec.type),
                spec,
                label_of,
                patterns,
            )

    def _checked_relationships(
        self,
        reader: AdminCsvFile,
        spec: RelationshipSpec,
        label_of: Mapping[str, str],
        patterns: Counter[tuple[str, str, str]],
    ) -> Iterator[RelationshipRecord]:
        source = reader.source
        self._check_header(reader.header, spec.properties, source)
        for rel in reader.relationships():
            where = f"{source}, line {reader.line}"
            if rel.type != spec.type:
                raise DatasetError(f"{where}: type {rel.type}, expected {spec.type}")
            start, end = label_of.get(str(rel.start)), label_of.get(str(rel.end))
            if start is None or end is None:
                missing = rel.start if start is None else rel.end
                raise DatasetError(f"{where}: no node has :ID {missing}")
            if (start, end) not in spec.patterns:
                raise DatasetError(
                    f"{where}: undeclared pattern (:{start})-[:{rel.type}]->(:{end})"
                )
            patterns[spec.type, start, end] += 1
            yield rel

    def _check_counts(self, data: GraphData, found_patterns: Counter[tuple[str, str, str]]) -> None:
        found_labels = data.label_counts()
        mismatches = [
            f"{s.label} nodes: expected {s.count}, found {found_labels[s.label]}"
            for s in self.LABELS
            if found_labels[s.label] != s.count
        ]
        found_types = data.type_counts()
        mismatches += [
            f"{s.type} relationships: expected {s.count}, found {found_types[s.type]}"
            for s in self.RELATIONSHIPS
            if found_types[s.type] != s.count
        ]
        mismatches += [
            f"(:{src})-[:{s.type}]->(:{dst}) relationships: expected {count}, "
            f"found {found_patterns[s.type, src, dst]}"
            for s in self.RELATIONSHIPS
            for (src, dst), count in s.patterns.items()
            if found_patterns[s.type, src, dst] != count
        ]
        totals = (
            ("nodes", self.INFO.expected_nodes, len(data.nodes)),
            ("relationships", self.INFO.expected_relationships, len(data.relationships)),
        )
        mismatches += [
            f"{what}: expected {expected}, found {found}"
            for what, expected, found in totals
            if expected is not None and expected != found
        ]
        if mismatches:
            raise DatasetError(f"{self.INFO.name}: counts differ: " + "; ".join(mismatches))
