"""The memory of verified questions: question → Cypher pairs kept per graph, on disk.

A pair enters the memory only after its Cypher ran on the graph read-only
(:func:`verify_pair`), because a remembered pair is shown to the model as an
example of a right answer. One JSON Lines file per graph holds the pairs; a
question asked again replaces its earlier pair, and :meth:`QuestionMemory.forget`
drops one. Every change rewrites the file under an exclusive lock and renames it
into place, so two processes adding at once lose nothing and a reader never sees
half a file.

Not in the papers: neither the RAS paper nor CypherTurn keeps verified pairs
across questions. Peers' users ask for exactly this (few-shot examples picked
by similarity from a store of known-good queries); see docs/design/memory.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import GraphEngine

__all__ = [
    "MEMORY_SCHEMA_VERSION",
    "PairSource",
    "QuestionMemory",
    "VerifiedPair",
    "memory_path",
    "normalize_question",
    "verify_pair",
]

MEMORY_SCHEMA_VERSION = 1
"""Version of a memory file's line format; a reader refuses a newer one."""

PairSource = Literal["user", "file"]
"""Where a pair came from: confirmed by a person (chat, MCP, API), or read from a file (``learn``)."""

_VERIFY_ROW_CAP = 1_000
_VERIFY_TIMEOUT_S = 10.0


class VerifiedPair(BaseModel):
    """One question and the Cypher that answers it on one graph, checked to run.

    Attributes:
        question: the question in words, as asked.
        cypher: a read-only query that ran on the graph without error.
        graph: the graph name the query was verified on (for example ``pole``).
        source: ``"user"`` or ``"file"``.
        rows: rows the query returned when verified (capped at 1,000).
        verified_at: UTC time of the verification, ISO 8601.
    """

    schema_version: int = MEMORY_SCHEMA_VERSION
    question: str = Field(min_length=1)
    cypher: str = Field(min_length=1)
    graph: str = Field(min_length=1)
    source: PairSource = "user"
    rows: int = Field(default=0, ge=0)
    verified_at: str = ""

    @property
    def key(self) -> str:
        """The normalized question: a pair with the same key replaces this one."""
        return normalize_question(self.question)


def normalize_question(question: str) -> str:
    """Lower case, single spaces, no trailing punctuation: what makes two questions the same.

    >>> normalize_question("  How many Crime nodes are there? ")
    'how many crime nodes are there'
    """
    text = re.sub(r"\s+", " ", question.strip().lower())
    return text.rstrip(" ?.!")


def memory_path(graph: str, engine_url: str | None = None, home: Path | None = None) -> Path:
    """The memory file of ``graph``: beside the embedded engine's files, one per graph.

    Args:
        graph: the graph name.
        engine_url: the engine's URL when it is not the embedded one; its host and
            port name the file too, so two servers' graphs of one name stay apart.
        home: the base directory; default ``$CYPHERTURN_HOME``, else
            ``~/.cache/cypherturn``.

    Returns:
        ``<home>/memory/<graph>.jsonl`` (embedded) or
        ``<home>/memory/<graph>-<8 hex digits of the URL>.jsonl``.

    Raises:
        ConfigError: an empty graph name.
    """
    if not graph.strip():
        raise ConfigError("a memory needs a graph name")
    if home is None:
        env = os.environ.get("CYPHERTURN_HOME")
        home = Path(env).expanduser() if env else Path.home() / ".cache" / "cypherturn"
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", graph.strip())
    if engine_url:
        safe += "-" + hashlib.sha256(engine_url.encode()).hexdigest()[:8]
    return home / "memory" / f"{safe}.jsonl"


def verify_pair(
    engine: GraphEngine, question: str, cypher: str, source: PairSource
) -> VerifiedPair:
    """Run ``cypher`` read-only on ``engine`` and return the pair it verifies.

    The engine's read-only guard, timeout (10 s) and row cap (1,000) apply.

    Args:
        engine: an engine on the pair's graph.
        question: the question in words.
        cypher: the query that answers it.
        source: ``"user"`` or ``"file"``.

    Returns:
        The pair, with the rows the query returned and the time of the check.

    Raises:
        ConfigError: an empty question or query.
        QueryError: the query does not run (a syntax error, a write, a timeout).
        EngineConnectionError: the engine is unreachable.
    """
    if not question.strip() or not cypher.strip():
        raise ConfigError("a remembered pair needs a question and a query")
    result = engine.execute(cypher, timeout_s=_VERIFY_TIMEOUT_S, row_cap=_VERIFY_ROW_CAP)
    return VerifiedPair(
        question=question.strip(),
        cypher=cypher.strip(),
        graph=engine.graph,
        source=source,
        rows=result.row_count,
        verified_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class QuestionMemory:
    """The verified pairs of one graph, read from and written to one file.

    Args:
        path: the memory file (:func:`memory_path`); it need not exist yet.

    Raises:
        DatasetError: (on :meth:`pairs`) a line that is not a pair, or a newer format.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def pairs(self) -> list[VerifiedPair]:
        """Every pair, oldest first; an absent file is an empty memory."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as e:
            raise DatasetError(f"cannot read the memory file {self.path}: {e}") from e
        return list(_parse(text, self.path))

    def __len__(self) -> int:
        return len(self.pairs())

    def add(self, pairs: Iterable[VerifiedPair]) -> int:
        """Keep ``pairs``; each replaces an earlier pair with the same question.

        Returns:
            How many pairs were new questions (the rest replaced one).

        Raises:
            DatasetError: the file cannot be written, or holds lines that are not pairs.
        """
        incoming = list(pairs)
        with self._locked():
            kept = {pair.key: pair for pair in self.pairs()}
            new = sum(pair.key not in kept for pair in {p.key: p for p in incoming}.values())
            for pair in incoming:
                kept.pop(pair.key, None)
                kept[pair.key] = pair
            self._write(kept.values())
        return new

    def forget(self, question: str) -> bool:
        """Drop the pair for ``question`` (compared normalized).

        Returns:
            Whether a pair was dropped.
        """
        key = normalize_question(question)
        with self._locked():
            pairs = self.pairs()
            kept = [pair for pair in pairs if pair.key != key]
            if len(kept) == len(pairs):
                return False
            self._write(kept)
        return True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a", encoding="utf-8") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                yield
        except OSError as e:
            raise DatasetError(f"cannot write the memory file {self.path}: {e}") from e

    def _write(self, pairs: Iterable[VerifiedPair]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                for pair in pairs:
                    out.write(pair.model_dump_json() + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _parse(text: str, path: Path) -> Iterator[VerifiedPair]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            pair = VerifiedPair.model_validate(json.loads(line))
        except (ValueError, ValidationError) as e:
            raise DatasetError(f"{path}:{number}: not a remembered pair ({e})") from e
        if pair.schema_version > MEMORY_SCHEMA_VERSION:
            raise DatasetError(
                f"{path}:{number}: format version {pair.schema_version} is newer than this "
                f"cypherturn reads ({MEMORY_SCHEMA_VERSION}); upgrade cypherturn"
            )
        yield pair
