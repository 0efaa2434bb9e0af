"""`chat` and `ask` stop promptly on Ctrl-C or SIGTERM, with a query or a model call in flight (issue 43).

Each command is a real child process on a pseudo-terminal (:mod:`terminal`),
with its own ``CYPHERTURN_HOME`` and so its own embedded FalkorDB, which must be
gone after the exit together with its watchdog; a command on a server another
process holds a lease on leaves that server running. Ctrl-C is typed on the
terminal (the terminal sends SIGINT), SIGTERM is sent to the process. A
``bench run`` and a ``qer run`` stopped with a model call in flight are in
``test_kill_resume.py``.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from faults import cli_env
from terminal import Stopped, Terminal, leftover_processes

from cypherturn.cli._chat import PROMPT
from cypherturn.cli._exit import ExitCode
from cypherturn.graph import EmbeddedFalkorDB

SLOW = "MATCH (a:Student), (b:Student), (c:Student), (d:Student), (e:Student) RETURN count(*) AS n"
"""A query that runs for minutes on magic_academy (150^5 rows), stopped only by its timeout."""

LIMIT_S = 10.0
"""The bound a test holds a stop to: far below the in-flight query's or model call's minutes,
so a stop that waits for either fails; the 2 s target itself is measured by
``benchmarks/bench_serving.py`` on an otherwise idle machine, not by timed tests."""


def _replay(path: Path, *responses: str) -> str:
    path.write_text(json.dumps(list(responses)))
    return f"replay:{path}"


def _stop(terminal: Terminal, how: str) -> Stopped:
    since = terminal.ctrl_c() if how == "ctrl-c" else terminal.send(signal.SIGTERM)
    return terminal.stopped(since)


EXPECTED = {"ctrl-c": ExitCode.INTERRUPTED, "sigterm": ExitCode.TERMINATED}


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_chat_at_the_prompt_exits_130_on_ctrl_c_and_143_on_sigterm(
    tmp_path: Path, how: str
) -> None:
    home = tmp_path / "home"
    chat = Terminal(
        ["chat", "--graph", "magic_academy", "--model", _replay(tmp_path / "r.json"),
         "--out", str(tmp_path / "chats")],
        cli_env(home),
    )  # fmt: skip
    try:
        chat.wait_for(PROMPT)
        stopped = _stop(chat, how)
    finally:
        chat.close()
    assert stopped.exit == EXPECTED[how], stopped.output
    assert stopped.seconds < LIMIT_S, stopped.seconds
    assert "Traceback" not in stopped.output and "transcript saved" in stopped.output
    assert leftover_processes(home) == []


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_chat_stops_promptly_with_a_query_in_flight_and_records_no_turn(
    tmp_path: Path, how: str
) -> None:
    home = tmp_path / "home"
    out = tmp_path / "chats"
    chat = Terminal(
        ["chat", "--graph", "magic_academy", "--strategy", "single",
         "--model", _replay(tmp_path / "r.json", SLOW), "--out", str(out)],
        cli_env(home),
    )  # fmt: skip
    try:
        chat.wait_for(PROMPT)
        chat.type("How many students are there?")
        # the replay model answers at once (the status counts its one piece); the query
        # then runs for minutes, under a timeout clamped to the 60 s budget
        chat.wait_for("(1 pieces)")
        stopped = _stop(chat, how)
    finally:
        chat.close()
    assert stopped.exit == EXPECTED[how], stopped.output
    assert stopped.seconds < LIMIT_S, stopped.seconds
    assert "Traceback" not in stopped.output
    assert not list(out.glob("chat-*.json"))  # the interrupted turn is not recorded
    assert leftover_processes(home) == []


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_ask_stops_promptly_with_a_query_in_flight(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    ask = Terminal(
        ["ask", "How many students are there?", "--graph", "magic_academy",
         "--strategy", "single", "--model", _replay(tmp_path / "r.json", SLOW)],
        cli_env(home),
    )  # fmt: skip
    try:
        ask.wait_for("RETURN count(*) AS n")  # streamed: the query runs now
        stopped = _stop(ask, how)
    finally:
        ask.close()
    assert stopped.exit == EXPECTED[how], stopped.output
    assert stopped.seconds < LIMIT_S, stopped.seconds
    assert "Traceback" not in stopped.output
    assert leftover_processes(home) == []


def test_ask_stops_promptly_of_sigterm_with_a_gguf_call_in_flight(tmp_path: Path) -> None:
    # the bundled model, in process: llama.cpp is aborted in the middle of its decode. A
    # 135M model can finish its reply before the signal lands; that try stopped nothing in
    # flight, so the test tries again (and such a late signal must not break the exit either).
    for attempt in range(3):
        home = tmp_path / f"home{attempt}"
        ask = Terminal(
            ["ask", "How many students are there?", "--graph", "magic_academy",
             "--model", "smollm2-135m", "--strategy", "single", "--no-answer"],
            cli_env(home),
        )  # fmt: skip
        try:
            ask.wait_for("attempt 1")  # printed as the model call starts
            stopped = _stop(ask, "sigterm")
        finally:
            ask.close()
        assert "Traceback" not in stopped.output
        assert leftover_processes(home) == []
        if stopped.exit == ExitCode.TERMINATED:
            break
        assert "attempt 1/1" in stopped.output, stopped.output  # it finished first
    assert stopped.exit == ExitCode.TERMINATED, stopped.output
    assert stopped.seconds < LIMIT_S, stopped.seconds


def test_a_stopped_command_leaves_a_server_another_process_holds(
    embedded_server: EmbeddedFalkorDB, cypherturn_home: Path, tmp_path: Path
) -> None:
    # the test session holds a lease on its embedded server: a chat stopped on that
    # server drops only its own lease, and the server keeps serving
    chat = Terminal(
        ["chat", "--graph", "magic_academy", "--model", _replay(tmp_path / "r.json"),
         "--out", str(tmp_path / "chats")],
        cli_env(cypherturn_home),
    )  # fmt: skip
    try:
        chat.wait_for(PROMPT)
        stopped = _stop(chat, "sigterm")
    finally:
        chat.close()
    assert stopped.exit == ExitCode.TERMINATED and stopped.seconds < LIMIT_S
    assert isinstance(embedded_server.client().list_graphs(), list)  # it still answers
