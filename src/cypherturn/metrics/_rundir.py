"""Scoring a run into its directory: ``records.jsonl``, ``scores.jsonl`` and ``run.json``.

The files and their records are :mod:`cypherturn.records`'s (the run-directory
layout is described there); this module only computes the scores.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from cypherturn.errors import DatasetError
from cypherturn.metrics._engineinfo import engine_info
from cypherturn.metrics._scorer import EngineSource, GoldCache, Scorer
from cypherturn.records import (
    ATTEMPTS_FILE,
    MANIFEST_FILE,
    METRICS_VERSION,
    RECORDS_FILE,
    SCORES_FILE,
    RunManifest,
    ScoringSettings,
    TurnRecord,
    read_jsonl,
    write_jsonl,
)

__all__ = ["score_run"]

logger = logging.getLogger(__name__)


def score_run(
    records: Sequence[TurnRecord] | Path,
    engines: EngineSource,
    out_dir: Path,
    *,
    settings: ScoringSettings | None = None,
    gold_cache: GoldCache | None = None,
    description: str = "",
) -> RunManifest:
    """Score turn records and write a run directory (``records.jsonl``, ``scores.jsonl``, ``run.json``).

    Args:
        records: the turns, or a ``records.jsonl`` path to read them from.
        engines: the engine of each graph (mapping or factory by graph name).
        out_dir: the run directory; created when missing.
        settings: scoring settings (defaults: tolerance 1e-6, 2 workers).
        gold_cache: a gold cache to reuse and fill.
        description: free text stored in the manifest.

    Returns:
        The :class:`RunManifest` written to ``run.json``.

    Raises:
        DatasetError: unreadable records, or no engine for a graph.
        EngineConnectionError: an engine is unreachable.
    """
    turns = list(read_jsonl(records, TurnRecord)) if isinstance(records, Path) else list(records)
    if not turns:
        raise DatasetError("no turn records to score")
    out_dir.mkdir(parents=True, exist_ok=True)
    scorer = Scorer(engines, settings, gold_cache)
    scores = scorer.score(turns)
    write_jsonl(out_dir / RECORDS_FILE, turns)
    write_jsonl(out_dir / SCORES_FILE, scores)
    files = {"records": RECORDS_FILE, "scores": SCORES_FILE}
    if (out_dir / ATTEMPTS_FILE).exists():
        files["attempts"] = ATTEMPTS_FILE
    manifest = RunManifest(
        run_id="+".join(sorted({t.run_id for t in turns})),
        description=description,
        turns=len(scores),
        sessions=len({t.session_key for t in turns}),
        models=sorted({t.model for t in turns}),
        protocols=sorted({t.protocol.value for t in turns}),
        graphs=sorted({t.graph for t in turns}),
        settings=scorer.settings,
        executions=scorer.stats,
        metrics_version=METRICS_VERSION,
        engines={
            graph: engine_info(scorer.engine(graph)) for graph in sorted({t.graph for t in turns})
        },
        files=files,
    )
    (out_dir / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    logger.info(
        "scored %d turns in %.1f s (%.3f executions per predicted query)",
        len(scores),
        manifest.executions.seconds,
        manifest.executions.executions_per_prediction,
    )
    return manifest
