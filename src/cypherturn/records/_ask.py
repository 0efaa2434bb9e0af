"""The records of an ask benchmark run (``cypherturn bench ask``): gold labels and answers.

An ask benchmark asks single questions (no conversation), each with a gold
query, and scores the final result of a strategy against the gold's rows. Two
records are written, one JSON object a line:

* :class:`GoldCheck` — how a question's gold fared on our engine before any
  model saw the question: kept as it is, repaired faithfully (the same meaning
  in FalkorDB's dialect), or excluded with its reasons. Only kept and repaired
  golds are asked. The label vocabulary is :class:`GoldReason`.
* :class:`AskAnswer` — one question answered by one (model, strategy, budget):
  executable, strict and relaxed EX, attempts, tokens, seconds and the whole
  strategy result.

Both carry the question's data split (:class:`DataSplit`) so that every figure
made from them can say whether it comes from data that shaped the system.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ASK_RECORD_VERSION",
    "AskAnswer",
    "DataSplit",
    "GoldCheck",
    "GoldReason",
    "GoldStatus",
    "Harness",
]

ASK_RECORD_VERSION: Final = 1
"""Layout version of :class:`GoldCheck` and :class:`AskAnswer`."""


class DataSplit(StrEnum):
    """Whether the data behind a figure shaped the system.

    A figure counts as evidence only on ``test`` data: questions or sessions
    frozen before any system output on them was seen, and never used to tune.
    """

    DEVELOPMENT = "development"
    """Data the system was designed, tuned or accepted on (or may have been)."""
    TEST = "test"
    """A frozen held-out split: run only to confirm a decision made on development data."""


class Harness(StrEnum):
    """What a figure measures: the model under a paper's harness, or the whole system."""

    PAPER = "paper-comparable"
    """The paper's prompt and loop, no notes, no grounding: comparable with the paper's tables."""
    SYSTEM = "system"
    """cypherturn's additions on (notes, grounding, repairs, selection): a system result."""
    PEER = "peer"
    """Another tool run as its docs show, on the same model and engine (``benchmarks/bench_peers.py``)."""


class GoldStatus(StrEnum):
    """What became of a gold query on our engine."""

    KEPT = "kept"
    """It runs as written and returns a usable, deterministic answer."""
    REPAIRED = "repaired"
    """It was rewritten with the same meaning in FalkorDB's dialect (the reasons name how)."""
    EXCLUDED = "excluded"
    """It is not asked: the reasons say why."""


class GoldReason(StrEnum):
    """Why a gold was repaired (the first three) or excluded (the rest); counted in reports.

    The Neo4j-versus-FalkorDB classes were found by re-executing the Mind the Query
    golds (verified on Neo4j 5) on the embedded engine; docs/design/ask-benchmark.md.
    """

    DATE_OF_DATE = "date_of_date"
    """Repair: ``date(x)`` on a property that already holds dates; Neo4j accepts it,
    FalkorDB raises a type error. Rewritten as ``x``."""
    STRING_DATE = "string_date"
    """Repair: a date property compared for equality (``=``, ``<>``, ``IN``, a map
    pattern) with a date written as a string (``'25/08/2017'``); the source database
    stores the date as a string, our loader types it. Rewritten as ``date('2017-08-25')``."""
    STRING_NUMBER = "string_number"
    """Repair: a numeric property compared for equality with a number written as a
    string (``'57'``); rewritten as the number."""
    TYPED_VALUE = "typed_value"
    """Exclusion: a date or number our loader types is read as a string (ordered as
    text, cut with a string function, matched with STARTS WITH); no faithful rewrite."""
    ENGINE_ERROR = "engine_error"
    """Exclusion: our engine refuses the gold (a dialect difference or an invalid query)."""
    TIMEOUT = "timeout"
    """Exclusion: the gold did not finish within the time limit."""
    WRITE = "write"
    """Exclusion: the gold writes (refused by the read-only gate)."""
    EMPTY_ON_SOURCE = "empty_on_source"
    """Exclusion: the gold returns no rows here, and the dataset's own check says it
    returned none on the source database either: an empty answer rewards any query
    that finds nothing."""
    EMPTY_HERE = "empty_here"
    """Exclusion: the gold returns no rows here although the dataset validated it as
    answering on its source database (an engine or data divergence)."""
    NULL_ONLY = "null_only"
    """Exclusion: every cell of the gold's answer is null (an aggregate over nothing)."""
    TOO_LARGE = "too_large"
    """Exclusion: the gold's answer is cut by the row cap, so EX cannot compare it."""
    JUDGED_WRONG = "judged_wrong"
    """Exclusion: the dataset's authors judged the gold wrong by hand (``logical`` = 0)."""
    TIE_CUT = "tie_cut"
    """Exclusion: an ORDER BY ... LIMIT cuts through tied rows: the answer depends on the engine."""
    LIMIT_WITHOUT_ORDER = "limit_without_order"
    """Exclusion: a LIMIT with no ORDER BY keeps rows the engine happens to return first."""
    ENGINE_DIVERGENCE = "engine_divergence"
    """Exclusion: an answer-changing engine-divergence class
    (:mod:`cypherturn.sessions._divergence`: parallel edges, exists(), UNION ... LIMIT,
    a filter after LIMIT, a temporal component filter)."""
    DUPLICATE = "duplicate"
    """Exclusion: the same question (case and spaces ignored) with the same gold appears earlier."""


REPAIR_REASONS: Final = frozenset(
    {GoldReason.DATE_OF_DATE, GoldReason.STRING_DATE, GoldReason.STRING_NUMBER}
)
"""The reasons that are faithful rewrites, not exclusions."""


class GoldCheck(BaseModel):
    """How one question's gold fared on our engine (one line of ``golds.jsonl``).

    Attributes:
        schema_version: record layout version (:data:`ASK_RECORD_VERSION`).
        question_id: the question.
        graph: the graph the gold runs on.
        status: kept, repaired or excluded.
        reasons: the repairs applied, or why it is excluded (:class:`GoldReason`);
            empty when kept.
        note: the detail behind the reasons (the engine's message, the tied rows).
        gold: the query that is run for the gold answer (the repaired one when repaired).
        original_gold: the gold as the data set wrote it.
        rows: rows of the gold's answer on our engine (0 when it did not run).
        digest: SHA-256 of the answer's columns and rows (rows sorted unless the gold
            orders them); a rerun on another graph build is detected by it.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = ASK_RECORD_VERSION
    question_id: str
    graph: str
    status: GoldStatus
    reasons: list[GoldReason] = Field(default_factory=list)
    note: str = ""
    gold: str
    original_gold: str
    rows: int = 0
    digest: str = ""

    @property
    def usable(self) -> bool:
        """The question is asked (its gold is kept or repaired)."""
        return self.status is not GoldStatus.EXCLUDED


class AskAnswer(BaseModel):
    """One question answered by one system (one line of ``answers.jsonl``).

    Attributes:
        schema_version: record layout version (:data:`ASK_RECORD_VERSION`).
        ask_set: the name of the question set (a packaged set's name or the file's stem).
        split: the question's data split.
        model: the spec of the model that ran (``default`` resolved to a name).
        strategy: the strategy string (``single``, ``is``, ``ras``, ``ras+``, ``ras+:<parts>``).
        budget: T, the most attempts.
        prompt: the prompt version (``v1``: the RAS paper's; ``v2``: with examples).
        harness: paper-comparable or system (:class:`Harness`).
        question_id / graph / category / phenomena: the question.
        gold_status: kept or repaired.
        executable: the final query executed.
        ex / ex_relaxed: strict and relaxed EX against the gold's answer (0 or 1).
        attempts: attempts used; tokens: prompt plus completion tokens over them.
        seconds: wall time of the strategy run, seconds.
        final_query: the final query ("" when none was extracted).
        error: the error that ended the question before a result (``None`` otherwise).
        result: the whole strategy result as JSON (``None`` when it raised).
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = ASK_RECORD_VERSION
    ask_set: str
    split: DataSplit
    model: str
    strategy: str
    budget: int = Field(ge=1)
    prompt: str
    harness: Harness
    question_id: str
    graph: str
    category: str = ""
    phenomena: list[str] = Field(default_factory=list)
    gold_status: GoldStatus = GoldStatus.KEPT
    executable: bool
    ex: int = Field(ge=0, le=1)
    ex_relaxed: int = Field(ge=0, le=1)
    attempts: int = Field(ge=0)
    tokens: int = Field(ge=0)
    seconds: float = Field(ge=0)
    final_query: str = ""
    error: str | None = None
    result: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, int, str, str]:
        """(model, strategy, budget, prompt, question id): what a resumed run skips."""
        return (self.model, self.strategy, self.budget, self.prompt, self.question_id)

    @property
    def system(self) -> tuple[str, str, int, str]:
        """(model, strategy, budget, prompt): the system that answered."""
        return (self.model, self.strategy, self.budget, self.prompt)
