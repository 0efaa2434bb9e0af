"""The API verbs the CLI wraps, called directly on the real embedded engine with replay models.

Each verb takes its config object; these tests check what the verb returns and writes,
not what the CLI prints (tests/cli, tests/sessions, tests/runner and tests/experiments
check the commands' output on the same verbs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cypherturn import api
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments import QerRunConfig, question_set_digest
from cypherturn.experiments import load_question_set as packaged_set
from cypherturn.graph import EmbeddedFalkorDB, open_engine
from cypherturn.records import ATTEMPTS_FILE, SCORES_FILE, TurnScore, read_jsonl
from cypherturn.runner import SessionResult
from cypherturn.sessions import Session, read_official, read_sessions

RELEASE = Path(__file__).parents[1] / "sessions" / "official"


@pytest.fixture
def bench_graphs(embedded_server: EmbeddedFalkorDB) -> Iterator[None]:
    yield
    for graph in ("cypherturn_bench_magic_academy", "cypherturn_run_magic_academy_s0_x1"):
        engine = open_engine(None, graph)
        engine.drop()
        engine.close()


def _gold_replies(path: Path, sessions: list[Session]) -> str:
    """A replay model submitting each turn's gold query at once."""
    actions = [
        {"action": "SUBMIT_ANSWER", "input": t.gold_cypher} for s in sessions for t in s.turns
    ]
    path.write_text("\n".join(json.dumps(json.dumps(a)) for a in actions), encoding="utf-8")
    return f"replay:{path}"


def test_build_then_run_a_benchmark(bench_graphs: None, tmp_path: Path) -> None:
    planned: list[int] = []
    built_ids: list[str] = []
    config = api.BenchBuildConfig(worlds=["magic_academy"], sessions=2, out=tmp_path / "b.jsonl")
    built = api.build_benchmark(
        config, on_start=planned.append, on_session=lambda s: built_ids.append(s.session_id)
    )
    on_disk = read_sessions(config.out)
    assert planned == [2] and [s.session_id for s in on_disk] == built_ids
    assert on_disk == built.sessions and built.stats.sessions == 2
    assert built.stats.turns == sum(len(s.turns) for s in on_disk) and built.report.queries > 0
    assert api.bench_stats(config.out) == built.stats
    assert api.bench_session(config.out, built_ids[1]) == on_disk[1]
    with pytest.raises(DatasetError, match="no session"):
        api.bench_session(config.out, "nope")

    run = api.BenchRunConfig(
        benchmark=config.out,
        out_dir=tmp_path / "run",
        model=_gold_replies(tmp_path / "replies.jsonl", on_disk),
        release_root=tmp_path,
    )
    plans: list[api.BenchPlan] = []
    finished: list[SessionResult] = []
    scores: list[TurnScore] = []
    summary = api.run_benchmark(
        run, on_start=plans.append, on_session=finished.append, on_scores=scores.extend
    )
    (plan,) = plans
    assert plan.sessions == on_disk and plan.turns == built.stats.turns
    assert plan.release_ignored  # generated sessions do not use a release root
    assert (summary.completed, summary.played, summary.turns) == (2, 2, built.stats.turns)
    assert len(finished) == 2 and scores and all(s.ex == 1.0 for s in scores if s.valid)
    assert len(list(read_jsonl(run.out_dir / SCORES_FILE, TurnScore))) == built.stats.turns
    again = api.run_benchmark(run)
    assert (again.resumed, again.played) == (2, 0)
    with pytest.raises(ConfigError, match="unknown protocol"):
        api.run_benchmark(run.model_copy(update={"protocol": "nonsense"}))


def test_import_the_official_release(embedded_server: EmbeddedFalkorDB, tmp_path: Path) -> None:
    source = RELEASE / "data" / "scenarios" / "tiny_sessions.json"
    out = tmp_path / "official.jsonl"
    result = api.import_benchmark(api.BenchImportConfig(paths=[source], out=out))
    assert [len(s.turns) for s in result.sessions] == [6, 3]
    assert read_sessions(out) == result.sessions
    (report,) = result.reports
    assert report.turns == 9
    assert report.reproduced + report.nondeterministic + report.differs + report.errors == 9
    unchecked = api.import_benchmark(api.BenchImportConfig(paths=[source], out=out, check=False))
    assert unchecked.reports == []
    # the checked import labels each turn; the sessions are otherwise the same
    unlabelled = [
        s.model_copy(
            update={"turns": [t.model_copy(update={"import_check": None}) for t in s.turns]}
        )
        for s in result.sessions
    ]
    assert unchecked.sessions == unlabelled
    with pytest.raises(ConfigError, match="needs --check"):
        api.import_benchmark(api.BenchImportConfig(paths=[source], check=False, gold="engine"))
    with pytest.raises(ConfigError, match="official or engine"):
        api.import_benchmark(api.BenchImportConfig(paths=[source], gold="mine"))


def test_engine_golds_keep_integer_sums(embedded_server: EmbeddedFalkorDB, tmp_path: Path) -> None:
    source = RELEASE / "data" / "scenarios" / "tiny_sessions.json"
    result = api.import_benchmark(
        api.BenchImportConfig(paths=[source], out=tmp_path / "engine.jsonl", gold="engine")
    )
    (summed,) = [t for s in result.sessions for t in s.turns if "SUM(n.points)" in t.gold_cypher]
    # FalkorDB returns the sum of integer points as a float; the stored gold is Neo4j's integer
    ((total,),) = summed.gold_result.rows
    assert isinstance(total, int) and not isinstance(total, bool)
    # a gold the engine rejects keeps the released answer, and its label says why
    ((owner, broken),) = [
        (s.session_id, t)
        for s in result.sessions
        for t in s.turns
        if "(n:Student WHERE" in t.gold_cypher
    ]
    assert broken.import_check is not None and broken.import_check.status == "error"
    released = {
        (s.session_id, t.turn_index): t.gold_result for s in read_official(source) for t in s.turns
    }
    assert broken.gold_result == released[(owner, broken.turn_index)]


def test_qer_run_report_and_questions(embedded_server: EmbeddedFalkorDB, tmp_path: Path) -> None:
    bad = "```cypher\nMATCH (c:Client RETURN c.name\n```"
    good = "```cypher\nMATCH (c:Client) RETURN c.name LIMIT 3\n```"
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([bad, good] * 4), encoding="utf-8")
    experiment = QerRunConfig(
        datasets=["fraud"],
        tiers=["easy", "hard"],
        strategies=["is", "ras"],
        model=f"replay:{replies}",
        budget=2,
        runs=1,
        temperature=0.9,
        questions_per_tier=1,
    )
    run = api.QerRun(experiment=experiment, out_dir=tmp_path / "qer")
    started: list[tuple[QerRunConfig, int, int]] = []
    summary = api.run_qer(run, on_start=lambda c, t, d: started.append((c, t, d)))
    ((recorded, total, done),) = started
    assert (summary.planned, summary.ran, summary.skipped) == (4, 4, 0) and (total, done) == (4, 0)
    # the digests are filled in from the packaged sets, the loaded model's spec is recorded
    assert recorded.question_sets == {"fraud": question_set_digest(packaged_set("fraud"))}
    assert recorded.model == f"replay:{replies}"
    assert len((run.out_dir / ATTEMPTS_FILE).read_text().splitlines()) == 4
    assert api.run_qer(run).skipped == 4
    with pytest.raises(ConfigError):
        api.run_qer(
            run.model_copy(update={"experiment": experiment.model_copy(update={"runs": 2})})
        )
    with pytest.raises(ConfigError):
        api.run_qer(
            api.QerRun(
                experiment=experiment.model_copy(update={"strategies": ["nope"]}),
                out_dir=tmp_path / "other",
            )
        )
    # the experiment's context window is the model's: a different model option is refused,
    # and a replay model, which has no window, refuses the option when it is loaded
    windowed = experiment.model_copy(update={"n_ctx": 8192})
    with pytest.raises(ConfigError, match="n_ctx 8192 and the model option n_ctx 4096"):
        api.run_qer(
            api.QerRun(experiment=windowed, out_dir=tmp_path / "w", model_options={"n_ctx": 4096})
        )
    with pytest.raises(ConfigError, match="n_ctx"):
        api.run_qer(api.QerRun(experiment=windowed, out_dir=tmp_path / "w"))

    shown = api.qer_report(api.QerReportConfig(run_dir=run.out_dir, qer_n=2))
    assert shown.written[0].is_file() and shown.written[0].parent == run.out_dir / "report"
    assert {"qer", "qer_answers"} <= {t.name for t in shown.report.tables}
    assert shown.answers.missing_transcripts == 0
    reported = api.report(api.ReportConfig(run_dirs=[run.out_dir], out=tmp_path / "r", qer_n=2))
    assert reported.written[0].parent == tmp_path / "r"
    assert "qer" in {t.name for t in reported.report.tables}

    checked = api.qer_questions(api.QerQuestionsConfig(datasets=["fraud"], validate_sets=True))
    assert checked.problems == {"fraud": []} and checked.written == []
    assert checked.sets["fraud"] == packaged_set("fraud")
    with pytest.raises(ConfigError, match="--out"):
        api.qer_questions(api.QerQuestionsConfig(datasets=["fraud"], regenerate=True))


def test_run_ask_takes_its_config(embedded_server: EmbeddedFalkorDB, tmp_path: Path) -> None:
    replies = tmp_path / "ask.json"
    replies.write_text(json.dumps(["```cypher\nMATCH (c:Client) RETURN count(c) AS n\n```"]))
    config = api.AskConfig(graph="fraud", strategy="single", budget=1, model=f"replay:{replies}")
    result = api.run_ask("How many clients are there?", config)
    assert result.success and result.final_result is not None
    (count,) = result.final_result.rows[0]
    engine = open_engine(None, "fraud")
    try:
        assert count == engine.execute("MATCH (c:Client) RETURN count(c)").rows[0][0] > 0
    finally:
        engine.close()
    # the keyword form is the same call
    same = api.ask(
        "How many clients are there?",
        graph="fraud",
        strategy="single",
        budget=1,
        model=f"replay:{replies}",
    )
    assert same.final_result is not None and same.final_result.rows == result.final_result.rows


def test_ask_and_chat_configs_give_the_same_strategy_settings() -> None:
    settings = {"budget": 3, "seed": 7, "timeout_s": 2.5, "row_cap": 9, "prompt_version": "v1"}
    ask_config = api.AskConfig(temperature=0.2, **settings)
    chat_config = api.ChatConfig(temperature=0.2, **settings)
    assert chat_config.strategy_config() == ask_config.strategy_config()
    chosen = ask_config.strategy_config()
    assert (chosen.budget, chosen.seed, chosen.timeout_s, chosen.row_cap) == (3, 7, 2.5, 9)
    assert (chosen.temperature, chosen.prompt_version) == (0.2, "v1")
    # unset temperature and prompt version leave the strategy's own defaults
    defaults = api.AskConfig().strategy_config()
    assert defaults.temperature == 0.9 and defaults.prompt_version is not None
    # chat checks its budget and refuses unknown settings, as ask refuses unknown ones
    with pytest.raises(ValueError, match="budget"):
        api.ChatConfig(budget=0)
    for config in (api.AskConfig, api.ChatConfig):
        with pytest.raises(ValueError, match="budgett"):
            config(budgett=2)  # type: ignore[call-arg]
