"""Completing records written before they named their end, action counts and simulator.

:class:`~cypherturn.records.TurnRecord` gained ``end``, ``model_actions``,
``unreadable_actions`` and ``sim_model`` after some runs were committed (the
loss-by-cause row of docs/design/metrics.md; docs/design/protocols.md, "One
simulator for compared agentic runs"). A bench run directory recorded earlier still holds what they say: each session log's ``turn_end`` event
names why the turn ended and its ``step`` events are the actions, and
``bench_config.json`` names the simulator. This module reads them back, so the
committed runs under ``docs/results`` report their loss by cause and their
simulator like new ones.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from cypherturn.errors import DatasetError
from cypherturn.records import SESSIONS_DIR, ProtocolName, RunData, TurnRecord, TurnScore
from cypherturn.runner._batch import CONFIG_FILE, RunConfig
from cypherturn.runner._log import finished_turns, read_log

__all__ = ["with_logged_play"]

logger = logging.getLogger(__name__)

_Key = tuple[str, str, int]
"""``(run id, session id, turn)``."""


def _logged_ends(run: RunData) -> dict[_Key, dict[str, object]]:
    """The end reason and action counts of every turn the run's session logs finished.

    Raises:
        DatasetError: a log is unreadable.
    """
    found: dict[_Key, dict[str, object]] = {}
    for path in sorted((run.path / SESSIONS_DIR).glob("*.jsonl")):
        for steps, finished in finished_turns(read_log(path)):
            record = finished.record
            found[(record.run_id, record.session_id, record.turn)] = {
                "end": finished.end,
                "model_actions": sum(not s.step.by_harness for s in steps),
                "unreadable_actions": sum(s.step.action is None for s in steps),
            }
    return found


def _configured_simulator(run: RunData) -> str | None:
    """The simulator model ``bench_config.json`` names (``None``: the evaluated model, or no config)."""
    path = run.path / CONFIG_FILE
    if not path.exists():
        return None
    try:
        return RunConfig.model_validate_json(path.read_text(encoding="utf-8")).sim_model
    except (OSError, ValidationError) as e:
        logger.warning("%s: unreadable (%s); its records keep the simulator they name", path, e)
        return None


def with_logged_play(run: RunData) -> RunData:
    """``run`` with its records completed from the bench run's own files where they lack a field.

    A record without ``end`` takes its end reason and action counts from the
    session log's ``turn_end`` of the same run, session and turn; an agentic
    record without ``sim_model`` takes the simulator ``bench_config.json`` names,
    when it names one (otherwise the evaluated model played it, which ``None``
    already says). A run directory without those files (a log scored elsewhere) is
    returned unchanged: its end reasons stay unrecorded.

    Args:
        run: a run directory as :func:`cypherturn.records.read_run` read it.

    Returns:
        The run with completed records (the same object when nothing was missing).
    """
    lacking_end = any(s.record.end is None for s in run.scores)
    simulator = _configured_simulator(run) if run.scores else None
    if not lacking_end and simulator is None:
        return run
    logged: dict[_Key, dict[str, object]] = {}
    if lacking_end:
        try:
            logged = _logged_ends(run)
        except DatasetError as e:
            logger.warning("%s: %s; its turns' end reasons stay unrecorded", run.path, e)

    def completed(record: TurnRecord) -> TurnRecord:
        update: dict[str, object] = {}
        if record.end is None:
            update.update(logged.get((record.run_id, record.session_id, record.turn), {}))
        agentic = record.protocol is ProtocolName.AGENTIC
        if simulator is not None and agentic and record.sim_model is None:
            update["sim_model"] = simulator
        return record.model_copy(update=update) if update else record

    scores: list[TurnScore] = []
    for score in run.scores:
        record = completed(score.record)
        scores.append(
            score if record is score.record else score.model_copy(update={"record": record})
        )
    if all(new is old for new, old in zip(scores, run.scores, strict=True)):
        return run
    return run.model_copy(update={"scores": scores})
