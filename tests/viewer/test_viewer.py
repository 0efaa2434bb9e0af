"""`cypherturn view` on real run directories: a scored bench run with action logs, a QER run, an ask run.

The bench run is produced by the real ``bench build`` and ``bench run`` on the
embedded FalkorDB with a replay model whose queries carry HTML (``<script>``),
so the page must escape model output. Pages are checked with the standard
library's HTML parser: every session and turn is there, the markup nests, no
external URL is referenced, and no model text reaches the page unescaped.
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cypherturn import api
from cypherturn.cli import main
from cypherturn.cli._bench import bench_app
from cypherturn.graph import EmbeddedFalkorDB, GraphEngine, open_engine
from cypherturn.models import ReplayChatModel
from cypherturn.records import (
    ATTEMPTS_FILE,
    SCORES_FILE,
    QerEpisode,
    QueryAttempt,
    TurnScore,
    read_jsonl,
    write_jsonl,
)
from cypherturn.sessions import read_sessions
from cypherturn.viewer import page_server, read_page, render_page

INJECTED = "MATCH (s:Student) RETURN '<script>alert(1)</script>' AS x LIMIT 1"
_VOID = {"meta", "br", "input", "img", "hr", "link"}


class _Page(HTMLParser):
    """Collects tags, attributes, text, and whether every element was closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.items: list[dict[str, str | None]] = []
        self.turns = 0
        self.urls: list[str] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("src", "href", "action"):
            if found.get(name):
                self.urls.append(str(found[name]))
        if tag == "details" and "item" in (found.get("class") or ""):
            self.items.append(found)
        if tag == "div" and "turn" in (found.get("class") or "").split():
            self.turns += 1
        if tag == "script":
            self._in_script = True
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)


def _parse(html: str) -> _Page:
    parser = _Page()
    parser.feed(html)
    parser.close()
    assert parser.errors == [] and parser.stack == [], (parser.errors, parser.stack)
    return parser


@pytest.fixture(scope="module")
def bench_run(
    embedded_server: EmbeddedFalkorDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A real guided bench run of 2 magic_academy sessions: each turn runs a query, then submits."""
    tmp = tmp_path_factory.mktemp("viewer-bench")
    cli = typer.Typer()
    cli.add_typer(bench_app)
    runner = CliRunner()
    bench = tmp / "bench.jsonl"
    built = runner.invoke(
        cli, ["bench", "build", "--worlds", "magic_academy", "-n", "2", "--out", str(bench)]
    )
    assert built.exit_code == 0, built.output
    lines = []
    for session in read_sessions(bench):
        for number, turn in enumerate(session.turns):
            # odd turns submit a wrong query, so the page has failed turns to filter
            submitted = turn.gold_cypher if number % 2 == 0 else INJECTED
            for action, payload in (("EXECUTE_CYPHER", INJECTED), ("SUBMIT_ANSWER", submitted)):
                lines.append(json.dumps(json.dumps({"action": action, "input": payload})))
    replies = tmp / "replies.jsonl"
    replies.write_text("\n".join(lines), encoding="utf-8")
    out = tmp / "run"
    ran = runner.invoke(
        cli,
        ["bench", "run", str(bench), "--out", str(out), "--model", f"replay:{replies}",
         "--protocol", "guided", "--concurrency", "1"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    yield out
    for graph in ("cypherturn_bench_magic_academy", "cypherturn_run_magic_academy_s0_x1"):
        engine = open_engine(None, graph)
        engine.drop()
        engine.close()


def test_bench_page_shows_every_session_turn_and_action_escaped(bench_run: Path) -> None:
    scores = list(read_jsonl(bench_run / SCORES_FILE, TurnScore))
    page = read_page(bench_run)
    html = render_page(page)
    parsed = _parse(html)

    sessions = {s.record.session_id for s in scores}
    assert {item["data-key"] for item in parsed.items} == sessions
    assert parsed.turns == len(scores)
    assert page.tables and page.tables[0].name == "main"
    # the EX of the summary table is the mean of the turn scores shown below it
    assert any(f"{sum(s.ex for s in scores) / len(scores):.3f}" in t for t in parsed.text)

    steps = [s for g in page.groups for i in g.items for t in i.turns for s in t.steps]
    assert [s.action for s in steps[:2]] == ["EXECUTE_CYPHER", "SUBMIT_ANSWER"]
    assert len(steps) == 2 * len(scores)
    failed = [t for g in page.groups for i in g.items for t in i.turns if t.failed]
    assert 0 < len(failed) < len(scores)
    assert html.count('data-failed="1"') == len(failed)

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert any("<script>alert(1)</script>" in t for t in parsed.text)  # shown, as text
    assert len(parsed.scripts) == 1 and "alert" not in parsed.scripts[0]
    assert parsed.urls == []
    assert "http://" not in html and "https://" not in html


def test_cli_writes_pages_and_rejects_a_non_run(
    bench_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pages"
    code = _run(["view", str(bench_run), "--out", str(out)])
    written = sorted(out.glob("*.html"))
    assert code == 0 and [p.name for p in written] == ["1-run.html"]
    _parse(written[0].read_text(encoding="utf-8"))

    empty = tmp_path / "empty"
    empty.mkdir()
    code = _run(["view", str(empty)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and "is not a run directory" in err and "Traceback" not in err


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


def test_qer_page_shows_attempts_per_question(tmp_path: Path) -> None:
    episodes = [
        QerEpisode(
            strategy=strategy,
            dataset="pole",
            tier="easy",
            model="coder",
            run_index=run,
            question_id=f"q{q}",
            budget=3,
            attempts=[
                QueryAttempt(
                    index=i + 1,
                    outcome="ok" if i == q + run else "error",
                    error_class=None if i == q + run else "syntax",
                )
                for i in range(min(q + run + 1, 3))
            ],
        )
        for strategy in ("is", "ras")
        for q in range(3)
        for run in range(2)
    ]
    write_jsonl(tmp_path / ATTEMPTS_FILE, episodes)
    page = read_page(tmp_path)
    parsed = _parse(render_page(page))
    assert page.kind == "qer" and [g.label for g in page.groups] == [
        "coder is@3 pole/easy",
        "coder ras@3 pole/easy",
    ]
    assert len(parsed.items) == 6 and parsed.turns == len(episodes)
    runs = [t for g in page.groups for i in g.items for t in i.turns]
    assert [len(t.steps) for t in runs] == [len(e.attempts) for e in sorted(
        episodes, key=lambda e: (e.strategy, e.question_id, e.run_index))]  # fmt: skip
    assert sum(t.failed for t in runs) == 2  # q2 run 1 never executes within 3 attempts


def test_served_pages(bench_run: Path) -> None:
    server = page_server([read_page(bench_run)], "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        with urllib.request.urlopen(f"http://{host!s}:{port}/", timeout=10) as response:
            index = response.read().decode()
        assert "1-run.html" in index
        with urllib.request.urlopen(f"http://{host!s}:{port}/1-run.html", timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/html")
            _parse(response.read().decode())
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://{host!s}:{port}/../etc/passwd", timeout=10)
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_ask_accuracy_page_shows_each_question_and_attempt(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    engine = make_engine("viewer_ask")
    engine.write("CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'})")
    model = ReplayChatModel(["MATCH (p:Person RETURN p", "MATCH (p:Person) RETURN count(p) AS n"])
    result = api.ask("How many people?", graph=engine.graph, strategy="ras", model=model)
    record = {
        "model": "replay", "strategy": "ras", "question_id": "q1", "dataset": "people",
        "tier": "easy", "phenomena": ["aggregation"], "executable": True, "ex": 1,
        "ex_relaxed": 1, "attempts": result.attempts_used, "tokens": result.total_tokens,
        "seconds": 0.1, "final_query": result.final_query, "error": None,
        "result": result.model_dump(mode="json"),
    }  # fmt: skip
    (tmp_path / "records.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    page = read_page(tmp_path)
    parsed = _parse(render_page(page))
    assert page.kind == "ask" and len(parsed.items) == 1 and parsed.turns == 1
    steps = page.groups[0].items[0].turns[0].steps
    assert [(s.ok, s.error_class) for s in steps] == [(False, "syntax"), (True, None)]
    assert page.tables[0].rows[0][:4] == ["replay", "ras", 1, 1.0]
