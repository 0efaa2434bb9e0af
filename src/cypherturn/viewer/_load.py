"""Read a run directory of any kind into a :class:`~cypherturn.viewer._model.RunPage`.

Kinds, told apart by the files they hold (the layouts: :mod:`cypherturn.records`):

* ``bench``: ``scores.jsonl`` (or an unscored ``records.jsonl`` of TurnRecords),
  ``run.json``, ``bench_config.json`` and the action logs ``sessions/<id>.jsonl``;
* ``qer``: ``attempts.jsonl`` (QerEpisode), ``qer.json``, ``transcripts.jsonl``;
* ``ask``: ``answers.jsonl`` of :class:`~cypherturn.records.AskAnswer` (``cypherturn
  bench ask``), or the retired ask-accuracy script's ``records.jsonl`` (model,
  strategy, question_id, ex, ..., the whole StrategyResult) and ``config.json``.

Malformed files are reported as the project's other readers report them
(:func:`~cypherturn.records.read_jsonl`: a :class:`DatasetError` naming the file
and line, so ``cypherturn view`` exits 1 with that one line); the action logs
drop a torn last line, as :func:`~cypherturn.runner._log.read_log` does on resume.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ValidationError

from cypherturn.errors import DatasetError
from cypherturn.experiments import QerTranscript
from cypherturn.metrics import METRICS, cer, session_scores
from cypherturn.records import (
    ANSWERS_FILE,
    ATTEMPTS_FILE,
    MANIFEST_FILE,
    RECORDS_FILE,
    SCORES_FILE,
    TRANSCRIPTS_FILE,
    AskAnswer,
    QerEpisode,
    RunManifest,
    TurnRecord,
    TurnScore,
    read_jsonl,
    read_run,
    validation_problem,
)
from cypherturn.reports import Table, ask_tables, build_report, system_label
from cypherturn.runner import StepLogged, TurnFinished, read_log
from cypherturn.sessions import Session, read_sessions
from cypherturn.strategies import Attempt, StrategyResult
from cypherturn.viewer._model import (
    GroupView,
    ItemView,
    ResultView,
    RunPage,
    StepView,
    TurnView,
)

__all__ = ["detect_kind", "read_page"]

_CONFIG_FILES = ("bench_config.json", "qer.json", "ask.json", "config.json")
_SESSIONS_DIR = "sessions"
_RESULT_ROWS = 10
"""Gold rows shown per turn; the total is always given."""


def detect_kind(path: Path) -> str:
    """The kind of run directory ``path`` is: ``bench``, ``qer`` or ``ask``.

    Raises:
        DatasetError: not a directory, or none of the files of a run.
    """
    if not path.is_dir():
        raise DatasetError(f"run directory {path} does not exist")
    if (path / SCORES_FILE).exists() or (path / _SESSIONS_DIR).is_dir():
        return "bench"
    if (path / ATTEMPTS_FILE).exists():
        return "qer"
    if (path / ANSWERS_FILE).exists():
        return "ask"
    records = path / RECORDS_FILE
    if records.exists():
        first = _first_object(records)
        return "ask" if {"question_id", "strategy", "ex"} <= set(first) else "bench"
    raise DatasetError(
        f"{path} is not a run directory: it holds none of {SCORES_FILE}, {RECORDS_FILE}, "
        f"{ATTEMPTS_FILE}, {ANSWERS_FILE}, {_SESSIONS_DIR}/"
    )


def read_page(path: Path, *, n_resamples: int = 2_000, bench: Path | None = None) -> RunPage:
    """Everything the page of run directory ``path`` shows.

    Args:
        path: a run directory.
        n_resamples: bootstrap resamples of the summary tables' confidence intervals
            (:func:`~cypherturn.reports.build_report`, session-level bootstrap).
        bench: the benchmark file the run played (``bench build`` output); with it,
            bench turns show the user's utterance and the gold query's stored rows
            (a run directory does not hold them). Ignored for QER and ask runs.

    Returns:
        The page's data.

    Raises:
        DatasetError: not a run directory, or a malformed file (named, with its line).
    """
    kind = detect_kind(path)
    page = RunPage(title=str(path), kind=kind)
    _meta(path, page)
    if kind == "bench":
        sessions = {s.session_id: s for s in read_sessions(bench)} if bench is not None else {}
        _bench(path, page, n_resamples, sessions)
    elif kind == "qer":
        _qer(path, page, n_resamples)
    else:
        _ask(path, page)
    return page


# ---------------------------------------------------------------------- shared


def _first_object(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    value = json.loads(line)
                    return value if isinstance(value, dict) else {}
    except (OSError, json.JSONDecodeError) as e:
        raise DatasetError(f"cannot read {path}: {e}") from e
    return {}


def _meta(path: Path, page: RunPage) -> None:
    manifest_path = path / MANIFEST_FILE
    if manifest_path.exists():
        try:
            manifest = RunManifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
        except ValidationError as e:
            raise DatasetError(f"{manifest_path}: {validation_problem(e, 'run manifest')}") from e
        page.meta += [
            ("run", manifest.run_id),
            ("created", manifest.created_at.isoformat(timespec="seconds")),
            ("models", ", ".join(manifest.models)),
            ("protocols", ", ".join(manifest.protocols)),
            ("sessions / turns", f"{manifest.sessions} / {manifest.turns}"),
            ("metric definitions", str(manifest.metrics_version)),
        ]
        page.meta += [(f"engine ({graph})", str(info)) for graph, info in manifest.engines.items()]
        if not manifest.engines:
            page.meta.append(("engine", "not recorded (scored before engines were recorded)"))
    for name in _CONFIG_FILES:
        config = path / name
        if config.exists():
            try:
                text = json.dumps(json.loads(config.read_text(encoding="utf-8")), indent=2)
            except (OSError, json.JSONDecodeError) as e:
                raise DatasetError(f"cannot read {config}: {e}") from e
            page.meta.append((f"configuration ({name})", text))


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _outcome(turns: Sequence[TurnView]) -> str:
    failed = sum(t.failed for t in turns)
    return "correct" if failed == 0 else "failed" if failed == len(turns) else "partial"


def _attempt_steps(attempts: Iterable[Attempt]) -> list[StepView]:
    steps = []
    for a in attempts:
        notes = [f"verdict {a.verdict}"] if a.verdict else []
        if a.original_query is not None:
            notes.append(f"model wrote: {a.original_query}")
        notes += [f"repaired {r.code}: {r.message}" for r in a.repairs]
        notes += [f"check {f.code}: {f.message}" for f in a.findings]
        notes.append(
            f"{a.prompt_tokens}+{a.completion_tokens} tokens, model {a.model_latency_s:.2f} s, "
            f"engine {a.execution_latency_s:.3f} s"
        )
        steps.append(
            StepView(
                index=a.index,
                action="attempt",
                query=a.query,
                observation=a.error_message or f"{a.row_count} rows",
                ok=a.ok,
                error_class=a.error_class.value if a.error_class else None,
                rows=a.row_count,
                notes=notes,
                reply=a.raw_text,
            )
        )
    return steps


# ---------------------------------------------------------------------- bench


_Key = tuple[tuple[str, str, int, str, str], str, int]


def _logged_steps(path: Path, page: RunPage) -> dict[_Key, tuple[list[StepView], str]]:
    """(system, session, turn) -> (its steps, why the turn ended), from the action logs."""
    found: dict[_Key, tuple[list[StepView], str]] = {}
    folder = path / _SESSIONS_DIR
    if not folder.is_dir():
        page.notes.append(f"no {_SESSIONS_DIR}/ action logs: turns are shown without their actions")
        return found
    for log in sorted(folder.glob("*.jsonl")):
        pending: list[StepView] = []
        for event in read_log(log):
            if isinstance(event, StepLogged):
                s = event.step
                notes = [
                    f"{s.prompt_tokens}+{s.output_tokens} tokens, model {s.model_latency_s:.2f} s, "
                    f"engine {s.execution_latency_s:.3f} s, {s.budget_remaining} actions left"
                ]
                if s.repaired:
                    notes.append("the reply was read after repair")
                if s.by_harness:
                    notes.append("taken by the harness for the model (schema first)")
                pending.append(
                    StepView(
                        index=s.step,
                        action=s.action.name if s.action is not None else "unparsed reply",
                        query=s.payload,
                        observation=s.observation,
                        ok=s.ok,
                        error_class=s.error_class.value if s.error_class else None,
                        rows=s.rows,
                        notes=notes,
                        reply=s.reply,
                    )
                )
            elif isinstance(event, TurnFinished):
                record = event.record
                found[(record.system, record.session_id, record.turn)] = (pending, event.end.value)
                pending = []
    return found


def _score_turn(score: TurnScore) -> TurnView:
    r = score.record
    # every registered turn metric (the built-ins and any added one), in report column order
    scores = {}
    for metric in METRICS.items():
        value = metric.value(score)
        shown = "-" if value is None else str(int(value)) if value in (0.0, 1.0) else _fmt(value)
        scores[metric.label] = shown
    facts = [
        f"prediction {score.prediction_status.value}",
        f"gold rows {score.gold_rows}, predicted rows {score.predicted_rows}",
        f"{r.prompt_tokens} prompt + {r.output_tokens} output tokens, {r.latency_s:.2f} s",
    ]
    if score.psjs_status.value != "ok":
        facts.append(
            f"PSJS {score.psjs_status.value}" + (f": {score.psjs_note}" if score.psjs_note else "")
        )
    if not score.valid:
        facts.append(f"not scored: the gold failed ({score.gold_error})")
    if r.cliff:
        facts.append("cliff: the budget was spent before the turn began")
    if r.actions:
        facts.append("actions " + ", ".join(f"{a.name} x{n}" for a, n in r.actions.items()))
    return TurnView(
        number=r.turn,
        title=r.phenomenon or f"turn {r.turn}",
        phenomenon=r.phenomenon,
        failed=score.ex == 0,
        scores=scores,
        gold=r.gold_cypher,
        predicted=r.predicted_cypher or "",
        error=score.prediction_error or "",
        facts=facts,
    )


def _record_turn(r: TurnRecord) -> TurnView:
    return TurnView(
        number=r.turn,
        title=r.phenomenon or f"turn {r.turn}",
        phenomenon=r.phenomenon,
        failed=r.predicted_cypher is None,
        gold=r.gold_cypher,
        predicted=r.predicted_cypher or "",
        facts=["not scored yet: run `cypherturn report` or score the run"],
    )


def _result_view(columns: list[str], rows: list[list[Any]]) -> ResultView:
    shown = rows[:_RESULT_ROWS]
    return ResultView(
        columns=columns,
        rows=[[json.dumps(v, ensure_ascii=False, default=str) for v in row] for row in shown],
        total=len(rows),
    )


def _add_session_facts(view: TurnView, record: TurnRecord, sessions: dict[str, Session]) -> None:
    session = sessions.get(record.session_id)
    if session is None:
        return
    turn = next((t for t in session.turns if t.turn_index == record.turn), None)
    if turn is None:
        return
    view.question = turn.utterance
    view.gold_result = _result_view(turn.gold_result.columns, turn.gold_result.rows)


def _session_scores(scores: list[TurnScore]) -> dict[str, str]:
    """EX (mean), SEM and CER of one session's turns, by the metrics package's own functions."""
    found = session_scores(scores)
    if not found:
        return {"EX": "-", "SEM": "-", "CER": "-"}
    return {"EX": _fmt(found[0].ex), "SEM": str(found[0].sem), "CER": _fmt(cer(scores))}


def _cascade(scores: list[TurnScore], views: dict[int, TurnView]) -> None:
    """Mark each failed turn whose dependency failed too (what CER counts, CypherTurn §5.2)."""
    by_turn = {s.record.turn: s for s in scores}
    for s in scores:
        dep = s.record.depends_on
        if dep is not None and dep in by_turn and by_turn[dep].ex == 0 and s.ex == 0:
            views[s.record.turn].facts.append(
                f"cascade: turn {dep}, which it builds on, failed too"
            )


def _bench(path: Path, page: RunPage, n_resamples: int, sessions_file: dict[str, Session]) -> None:
    scores_path = path / SCORES_FILE
    records_path = path / RECORDS_FILE
    scored: list[TurnScore] = []
    records: list[TurnRecord] = []
    if scores_path.exists():
        scored = list(read_jsonl(scores_path, TurnScore))
        report = build_report([read_run(path)], n_resamples=n_resamples)
        page.tables = report.tables
    elif records_path.exists():
        records = list(read_jsonl(records_path, TurnRecord))
        page.notes.append(f"no {SCORES_FILE}: the turns are not scored")
    steps = _logged_steps(path, page)
    scores_of: dict[tuple[tuple[str, str, int, str, str], str], list[TurnScore]] = defaultdict(list)
    for s in scored:
        scores_of[(s.record.system, s.record.session_id)].append(s)
    rows: list[tuple[TurnRecord, TurnView]] = [(s.record, _score_turn(s)) for s in scored]
    rows += [(r, _record_turn(r)) for r in records]
    if not rows:
        # a run still in progress: only the logs' finished turns exist
        for log in sorted((path / _SESSIONS_DIR).glob("*.jsonl")):
            for event in read_log(log):
                if isinstance(event, TurnFinished):
                    rows.append((event.record, _record_turn(event.record)))
    sessions: dict[tuple[str, str, int, str, str], dict[str, list[tuple[TurnRecord, TurnView]]]]
    sessions = defaultdict(lambda: defaultdict(list))
    for record, view in rows:
        logged = steps.get((record.system, record.session_id, record.turn))
        if logged is not None:
            view.steps, end = logged
            view.facts.append(f"turn ended: {end}")
        _add_session_facts(view, record, sessions_file)
        sessions[record.system][record.session_id].append((record, view))
    if scored:
        page.item_columns = ["EX", "SEM", "CER"]
    for system in sorted(sessions):
        items = []
        for session_id in sorted(sessions[system]):
            turns = sorted(sessions[system][session_id], key=lambda rv: rv[0].turn)
            first = turns[0][0]
            views = [v for _, v in turns]
            correct = sum(not v.failed for v in views)
            session_turns = scores_of.get((system, session_id), [])
            _cascade(session_turns, {r.turn: v for r, v in turns})
            items.append(
                ItemView(
                    key=session_id,
                    world=first.graph,
                    persona=first.persona,
                    outcome=_outcome(views),
                    summary=f"{correct}/{len(views)} turns correct",
                    scores=_session_scores(session_turns) if scored else {},
                    turns=views,
                )
            )
        turns_total = sum(len(i.turns) for i in items)
        correct_total = sum(not t.failed for i in items for t in i.turns)
        page.groups.append(
            GroupView(
                label=system_label(system),
                summary=f"{len(items)} sessions, {correct_total}/{turns_total} turns correct",
                items=items,
            )
        )


# ---------------------------------------------------------------------- qer


def _qer(path: Path, page: RunPage, n_resamples: int) -> None:
    episodes = list(read_jsonl(path / ATTEMPTS_FILE, QerEpisode))
    page.tables = build_report([read_run(path)], n_resamples=n_resamples).tables
    transcripts: dict[tuple[str, str, str, str, str, int], StrategyResult] = {}
    transcripts_path = path / TRANSCRIPTS_FILE
    if transcripts_path.exists():
        for t in read_jsonl(transcripts_path, QerTranscript):
            key = (t.result.model, t.result.strategy, t.dataset, t.tier, t.question_id, t.run_index)
            transcripts[key] = t.result
    else:
        page.notes.append(f"no {TRANSCRIPTS_FILE}: attempts are shown without their queries")
    if not (path / MANIFEST_FILE).exists():
        page.meta.append(("engine", "not recorded: a QER run directory does not name its engine"))
    groups: dict[tuple[str, str, int, str, str], dict[str, list[TurnView]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for e in episodes:
        result = transcripts.get(
            (e.model, e.strategy, e.dataset, e.tier, e.question_id, e.run_index)
        )
        if result is not None:
            steps = _attempt_steps(result.attempts)
            title = result.question
            predicted = result.final_query
        else:
            steps = [
                StepView(
                    index=a.index,
                    action="attempt",
                    ok=a.outcome == "ok",
                    error_class=a.error_class.value if a.error_class else None,
                    observation=a.outcome,
                    notes=[f"{a.prompt_tokens}+{a.completion_tokens} tokens"],
                )
                for a in e.attempts
            ]
            title, predicted = e.question_id, ""
        solved = next((a.index for a in e.attempts if a.outcome == "ok"), None)
        turn = TurnView(
            number=e.run_index + 1,
            title=title,
            failed=solved is None,
            scores={"executable at": "-" if solved is None else str(solved)},
            predicted=predicted,
            facts=[f"run {e.run_index}, {len(e.attempts)} of {e.budget} attempts"],
            steps=steps,
        )
        groups[(e.model, e.strategy, e.budget, e.dataset, e.tier)][e.question_id].append(turn)
    for (model, strategy, budget, dataset, tier), questions in sorted(groups.items()):
        items = [
            ItemView(
                key=qid,
                world=dataset,
                outcome=_outcome(turns),
                summary=f"{sum(not t.failed for t in turns)}/{len(turns)} runs executable",
                turns=sorted(turns, key=lambda t: t.number),
            )
            for qid, turns in sorted(questions.items())
        ]
        page.groups.append(
            GroupView(label=f"{model} {strategy}@{budget} {dataset}/{tier}", items=items)
        )


# ---------------------------------------------------------------------- ask


class _AskLine(BaseModel):
    model: str
    strategy: str
    question_id: str
    dataset: str = ""
    tier: str = ""
    phenomena: list[str] = []
    executable: bool = False
    ex: int = 0
    ex_relaxed: int = 0
    attempts: int = 0
    tokens: int = 0
    seconds: float = 0.0
    final_query: str = ""
    error: str | None = None
    result: StrategyResult | None = None


def _answer_line(answer: AskAnswer) -> _AskLine:
    return _AskLine(
        model=answer.model,
        strategy=f"{answer.strategy}@{answer.budget} {answer.prompt}",
        question_id=answer.question_id,
        dataset=answer.graph,
        tier=answer.category,
        phenomena=answer.phenomena,
        executable=answer.executable,
        ex=answer.ex,
        ex_relaxed=answer.ex_relaxed,
        attempts=answer.attempts,
        tokens=answer.tokens,
        seconds=answer.seconds,
        final_query=answer.final_query,
        error=answer.error,
        result=StrategyResult.model_validate(answer.result) if answer.result else None,
    )


def _ask(path: Path, page: RunPage) -> None:
    if (path / ANSWERS_FILE).exists():
        answers = list(read_jsonl(path / ANSWERS_FILE, AskAnswer))
        _ask_lines(page, [_answer_line(a) for a in answers])
        page.tables = ask_tables(answers, n_resamples=1_000)[:1]
        return
    lines: list[_AskLine] = []
    records = path / RECORDS_FILE
    with records.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                lines.append(_AskLine.model_validate_json(line))
            except ValidationError as e:
                raise DatasetError(
                    f"{records}:{number}: {validation_problem(e, 'ask record')}"
                ) from e
    _ask_lines(page, lines)


def _ask_lines(page: RunPage, lines: list[_AskLine]) -> None:
    groups: dict[tuple[str, str], list[_AskLine]] = defaultdict(list)
    for ask_line in lines:
        groups[(ask_line.model, ask_line.strategy)].append(ask_line)
    table = Table(
        name="ask",
        title="Ask accuracy per model and strategy",
        columns=[
            "Model",
            "Strategy",
            "Questions",
            "EX",
            "rEX",
            "Executable",
            "Attempts",
            "Seconds",
        ],
        notes="Means over the questions; EX and rEX against the gold query's rows.",
    )
    for (model, strategy), group in sorted(groups.items()):
        table.rows.append(
            [
                model,
                strategy,
                len(group),
                fmean(g.ex for g in group),
                fmean(g.ex_relaxed for g in group),
                fmean(float(g.executable) for g in group),
                fmean(g.attempts for g in group),
                fmean(g.seconds for g in group),
            ]
        )
        items = []
        for g in sorted(group, key=lambda g: g.question_id):
            turn = TurnView(
                number=1,
                title=g.result.question if g.result is not None else g.question_id,
                phenomenon=", ".join(g.phenomena),
                failed=g.ex_relaxed == 0,
                scores={"EX": str(g.ex), "rEX": str(g.ex_relaxed)},
                predicted=g.final_query,
                error=g.error or "",
                facts=[
                    f"tier {g.tier}",
                    f"{g.attempts} attempts, {g.tokens} tokens, {g.seconds:.1f} s",
                ],
                steps=_attempt_steps(g.result.attempts) if g.result is not None else [],
            )
            items.append(
                ItemView(
                    key=g.question_id,
                    world=g.dataset,
                    outcome="failed" if turn.failed else "correct",
                    turns=[turn],
                )
            )
        page.groups.append(GroupView(label=f"{model} {strategy}", items=items))
    page.tables = [table]
