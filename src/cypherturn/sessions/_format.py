"""The benchmark file format: versioned JSONL, one session per line (documented in docs/design/sessions.md).

Every line is one :class:`Session` serialised with :meth:`Session.to_line`
(fields in declaration order, no whitespace, UTF-8), so the same sessions always
give byte-identical files. :func:`read_sessions` refuses lines of a newer format
version than this code knows (the layout's own reader is
:func:`cypherturn.records.read_jsonl`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.errors import DatasetError
from cypherturn.records import DataSplit, read_jsonl
from cypherturn.sessions._skeleton import Skeleton
from cypherturn.sessions._vocab import ChainMode, Persona, Phenomenon

__all__ = [
    "FORMAT_VERSION",
    "AmbiguityInfo",
    "AmbiguityKind",
    "GoldResult",
    "ImportCheck",
    "RewriteInfo",
    "Session",
    "Turn",
    "canonical_rows",
    "iter_sessions",
    "read_sessions",
    "write_sessions",
]

FORMAT_VERSION = 1
"""Version of the session line layout; bumped on any incompatible change."""


class GoldResult(BaseModel):
    """The rows the gold query returned when the benchmark was built.

    Attributes:
        columns: column names in RETURN order.
        rows: one list per row. When ``ordered`` is false the rows are a multiset
            and are stored sorted (a canonical order, so files are reproducible);
            this stored order is also the order "the first one you listed" refers to.
        ordered: true when the gold query orders its final output (ORDER BY in the
            last RETURN), so row order is part of the answer.
    """

    model_config = ConfigDict(frozen=True)

    columns: list[str]
    rows: list[list[Any]]
    ordered: bool = False

    @property
    def row_count(self) -> int:
        """Number of rows."""
        return len(self.rows)


class AmbiguityKind(StrEnum):
    """Why a turn's utterance admits more than one reading."""

    TIE = "tie"
    """The ranking behind a top-k selection ties at the cut; a tie-breaker decides."""
    RELATIONSHIP = "relationship"
    """Several relationship types connect the two entity types; the utterance does not say which."""
    POSITION = "position"
    """A positional reference ("the first one") depends on the order the result was listed in."""
    UNSPECIFIED = "unspecified"
    """Imported from a file that does not say why the turn is ambiguous."""


class AmbiguityInfo(BaseModel):
    """A pre-authored disambiguation for the ASK_USER action (CypherTurn App. D.5).

    Attributes:
        kind: the source of the ambiguity.
        description: what is ambiguous, for annotators and reports.
        simulator_reply: the scripted user's answer to a clarifying question; it
            resolves the ambiguity without naming schema elements or the answer.
    """

    kind: AmbiguityKind
    description: str
    simulator_reply: str


class RewriteInfo(BaseModel):
    """Record of an optional model rewrite of the utterance (CypherTurn §2.5).

    Attributes:
        model: spec of the chat model that rewrote the utterance.
        original_utterance: the template-rendered utterance before rewriting.
    """

    model: str
    original_utterance: str


class ImportCheck(BaseModel):
    """How an imported official gold fared when re-executed and audited on our engine.

    Attributes:
        status: ``reproduced`` (our engine returns the official answer and no audit makes
            it engine-dependent), ``nondeterministic`` (the answer depends on the engine:
            an ORDER BY ... LIMIT that cuts through ties, or an answer-changing
            engine-divergence class), ``differs`` (not reproduced, and no audit explains
            why) or ``error`` (our engine cannot execute the gold).
        reason: why, for every status but ``reproduced``.
        official_reproduced: our engine returned the official answer.
        audits: codes of every audit finding on the gold (``tie_cut``,
            ``parallel_edges``, ``too_large``, ...), also those that do not set the status.
    """

    status: Literal["reproduced", "nondeterministic", "differs", "error"]
    reason: str = ""
    official_reproduced: bool = False
    audits: list[str] = Field(default_factory=list)


class Turn(BaseModel):
    """One user turn with its gold query and gold result.

    Attributes:
        turn_index: 1-based position in the session (the official ``turn_id``).
        utterance: what the user says, in the session persona's register.
        phenomena: the conversational phenomena of the turn; empty for a session's
            first turn, which exercises none (as in the official release).
        chain_mode: how the query depends on an earlier one (``none`` at turn 1).
        depends_on: index of the turn whose result this turn builds on (``None`` for
            the first turn and TOPIC_SHIFT; usually the previous turn, an earlier one
            for FIRST).
        gold_cypher: the reference query; chain-dependent turns re-derive the set
            they build on inside this query.
        gold_result: the rows ``gold_cypher`` returned on the built graph.
        ambiguity_info: present when the utterance is ambiguous; holds the scripted
            disambiguation reply.
        reference_description: for positional references, which element is meant.
        skeleton: the typed skeleton the gold was composed from (``None`` for
            imported turns).
        rewrite: present when a model rewrote the utterance.
        import_check: for imported turns re-executed by ``bench import``, the outcome
            (``None`` otherwise).
    """

    turn_index: int = Field(ge=1)
    utterance: str
    phenomena: list[Phenomenon] = Field(default_factory=list)
    chain_mode: ChainMode
    depends_on: int | None = None
    gold_cypher: str
    gold_result: GoldResult
    ambiguity_info: AmbiguityInfo | None = None
    reference_description: str | None = None
    skeleton: Skeleton | None = None
    rewrite: RewriteInfo | None = None
    import_check: ImportCheck | None = None


class Session(BaseModel):
    """One benchmark session: a persona's conversation over one world.

    Attributes:
        format_version: layout version of this line (:data:`FORMAT_VERSION`).
        session_id: unique, stable identifier (``<world>-<seed>-<index>`` when built).
        world: name of the graph the session runs on (a registered world).
        persona: the persona whose register every utterance follows.
        source: ``generated`` (built by cypherturn) or ``official`` (imported release).
        seed: the build seed (``None`` for imported sessions).
        graph_seed: seed of the world build the golds were verified on (``None`` for
            imported sessions, whose graphs come from the release's files).
        graph_scale: scale of that world build.
        turns: the turns in order.
        split: ``test`` for a session of a frozen held-out split (never used to tune;
            run only to confirm a decision made on development data), ``development``
            when declared so; ``None`` (undeclared) reads as development. Written
            only when set, so the lines (and digests) of undeclared sessions are
            unchanged.
    """

    format_version: int = Field(default=FORMAT_VERSION, ge=1, le=FORMAT_VERSION)
    session_id: str
    world: str
    persona: Persona
    source: Literal["generated", "official"] = "generated"
    seed: int | None = None
    graph_seed: int | None = None
    graph_scale: float | None = None
    turns: list[Turn]
    split: DataSplit | None = None

    def to_line(self) -> str:
        """Serialise to one JSON line (no trailing newline), fields in declaration order."""
        if self.split is None:
            return self.model_dump_json(exclude={"split"})
        return self.model_dump_json()


def write_sessions(path: Path, sessions: Iterable[Session]) -> int:
    """Write sessions as JSONL, one per line, replacing the file.

    Returns:
        Number of sessions written.

    Raises:
        DatasetError: the file cannot be written.
    """
    count = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for session in sessions:
                fh.write(session.to_line())
                fh.write("\n")
                count += 1
    except OSError as e:
        raise DatasetError(f"cannot write {path}: {e}") from e
    return count


def iter_sessions(path: Path) -> Iterator[Session]:
    """Read sessions lazily from a JSONL file.

    Raises:
        DatasetError: the file is missing, a line is not valid JSON for
            :class:`Session`, or its format version is not :data:`FORMAT_VERSION`.
    """
    return read_jsonl(path, Session, problem=_line_problem)


def _line_problem(line: str, error: ValidationError) -> str:
    """One line saying why a session line is unreadable: its version, else pydantic's first error."""
    try:
        raw = json.loads(line)
    except ValueError:
        raw = None
    version = raw.get("format_version") if isinstance(raw, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version != FORMAT_VERSION:
        relation = "newer than the one" if version > FORMAT_VERSION else "not one"
        return f"format version {version} is {relation} this cypherturn reads ({FORMAT_VERSION})"
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"not a cypherturn session line: {where + ': ' if where else ''}{first['msg']}"


def read_sessions(path: Path) -> list[Session]:
    """Read every session of a JSONL file (see :func:`iter_sessions` for errors)."""
    return list(iter_sessions(path))


def _canonical_key(row: list[Any]) -> tuple[Any, ...]:
    return tuple(_value_key(v) for v in row)


def _value_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float):
        return (2, value)
    if isinstance(value, str):
        return (3, value)
    return (4, repr(value))


def canonical_rows(rows: Iterable[list[Any]]) -> list[list[Any]]:
    """Rows sorted by a total order over mixed values (None < bool < number < str < other).

    Example:
        >>> canonical_rows([["b"], [None], ["a"], [2]])
        [[None], [2], ['a'], ['b']]
    """
    return sorted((list(r) for r in rows), key=_canonical_key)
