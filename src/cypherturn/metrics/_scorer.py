"""Score turn records: EX, relaxed EX and PSJS, gold results cached, sessions in parallel.

Work per turn (docs/design/psjs-rewrite.md, "One execution for EX and PSJS"): the gold query's result and provenance come
from a :class:`GoldCache` keyed by (graph, gold query) and computed once; the
predicted query is executed once, its provenance rewrite giving EX and PSJS
together (:func:`execute_with_provenance`). Sessions are scored on a thread pool;
engine clients are shared across threads, so the engine must be thread-safe
(the FalkorDB and Neo4j clients are: both hand each call a pooled connection).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cypherturn.cypher import OutputOrder
from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.metrics._equivalence import (
    DEFAULT_TOLERANCE,
    Tolerance,
    columns_permutation,
    rows_equal,
    unordered_list_columns,
)
from cypherturn.metrics._execute import ExecutedQuery, execute_with_provenance
from cypherturn.metrics._psjs import cypherbench_jaccard, cypherbench_node_ids
from cypherturn.metrics._registry import METRICS, ScoredTurn
from cypherturn.records import (
    ExecutionStats,
    PredictionStatus,
    PsjsStatus,
    ScoringSettings,
    SessionKey,
    TurnRecord,
    TurnScore,
)

__all__ = ["GoldCache", "GoldEntry", "Scorer", "ex_scores", "ex_subset_score", "jaccard"]

logger = logging.getLogger(__name__)

_CACHE_VERSION = 2
"""Layout of a saved :class:`GoldCache` (2: with the CypherBench provenance)."""

EngineSource = Mapping[str, GraphEngine] | Callable[[str], GraphEngine]
"""Where the scorer gets the engine of a graph: a mapping or a factory by graph name."""


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    """Jaccard similarity ``len(a & b) / len(a | b)``, defined as 1.0 for two empty sets.

    Args:
        a: one id set.
        b: the other.

    Returns:
        A value in [0, 1].
    """
    union = len(a | b)
    return 1.0 if union == 0 else len(a & b) / union


def ex_scores(
    gold: QueryResult,
    pred: QueryResult,
    order: OutputOrder,
    *,
    tol: Tolerance = DEFAULT_TOLERANCE,
    max_permutations: int = 40_320,
    unordered_columns: frozenset[int] = frozenset(),
) -> tuple[int, int]:
    """Strict and relaxed EX of a predicted result against the gold result.

    Args:
        gold: the gold result.
        pred: the predicted result.
        order: the gold query's output order (:func:`cypherturn.cypher.output_order`).
        tol: float tolerance.
        max_permutations: cap on column assignments tried by relaxed EX.
        unordered_columns: gold columns whose lists relaxed EX compares as multisets
            (:func:`cypherturn.metrics.unordered_list_columns` of the gold query).

    Returns:
        ``(ex, ex_relaxed)``, each 0 or 1.
    """
    width = len(gold.columns)
    if len(pred.columns) != width or len(pred.rows) != len(gold.rows):
        return 0, 0
    same_rows = rows_equal(
        gold.rows, pred.rows, ordered=order.ordered, key_columns=order.key_columns, tol=tol
    )
    if same_rows:
        return int(gold.columns == pred.columns), 1
    perm = columns_permutation(
        gold.rows,
        pred.rows,
        width,
        ordered=order.ordered,
        key_columns=order.key_columns,
        tol=tol,
        max_candidates=max_permutations,
        unordered_columns=unordered_columns,
    )
    return 0, int(perm is not None)


def ex_subset_score(
    gold: QueryResult,
    pred: QueryResult,
    order: OutputOrder,
    *,
    tol: Tolerance = DEFAULT_TOLERANCE,
    max_permutations: int = 40_320,
    unordered_columns: frozenset[int] = frozenset(),
) -> int:
    """Relaxed EX with extra predicted columns allowed: gold columns ⊆ predicted columns.

    1 iff the predicted result has as many rows as the gold and some choice of
    ``len(gold.columns)`` of its columns, in some order, equals the gold under the
    relaxed EX rules (names ignored, ``collect()`` lists of ``unordered_columns``
    as multisets). A prediction that returns the asked-for columns plus context
    (``RETURN p.name, p.age`` for "names") scores 1 here and 0 in relaxed EX.

    Returns:
        0 or 1.
    """
    width = len(gold.columns)
    if len(pred.columns) < width or len(pred.rows) != len(gold.rows):
        return 0
    perm = columns_permutation(
        gold.rows,
        pred.rows,
        width,
        ordered=order.ordered,
        key_columns=order.key_columns,
        tol=tol,
        max_candidates=max_permutations,
        pred_width=len(pred.columns),
        unordered_columns=unordered_columns,
    )
    return int(perm is not None)


@dataclass(slots=True)
class GoldEntry:
    """A gold query's cached outcome.

    Attributes:
        result: the gold result (``None`` when the gold query failed).
        provenance: its provenance ids, or ``None`` when not available.
        provenance_note: why the provenance is missing.
        order: its output order.
        error: the engine's message when it failed.
        unordered_columns: its columns whose ``collect()`` lists have no defined
            order (:func:`unordered_list_columns`), compared as multisets by relaxed EX.
        cb_nodes: its CypherBench provenance (nodes of the leading MATCH block), or
            ``None`` when it could not be computed.
        cb_note: why ``cb_nodes`` is missing.
    """

    result: QueryResult | None
    provenance: frozenset[int] | None
    provenance_note: str | None
    order: OutputOrder
    error: str | None = None
    unordered_columns: frozenset[int] = frozenset()
    cb_nodes: frozenset[int] | None = None
    cb_note: str | None = None


class GoldCache:
    """Thread-safe cache of gold outcomes keyed by ``(graph, gold query)``.

    Each key is computed once even when several threads ask for it at the same
    time. The cache can be saved beside a dataset and loaded back.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], Future[GoldEntry]] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, graph: str, query: str, compute: Callable[[], GoldEntry]) -> GoldEntry:
        """Return the cached entry, computing it with ``compute`` on the first request.

        Raises:
            Exception: whatever ``compute`` raised (the key is then forgotten).
        """
        key = (graph, query)
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if owner:
                future = Future()
                self._entries[key] = future
                self.misses += 1
            else:
                self.hits += 1
        assert future is not None
        if owner:
            try:
                future.set_result(compute())
            except BaseException as exc:
                with self._lock:
                    del self._entries[key]
                future.set_exception(exc)
                raise
        return future.result()

    def save(self, path: Path) -> None:
        """Write every computed entry to a JSON file.

        Raises:
            OSError: the file cannot be written.
        """
        items = []
        with self._lock:
            entries = list(self._entries.items())
        for (graph, query), future in entries:
            if not future.done() or future.exception() is not None:
                continue
            entry = future.result()
            items.append(
                {
                    "graph": graph,
                    "query": query,
                    "result": entry.result.model_dump() if entry.result else None,
                    "provenance": sorted(entry.provenance)
                    if entry.provenance is not None
                    else None,
                    "provenance_note": entry.provenance_note,
                    "ordered": entry.order.ordered,
                    "key_columns": list(entry.order.key_columns)
                    if entry.order.key_columns
                    else None,
                    "error": entry.error,
                    "cb_nodes": sorted(entry.cb_nodes) if entry.cb_nodes is not None else None,
                    "cb_note": entry.cb_note,
                }
            )
        path.write_text(
            json.dumps({"schema_version": _CACHE_VERSION, "entries": items}), encoding="utf-8"
        )

    @classmethod
    def load(cls, path: Path) -> GoldCache:
        """Read a cache written by :meth:`save`.

        Raises:
            DatasetError: the file is missing or malformed, or was written before
                the CypherBench provenance was cached (layout 1).
        """
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("schema_version") != _CACHE_VERSION:
                raise DatasetError(
                    f"gold cache {path} has layout {data.get('schema_version')!r}, not "
                    f"{_CACHE_VERSION}: it lacks the CypherBench PSJS provenance; delete it "
                    "and score again"
                )
            cache = cls()
            for item in data["entries"]:
                result = QueryResult.model_validate(item["result"]) if item["result"] else None
                keys = item["key_columns"]
                entry = GoldEntry(
                    result=result,
                    provenance=frozenset(item["provenance"])
                    if item["provenance"] is not None
                    else None,
                    provenance_note=item["provenance_note"],
                    order=OutputOrder(item["ordered"], tuple(keys) if keys is not None else None),
                    error=item["error"],
                    unordered_columns=unordered_list_columns(item["query"]),
                    cb_nodes=frozenset(item["cb_nodes"]) if item["cb_nodes"] is not None else None,
                    cb_note=item["cb_note"],
                )
                future: Future[GoldEntry] = Future()
                future.set_result(entry)
                cache._entries[(item["graph"], item["query"])] = future
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"cannot read gold cache {path}: {exc}") from exc
        return cache


class Scorer:
    """Scores :class:`TurnRecord` objects against the graphs they were played on.

    Args:
        engines: the engine of each graph, as a mapping or a factory by name.
        settings: tolerances, limits and worker count.
        gold_cache: a cache to reuse (e.g. loaded beside the dataset); a new one
            is made when omitted.
    """

    def __init__(
        self,
        engines: EngineSource,
        settings: ScoringSettings | None = None,
        gold_cache: GoldCache | None = None,
    ) -> None:
        self.settings = settings or ScoringSettings()
        self.gold_cache = gold_cache if gold_cache is not None else GoldCache()
        self._engines = engines
        self._tol = Tolerance(self.settings.rel_tol, self.settings.abs_tol)
        self._lock = threading.Lock()
        self._stats = ExecutionStats()

    @property
    def stats(self) -> ExecutionStats:
        """Engine work so far (gold cache counters included)."""
        with self._lock:
            stats = self._stats.model_copy()
        stats.gold_queries = len(self.gold_cache)
        stats.gold_cache_hits = self.gold_cache.hits
        return stats

    def engine(self, graph: str) -> GraphEngine:
        """The engine for ``graph``.

        Raises:
            DatasetError: no engine is known for that graph.
        """
        if callable(self._engines):
            return self._engines(graph)
        try:
            return self._engines[graph]
        except KeyError:
            known = ", ".join(sorted(self._engines)) or "none"
            raise DatasetError(
                f"no engine for graph {graph!r}; engines given for: {known}"
            ) from None

    def _execute(self, engine: GraphEngine, query: str) -> ExecutedQuery:
        return execute_with_provenance(
            engine,
            query,
            timeout_s=self.settings.timeout_s,
            row_cap=self.settings.row_cap,
            verify_failed_rewrites=self.settings.verify_failed_rewrites,
        )

    def _compute_gold(self, graph: str, query: str) -> GoldEntry:
        engine = self.engine(graph)
        run = self._execute(engine, query)
        executions = run.executions
        order = run.order or OutputOrder(False)
        unordered = unordered_list_columns(query)
        entry = GoldEntry(
            run.result, run.provenance, run.provenance_note, order, unordered_columns=unordered
        )
        if run.error is not None:
            entry.error = run.error.engine_message
        elif (
            self.settings.check_gold_rewrite
            and run.provenance is not None
            and run.result is not None
        ):
            # The gold runs once per dataset: afford checking that the rewrite kept the result.
            executions += 1
            original = engine.execute(
                query, timeout_s=self.settings.timeout_s, row_cap=self.settings.row_cap
            )
            same = original.columns == run.result.columns and rows_equal(
                original.rows,
                run.result.rows,
                ordered=order.ordered,
                key_columns=order.key_columns,
                tol=self._tol,
            )
            if not same:
                logger.warning("provenance rewrite changed the result of gold query %r", query)
                entry = GoldEntry(
                    original,
                    None,
                    "rewrite changed the gold result",
                    order,
                    unordered_columns=unordered,
                )
        cb = cypherbench_node_ids(engine, query, timeout_s=self.settings.timeout_s)
        entry.cb_nodes, entry.cb_note = cb.nodes, cb.note
        with self._lock:
            self._stats.gold_executions += executions
            self._stats.psjs_executions += cb.executions
        return entry

    def gold(self, graph: str, query: str) -> GoldEntry:
        """The gold outcome of ``query`` on ``graph``, from the cache or computed once."""
        return self.gold_cache.get(graph, query, lambda: self._compute_gold(graph, query))

    def _psjs_cypherbench(
        self, record: TurnRecord, gold: GoldEntry, run: ExecutedQuery | None
    ) -> tuple[float | None, PsjsStatus, str | None]:
        """CypherBench PSJS of a turn (:mod:`cypherturn.metrics._psjs`)."""
        if gold.cb_nodes is None:
            return None, PsjsStatus.GOLD_UNSUPPORTED, gold.cb_note
        if record.predicted_cypher is None:
            return 0.0, PsjsStatus.NO_PREDICTION, None
        if record.predicted_cypher == record.gold_cypher:
            return 1.0, PsjsStatus.OK, None
        if run is None or run.result is None:
            return 0.0, PsjsStatus.PREDICTION_FAILED, None
        pred = cypherbench_node_ids(
            self.engine(record.graph), record.predicted_cypher, timeout_s=self.settings.timeout_s
        )
        with self._lock:
            self._stats.psjs_executions += pred.executions
        if pred.nodes is None:
            # The reference scores any exception 0.0; the query itself ran, so say why.
            return 0.0, PsjsStatus.PREDICTION_FAILED, f"provenance query failed: {pred.note}"
        return cypherbench_jaccard(gold.cb_nodes, pred.nodes), PsjsStatus.OK, None

    @staticmethod
    def _psjs_output(
        record: TurnRecord, gold: GoldEntry, run: ExecutedQuery | None
    ) -> tuple[float | None, PsjsStatus, str | None]:
        """Our output-provenance PSJS of a turn (docs/design/psjs-rewrite.md)."""
        if gold.provenance is None:
            return None, PsjsStatus.GOLD_UNSUPPORTED, gold.provenance_note
        if record.predicted_cypher is None:
            return 0.0, PsjsStatus.NO_PREDICTION, None
        if run is None or run.result is None:
            return 0.0, PsjsStatus.PREDICTION_FAILED, None
        if run.provenance is None:
            return None, PsjsStatus.PREDICTION_UNSUPPORTED, run.provenance_note
        return jaccard(gold.provenance, run.provenance), PsjsStatus.OK, None

    def score_turn(self, record: TurnRecord) -> TurnScore:
        """Score one turn.

        Both PSJS metrics treat every prediction of a turn alike when the gold's
        provenance is missing: the turn gets ``None`` and ``gold_unsupported``
        whether its prediction is missing, failed or executed, so that the mean
        over the rest is not biased by scoring only the failures.

        Args:
            record: the turn.

        Returns:
            Its :class:`TurnScore`.

        Raises:
            DatasetError: no engine for the turn's graph.
            EngineConnectionError: the engine is unreachable.
        """
        gold = self.gold(record.graph, record.gold_cypher)
        if gold.result is None:
            return _gold_failed(record, gold.error)
        run = None
        if record.predicted_cypher is not None:
            run = self._execute(self.engine(record.graph), record.predicted_cypher)
            with self._lock:
                self._stats.predicted_queries += 1
                self._stats.executions += run.executions
                self._stats.fallback_executions += int(run.fallback)
        psjs, status, note = self._psjs_cypherbench(record, gold, run)
        psjs_out, status_out, note_out = self._psjs_output(record, gold, run)
        common: dict[str, Any] = {
            "record": record,
            "ordered": gold.order.ordered,
            "gold_rows": gold.result.row_count,
            "psjs": psjs,
            "psjs_status": status,
            "psjs_note": note,
            "psjs_output": psjs_out,
            "psjs_output_status": status_out,
            "psjs_output_note": note_out,
        }
        if run is None:
            return _with_added_metrics(
                gold.result,
                None,
                TurnScore(
                    **common,
                    ex=0,
                    ex_relaxed=0,
                    ex_subset=0,
                    prediction_status=PredictionStatus.NO_PREDICTION,
                    truncated=gold.result.truncated,
                ),
            )
        if run.result is None:
            error = run.error
            failed = TurnScore(
                **common,
                ex=0,
                ex_relaxed=0,
                ex_subset=0,
                prediction_status=PredictionStatus.FAILED,
                prediction_error_class=error.error_class if error else None,
                prediction_error=error.engine_message if error else None,
                truncated=gold.result.truncated,
                executions=run.executions,
            )
            return _with_added_metrics(gold.result, None, failed)
        ex, ex_relaxed, ex_subset = self._ex(gold, gold.result, run.result)
        scored = TurnScore(
            **common,
            ex=ex,
            ex_relaxed=ex_relaxed,
            ex_subset=ex_subset,
            prediction_status=PredictionStatus.OK,
            truncated=gold.result.truncated or run.result.truncated,
            predicted_rows=run.result.row_count,
            executions=run.executions,
        )
        return _with_added_metrics(gold.result, run.result, scored)

    def _ex(
        self, gold: GoldEntry, expected: QueryResult, predicted: QueryResult
    ) -> tuple[int, int, int]:
        """EX, relaxed EX and subset EX of an executed prediction (subset only when relaxed fails).

        Args:
            gold: the gold's run (its order and unordered columns).
            expected: the gold's result (``gold.result``, known not ``None``).
            predicted: the prediction's result.
        """
        most = self.settings.max_permutations
        columns = gold.unordered_columns
        ex, ex_relaxed = ex_scores(
            expected,
            predicted,
            gold.order,
            tol=self._tol,
            max_permutations=most,
            unordered_columns=columns,
        )
        ex_subset = ex_relaxed or ex_subset_score(
            expected,
            predicted,
            gold.order,
            tol=self._tol,
            max_permutations=most,
            unordered_columns=columns,
        )
        return ex, ex_relaxed, ex_subset

    def score(self, records: Iterable[TurnRecord]) -> list[TurnScore]:
        """Score many turns, one session per task on ``settings.workers`` threads.

        Args:
            records: the turns, in any order.

        Returns:
            The scores, sorted by session key then turn.

        Raises:
            DatasetError: no engine for some graph.
            EngineConnectionError: an engine is unreachable.
        """
        started = time.perf_counter()
        sessions: dict[SessionKey, list[TurnRecord]] = defaultdict(list)
        for record in records:
            sessions[record.session_key].append(record)
        keys = sorted(sessions)

        def score_session(key: SessionKey) -> list[TurnScore]:
            return [self.score_turn(r) for r in sorted(sessions[key], key=lambda r: r.turn)]

        if self.settings.workers == 1:
            chunks = [score_session(k) for k in keys]
        else:
            with ThreadPoolExecutor(
                max_workers=self.settings.workers, thread_name_prefix="score"
            ) as pool:
                chunks = list(pool.map(score_session, keys))
        with self._lock:
            self._stats.seconds += time.perf_counter() - started
        return [score for chunk in chunks for score in chunk]


def _gold_failed(record: TurnRecord, error: str | None) -> TurnScore:
    """The score of a turn whose gold query failed: invalid, PSJS unsupported, nothing compared."""
    return TurnScore(
        record=record,
        valid=False,
        gold_error=error,
        ex=0,
        ex_relaxed=0,
        psjs_status=PsjsStatus.GOLD_UNSUPPORTED,
        psjs_note="gold query failed",
        psjs_output_status=PsjsStatus.GOLD_UNSUPPORTED,
        psjs_output_note="gold query failed",
        prediction_status=PredictionStatus.NO_PREDICTION,
    )


def _with_added_metrics(
    gold: QueryResult, predicted: QueryResult | None, score: TurnScore
) -> TurnScore:
    """``score`` with the value of every metric added by :func:`register_metric` (built-ins are set)."""
    added = [m for m in METRICS.items() if m.score is not None]
    if not added:
        return score
    turn = ScoredTurn(record=score.record, gold=gold, predicted=predicted, score=score)
    values = {m.name: m.score(turn) for m in added if m.score is not None}
    return score.model_copy(update={"metrics": values})
