"""`cypherturn view` on real run directories: a scored bench run with action logs, a QER run, an ask run.

The bench and QER runs are produced by the real runners on the embedded
FalkorDB with replay models (``conftest.py``); the bench run's queries carry
HTML (``<script>``), so the page must escape model output. Pages are checked
with the standard library's HTML parser: every session and turn is there, the
markup nests, no external URL is referenced, and no model text reaches the page
unescaped. The same pages in a real browser: ``test_browser.py``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from viewer_pages import BenchRun, parse

from cypherturn import api
from cypherturn.cli import main
from cypherturn.experiments import TRANSCRIPTS_FILE, QerTranscript
from cypherturn.graph import GraphEngine
from cypherturn.metrics import cer, session_scores
from cypherturn.models import ReplayChatModel
from cypherturn.records import ATTEMPTS_FILE, SCORES_FILE, QerEpisode, TurnScore, read_jsonl
from cypherturn.sessions import read_sessions
from cypherturn.viewer import page_server, read_page, render_page


def test_bench_page_shows_every_session_turn_and_action_escaped(bench_run: BenchRun) -> None:
    scores = list(read_jsonl(bench_run.run / SCORES_FILE, TurnScore))
    page = read_page(bench_run.run, bench=bench_run.bench)
    html = render_page(page)
    parsed = parse(html)

    sessions = {s.record.session_id for s in scores}
    assert {item["data-key"] for item in parsed.items} == sessions
    assert parsed.turns == len(scores)
    assert page.tables and page.tables[0].name == "main"
    # the EX of the summary table is the mean of the turn scores shown below it
    assert any(f"{sum(s.ex for s in scores) / len(scores):.3f}" in t for t in parsed.text)
    meta = dict(page.meta)
    assert meta["engine (magic_academy)"].startswith("FalkorDB ")
    assert meta["metric definitions"].isdigit() and meta["models"].startswith("replay:")

    steps = [s for g in page.groups for i in g.items for t in i.turns for s in t.steps]
    assert [s.action for s in steps[:2]] == ["EXECUTE_CYPHER", "SUBMIT_ANSWER"]
    assert len(steps) == 2 * len(scores)
    failed = [t for g in page.groups for i in g.items for t in i.turns if t.failed]
    assert 0 < len(failed) < len(scores)
    assert html.count('data-failed="1"') == len(failed)

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert any("<script>alert(1)</script>" in t for t in parsed.text)  # shown, as text
    assert len(parsed.scripts) == 2 and not any("alert" in s for s in parsed.scripts)
    assert parsed.urls == []
    assert "http://" not in html and "https://" not in html


def test_bench_turns_carry_the_metric_verdicts_the_utterance_and_the_gold_rows(
    bench_run: BenchRun,
) -> None:
    scores = list(read_jsonl(bench_run.run / SCORES_FILE, TurnScore))
    sessions = {s.session_id: s for s in read_sessions(bench_run.bench)}
    page = read_page(bench_run.run, bench=bench_run.bench)
    items = {i.key: i for g in page.groups for i in g.items}
    assert page.item_columns == ["EX", "SEM", "CER"]
    for key, item in items.items():
        mine = [s for s in scores if s.record.session_id == key]
        expected = session_scores(mine)[0]
        rate = cer(mine)
        assert item.scores == {
            "EX": f"{expected.ex:.3f}",
            "SEM": str(expected.sem),
            "CER": "-" if rate is None else f"{rate:.3f}",
        }
        for turn, score in zip(item.turns, sorted(mine, key=lambda s: s.record.turn), strict=True):
            assert turn.scores["EX"] == str(score.ex) and turn.scores["rEX"] == str(
                score.ex_relaxed
            )
            assert {"PSJS", "PSJS-out", "rEX⊆"} <= set(turn.scores)
            gold = sessions[key].turns[score.record.turn - 1]
            assert turn.question == gold.utterance
            assert turn.gold_result is not None
            assert turn.gold_result.total == gold.gold_result.row_count
            assert turn.gold_result.columns == gold.gold_result.columns
    # without the benchmark file the turns have neither (the run directory does not hold them)
    bare = read_page(bench_run.run)
    assert all(not t.question and t.gold_result is None
               for g in bare.groups for i in g.items for t in i.turns)  # fmt: skip


def _run(args: list[str]) -> int:
    old = sys.argv
    sys.argv = ["cypherturn", *args]
    try:
        main()
        return 0
    except SystemExit as e:
        return int(e.code or 0)
    finally:
        sys.argv = old


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr: one ``error:`` message, no traceback, whitespace removed
    (the console wraps long lines, paths included)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 1, err
    return "".join(err.split())


def test_cli_writes_pages_and_rejects_bad_input(
    bench_run: BenchRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pages"
    code = _run(["view", str(bench_run.run), "--out", str(out)])
    written = sorted(out.glob("*.html"))
    assert code == 0 and [p.name for p in written] == ["1-run.html"]
    parse(written[0].read_text(encoding="utf-8"))

    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(["view", str(empty)]) == 1
    assert "isnotarundirectory" in _error_line(capsys)

    assert _run(["view", str(tmp_path / "missing")]) == 1
    assert "doesnotexist" in _error_line(capsys)

    # a corrupt line: named with its file and line number, as every run reader does
    broken = tmp_path / "broken"
    broken.mkdir()
    lines = (bench_run.run / SCORES_FILE).read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][: len(lines[3]) // 2]
    (broken / SCORES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _run(["view", str(broken), "--out", str(tmp_path / "none")]) == 1
    assert f"{broken / SCORES_FILE}:4:" in _error_line(capsys)
    assert not (tmp_path / "none").exists()

    assert _run(["view", str(bench_run.run), "--bench", str(tmp_path / "nope.jsonl")]) == 1
    assert "nope.jsonl" in _error_line(capsys)


def test_serve_on_a_busy_port_is_one_error_line(
    bench_run: BenchRun, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert _run(["view", str(bench_run.run), "--serve", "--port", str(port)]) == 1
    assert f"cannotlistenon127.0.0.1:{port}" in _error_line(capsys)


def test_qer_page_shows_attempts_per_question(qer_run: Path) -> None:
    episodes = list(read_jsonl(qer_run / ATTEMPTS_FILE, QerEpisode))
    transcripts = list(read_jsonl(qer_run / TRANSCRIPTS_FILE, QerTranscript))
    page = read_page(qer_run)
    parsed = parse(render_page(page))
    assert page.kind == "qer"
    assert [g.label for g in page.groups] == ["replay:<memory> is@2 fraud/easy",
                                              "replay:<memory> ras@2 fraud/easy"]  # fmt: skip
    questions = {e.question_id for e in episodes}
    assert len(parsed.items) == 2 * len(questions) and parsed.turns == len(episodes)
    runs = [t for g in page.groups for i in g.items for t in i.turns]
    assert all(not t.failed for t in runs)  # attempt 2 executes in every episode
    for turn in runs:
        first, second = turn.steps
        assert (first.ok, first.error_class, second.ok) == (False, "syntax", True)
        assert "MATCH (c:Client RETURN c.name" in first.query and first.observation
        assert second.query.startswith("MATCH (c:Client) RETURN c.name")
        assert second.observation == f"{second.rows} rows"
    assert {t.result.question for t in transcripts} == {t.title for t in runs}
    assert ("engine", "not recorded: a QER run directory does not name its engine") in page.meta
    assert any(name == "configuration (qer.json)" for name, _ in page.meta)


def test_served_pages(bench_run: BenchRun) -> None:
    server = page_server([read_page(bench_run.run)], "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        with urllib.request.urlopen(f"http://{host!s}:{port}/", timeout=10) as response:
            index = response.read().decode()
        assert "1-run.html" in index
        with urllib.request.urlopen(f"http://{host!s}:{port}/1-run.html", timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/html")
            parse(response.read().decode())
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://{host!s}:{port}/../etc/passwd", timeout=10)
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_ask_accuracy_page_shows_each_question_attempt_and_repair(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    engine = make_engine("viewer_ask")
    engine.write("CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'})")
    # `!=` is repaired to `<>` by ras+ (recorded on the attempt), then the query runs
    query = "MATCH (p:Person) WHERE p.name != 'Bob' RETURN count(p) AS n"
    model = ReplayChatModel([query] * 5)
    result = api.ask("How many people?", graph=engine.graph, strategy="ras+", model=model)
    record = {
        "model": "replay", "strategy": "ras+", "question_id": "q1", "dataset": "people",
        "tier": "easy", "phenomena": ["aggregation"], "executable": True, "ex": 1,
        "ex_relaxed": 1, "attempts": result.attempts_used, "tokens": result.total_tokens,
        "seconds": 0.1, "final_query": result.final_query, "error": None,
        "result": result.model_dump(mode="json"),
    }  # fmt: skip
    (tmp_path / "records.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    page = read_page(tmp_path)
    parsed = parse(render_page(page))
    assert page.kind == "ask" and len(parsed.items) == 1 and parsed.turns == 1
    steps = page.groups[0].items[0].turns[0].steps
    assert steps and steps[0].ok and "<>" in steps[0].query
    assert any(n.startswith("repaired ") for n in steps[0].notes), steps[0].notes
    assert any(n == f"model wrote: {query}" for n in steps[0].notes)
    assert page.tables[0].rows[0][:4] == ["replay", "ras+", 1, 1.0]
