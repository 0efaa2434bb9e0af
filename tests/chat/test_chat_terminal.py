"""`cypherturn chat` driven through a real terminal: tmux `send-keys` in, `capture-pane` out.

The command runs in a tmux pane as a user would run it, on the session's
embedded FalkorDB with a replay model (``--model replay:FILE``). The test
types questions and commands, reads the screen, and checks the guarantees:
``/cypher`` shows the query that ran (the one the transcript records), the
answer's numbers come from the rows, ``/rows`` shows those rows, and the
transcript saved on disk reloads with ``--resume`` with the same turns.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cypherturn.answers import unsupported_numbers
from cypherturn.chat import read_transcript
from cypherturn.cli._chat import PROMPT
from cypherturn.graph import GraphEngine

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed: the terminal test needs it"
)

PER_CITY = (
    "MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN c.name AS city, count(p) AS people ORDER BY city"
)
OLD_LONDONERS = (
    "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'London'}) WHERE p.born < 1900 "
    "RETURN p.name AS name, p.born AS born"
)
NEW_YORKERS = "MATCH (p:Person)-[:LIVES_IN]->(c:City {name: 'New York'}) RETURN p.name AS name, p.born AS born"
SUMMARY = "/cypher /rows /explain"


class Pane:
    """One tmux pane on a private tmux server (its own socket), closed by :meth:`kill`."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"cypherturn-test-{uuid.uuid4().hex[:8]}"
        self._tmux(
            "new-session", "-d", "-s", "chat", "-x", "220", "-y", "60",
            *[arg for key, value in env.items() for arg in ("-e", f"{key}={value}")],
            "bash --norc --noprofile",
        )  # fmt: skip

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def type(self, text: str) -> None:
        """Type ``text`` literally, then Enter."""
        self._tmux("send-keys", "-t", "chat", "-l", text)
        self._tmux("send-keys", "-t", "chat", "Enter")

    def screen(self) -> str:
        """Everything the pane shows, scrollback included, without colours."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "chat", "-S", "-")

    def wait_for(self, text: str, count: int = 1, timeout_s: float = 90.0) -> str:
        """Wait until ``text`` appears ``count`` times on the screen; return the screen."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            screen = self.screen()
            if screen.count(text) >= count:
                return screen
            time.sleep(0.2)
        raise AssertionError(
            f"{text!r} x{count} not on screen after {timeout_s} s:\n{self.screen()}"
        )

    def kill(self) -> None:
        """Stop the private tmux server and everything running in it."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def town(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("tmux")
    engine.write(
        "CREATE (ada:Person {name: 'Ada Lovelace', born: 1815}),"
        " (alan:Person {name: 'Alan Turing', born: 1912}),"
        " (grace:Person {name: 'Grace Hopper', born: 1906}),"
        " (london:City {name: 'London'}), (ny:City {name: 'New York'}),"
        " (ada)-[:LIVES_IN]->(london), (alan)-[:LIVES_IN]->(london),"
        " (grace)-[:LIVES_IN]->(ny)"
    )
    return engine


@pytest.fixture
def pane(cypherturn_home: Path) -> Iterator[Pane]:
    env = {
        "CYPHERTURN_HOME": str(cypherturn_home),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "TERM": "xterm-256color",
        "COLUMNS": "220",
    }
    opened = Pane(env)
    try:
        yield opened
    finally:
        opened.kill()


def _replay(path: Path, *responses: str) -> str:
    path.write_text(json.dumps(list(responses)))
    return f"replay:{path}"


def _chat_command(engine: GraphEngine, model: str, *extra: str) -> str:
    args = [sys.executable, "-m", "cypherturn", "chat", "--graph", engine.graph, "-n", "2"]
    return shlex.join([*args, "--model", model, *extra])


def test_a_conversation_in_a_real_terminal(town: GraphEngine, pane: Pane, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    model = _replay(
        tmp_path / "first.json",
        PER_CITY,
        "London has 2 people and New York has 1.",
        OLD_LONDONERS,
        "Ada Lovelace, born in 1815, is the only one.",
    )
    pane.type(_chat_command(town, model, "--out", str(out)))
    pane.wait_for(PROMPT)

    pane.type("How many people live in each city?")
    screen = pane.wait_for(SUMMARY)
    assert "London has 2 people and New York has 1." in screen

    pane.type("/cypher")
    screen = pane.wait_for(PROMPT, count=3)
    assert PER_CITY in screen

    pane.type("Which of those in London were born before 1900?")
    screen = pane.wait_for(SUMMARY, count=2)
    assert "Ada Lovelace, born in 1815, is the only one." in screen

    pane.type("/rows")
    pane.type("/cypher")
    screen = pane.wait_for(PROMPT, count=6)
    tail = screen[screen.rindex("Which of those") :]
    assert "Ada Lovelace" in tail and "1815" in tail and "1 rows" in tail
    assert OLD_LONDONERS in tail

    pane.type("What will the weather be tomorrow?")
    screen = pane.wait_for("this graph cannot answer that:")

    pane.type("/help")
    pane.wait_for("/explain [N]")
    pane.type("/quit")
    screen = pane.wait_for("transcript saved:")

    [saved] = list(out.glob("chat-*.json"))
    transcript = read_transcript(saved)
    assert [t.question for t in transcript.turns] == [
        "How many people live in each city?",
        "Which of those in London were born before 1900?",
        "What will the weather be tomorrow?",
    ]
    # what /cypher showed is the query that ran, and its rows are what the answer cites
    first, second, third = transcript.turns
    assert (first.query, second.query, third.query) == (PER_CITY, OLD_LONDONERS, None)
    assert PER_CITY in second.asked
    for turn in (first, second):
        assert turn.result is not None and turn.answer is not None
        assert town.execute(turn.query or "").rows == turn.result.rows
        assert unsupported_numbers(turn.answer.text, turn.result, turn.question) == []
    assert third.outcome == "out_of_scope"

    # resume: the earlier turns come back as they were and are the context of the next one
    again = _replay(tmp_path / "second.json", NEW_YORKERS, "Grace Hopper, born 1906.")
    pane.type(_chat_command(town, again, "--resume", str(saved)))
    screen = pane.wait_for("resumed 3 turns")
    pane.type("And who lives in New York?")
    screen = pane.wait_for(SUMMARY, count=3)
    assert "Grace Hopper, born 1906." in screen
    pane.type("/quit")
    pane.wait_for("transcript saved:", count=2)
    resumed = read_transcript(saved)
    assert [t.model_dump() for t in resumed.turns[:3]] == [t.model_dump() for t in transcript.turns]
    assert len(resumed.turns) == 4 and resumed.turns[3].query == NEW_YORKERS
    assert OLD_LONDONERS in resumed.turns[3].asked
