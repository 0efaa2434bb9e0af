"""Faults for the reliability suite (issue 15), shared by tests/reliability and benchmarks/bench_reliability.py.

- :class:`StubEndpoint`: a local OpenAI-compatible chat-completions server
  (stdlib ``http.server`` in a thread) that answers deterministically from the
  request (so a resumed run gets the answers an unbroken one got) and injects
  scripted faults: HTTP 500, 429 with ``Retry-After``, a reply slower than the
  client's timeout, a malformed tool call, a connection reset in the middle of
  the body or of a stream.
- :func:`kill_and_resume`: start a ``cypherturn`` command, SIGKILL it once its
  output files hold some records, rerun it to the end.
- :func:`run_cli`: one ``cypherturn`` command line in a child process, its exit
  and stderr summarised.
- :func:`servers_under`: embedded servers whose data directory is under a
  given ``CYPHERTURN_HOME`` (never anyone else's).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cypherturn.graph import EmbeddedServerStatus, find_embedded_servers

FAULTS = ("500", "429", "timeout", "malformed_tool_call", "reset", "reset_stream")
"""Fault kinds :class:`StubEndpoint` can inject."""

RETRY_LOG = "WARNING cypherturn.models._retry:"
"""How the model layer's retry warnings start on stderr."""

Answer = Callable[[dict[str, Any]], str]
"""The reply text for a chat-completions request body (must depend on the body only)."""


@dataclass
class StubEndpoint:
    """A deterministic OpenAI-compatible endpoint with scripted faults.

    Attributes:
        answer: the reply text of a request, from its body alone.
        faults: the fault of each call in order (``None``: answer normally); once
            the list is used up, ``repeat`` is injected on every later call.
        repeat: the fault of every call after ``faults`` (``None``: answer).
        delay_s: wait before every answer, seconds (to make a run last).
        hang_s: how long a ``timeout`` fault waits before answering, seconds.
        retry_after_s: the ``Retry-After`` header of a 429, seconds.
        hang_from: calls numbered from this one on (0-based) get no answer until
            :meth:`release` (a model call in flight for as long as a test needs);
            ``None``: none hangs.
        calls: requests received so far.
        injected: faults injected so far, by kind.
        hanging: requests waiting for :meth:`release` now.
    """

    answer: Answer
    faults: list[str | None] = field(default_factory=list)
    repeat: str | None = None
    delay_s: float = 0.0
    hang_s: float = 2.0
    retry_after_s: int = 1
    hang_from: int | None = None
    calls: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    hanging: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _released: threading.Event = field(default_factory=threading.Event)

    def _next_fault(self) -> tuple[str | None, bool]:
        """The fault of the next call, and whether it hangs."""
        with self._lock:
            fault = self.faults[self.calls] if self.calls < len(self.faults) else self.repeat
            hangs = self.hang_from is not None and self.calls >= self.hang_from
            self.calls += 1
            if fault is not None:
                self.injected[fault] = self.injected.get(fault, 0) + 1
            return fault, hangs

    def _hang(self) -> None:
        with self._lock:
            self.hanging += 1
        self._released.wait(600)
        with self._lock:
            self.hanging -= 1

    def release(self) -> None:
        """Answer the hanging calls, and hang no more."""
        self.hang_from = None
        self._released.set()

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve on 127.0.0.1; yields the base URL ``http://127.0.0.1:PORT/v1``."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                fault, hangs = stub._next_fault()
                if hangs:
                    stub._hang()
                time.sleep(stub.delay_s)
                if fault == "500":
                    self._json(500, {"error": {"message": "overloaded", "type": "server_error"}})
                elif fault == "429":
                    self._json(
                        429,
                        {"error": {"message": "slow down", "type": "rate_limit"}},
                        {"Retry-After": str(stub.retry_after_s)},
                    )
                elif fault == "timeout":
                    time.sleep(stub.hang_s)
                    self._json(200, _completion(stub.answer(body)))
                elif fault == "malformed_tool_call":
                    self._json(200, _completion("", tool_arguments='{"query": "MATCH (n'))
                elif fault == "reset":
                    data = json.dumps(_completion(stub.answer(body))).encode()
                    self._head(200, "application/json", len(data))
                    self.wfile.write(data[: len(data) // 2])
                    self._reset()
                elif body.get("stream"):
                    self._stream(stub.answer(body), cut=fault == "reset_stream")
                else:
                    self._json(200, _completion(stub.answer(body)))

            def _head(self, status: int, kind: str, length: int | None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                if length is not None:
                    self.send_header("Content-Length", str(length))
                self.end_headers()

            def _json(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str, *, cut: bool) -> None:
                # chunked, as streaming servers send it: a cut before the last chunk is
                # a broken body to the client, not an end of stream
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def send(data: bytes) -> None:
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()

                pieces = [text[i : i + 8] for i in range(0, len(text), 8)] or [""]
                for number, piece in enumerate(pieces):
                    chunk = {
                        "id": "stub",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "stub",
                        "choices": [{"index": 0, "delta": {"content": piece}}],
                    }
                    send(f"data: {json.dumps(chunk)}\n\n".encode())
                    if cut and number == len(pieces) // 2:
                        self._reset()
                        return
                send(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")

            def _reset(self) -> None:
                # SO_LINGER 0: close() sends RST, as a crashed proxy or server would
                self.wfile.flush()
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                return

        server = _QuietServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/v1"
        finally:
            self.release()
            server.shutdown()
            server.server_close()


class _QuietServer(ThreadingHTTPServer):
    """A threading HTTP server that drops requests whose client went away (a killed run)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _completion(text: str, *, tool_arguments: str | None = None) -> dict[str, Any]:
    """A chat completion of ``text``; an answer ``{"tool_calls": [{name, arguments}]}`` is sent as
    native tool calls, and ``tool_arguments`` sends one EXECUTE_CYPHER call with those arguments."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    calls: list[dict[str, Any]] = []
    if tool_arguments is not None:
        calls = [{"name": "EXECUTE_CYPHER", "arguments": tool_arguments}]
    elif text.startswith('{"tool_calls"'):
        calls = json.loads(text)["tool_calls"]
        message["content"] = ""
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": call}
            for i, call in enumerate(calls)
        ]
    return {
        "id": "stub",
        "object": "chat.completion",
        "created": 0,
        "model": "stub",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _texts(body: dict[str, Any], role: str) -> list[str]:
    texts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == role and isinstance(content, str):
            texts.append(content)
    return texts


def answer_by_question(replies: dict[str, str], default: str) -> Answer:
    """An :data:`Answer` replying ``replies[q]`` for the question ``q`` the request asks.

    The question is the longest key found in the last user message that holds
    any key (so the current turn's, not an earlier one's); ``default`` when none.
    """
    keys = sorted(replies, key=len, reverse=True)

    def answer(body: dict[str, Any]) -> str:
        for text in reversed(_texts(body, "user")):
            for key in keys:
                if key in text:
                    return replies[key]
        return default

    return answer


def jsonl_lines(paths: list[Path]) -> list[dict[str, Any]]:
    """The complete JSON lines of some files (a half-written last line is skipped)."""
    found = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


@dataclass
class KillResult:
    """A command SIGKILLed mid-way, then rerun to the end.

    Attributes:
        records_at_kill: what ``progress`` counted when the kill was sent.
        killed_rc: the killed child's exit status (``-9``).
        resumed_rc: the rerun's exit status.
        resumed_stderr: the rerun's stderr.
        seconds_to_kill: from start to the kill, seconds.
        seconds_to_exit: from the signal to the child's exit, seconds.
        killed_stderr: the killed child's stderr.
    """

    records_at_kill: int
    killed_rc: int
    resumed_rc: int
    resumed_stderr: str
    seconds_to_kill: float
    seconds_to_exit: float
    killed_stderr: str


def _default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kill_and_resume(
    args: list[str],
    env: dict[str, str],
    progress: Callable[[], int],
    *,
    kill_at: int,
    timeout_s: float = 300.0,
    signum: int = signal.SIGKILL,
    before_rerun: Callable[[], None] | None = None,
) -> KillResult:
    """Run ``cypherturn ARGS``, send ``signum`` once ``progress() >= kill_at``, rerun it to the end.

    ``before_rerun`` is called once the killed child has exited.

    Raises:
        AssertionError: the command finished (or timed out) before reaching ``kill_at``.
    """
    command = [sys.executable, "-m", "cypherturn", *args]
    started = time.monotonic()
    # A shell starts a background job with SIGINT ignored, and Python then leaves it ignored;
    # the child gets the default disposition a terminal's foreground job has, so Ctrl-C is
    # tested also when the suite itself runs in the background (`make test &`).
    child = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_interrupt,
    )
    try:
        while (count := progress()) < kill_at:
            if child.poll() is not None:
                raise AssertionError(
                    f"{args[:2]} ended (exit {child.returncode}) at {count} records"
                )
            if time.monotonic() - started > timeout_s:
                raise AssertionError(f"{args[:2]} reached only {count} records in {timeout_s} s")
            time.sleep(0.05)
        os.kill(child.pid, signum)
        killed = time.monotonic() - started
        child.wait(timeout=120)
        exited = time.monotonic() - started - killed
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        assert child.stderr is not None
        killed_stderr = child.stderr.read()
        child.stderr.close()
    if before_rerun is not None:
        before_rerun()
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
    return KillResult(
        count, child.returncode, again.returncode, again.stderr, killed, exited, killed_stderr
    )


@dataclass
class CliOutcome:
    """A ``cypherturn`` command's exit and its non-empty stderr lines.

    Attributes:
        exit: the exit status.
        stderr_lines: stderr lines other than the model layer's retry warnings.
        retry_lines: retry warnings (one per retry of an unreachable endpoint).
        traceback: a traceback was printed.
    """

    exit: int
    stderr_lines: list[str]
    retry_lines: int
    traceback: bool


def run_cli(args: list[str], env: dict[str, str], timeout_s: float = 300.0) -> CliOutcome:
    """Run ``python -m cypherturn ARGS`` with ``env``."""
    done = subprocess.run(
        [sys.executable, "-m", "cypherturn", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith(RETRY_LOG)]
    return CliOutcome(
        done.returncode, errors, len(lines) - len(errors), "Traceback" in done.stderr + done.stdout
    )


def servers_under(home: Path, settle_s: float = 5.0) -> list[EmbeddedServerStatus]:
    """Embedded servers whose data directory is under ``home``, after up to ``settle_s`` for them to exit."""
    root = home.resolve()
    deadline = time.monotonic() + settle_s
    while True:
        mine = [s for s in find_embedded_servers() if Path(s.data_dir).is_relative_to(root)]
        if not mine or time.monotonic() > deadline:
            return mine
        time.sleep(0.1)


def cli_env(home: Path) -> dict[str, str]:
    """The environment of a child ``cypherturn``: its own ``CYPHERTURN_HOME``, wide columns."""
    return {**os.environ, "CYPHERTURN_HOME": str(home), "COLUMNS": "400"}


QER_GOOD = "```cypher\nMATCH (c:Client) RETURN c.name LIMIT 3\n```"
"""The stub's reply in QER runs: a query that executes on the Fraud graph."""


def bench_answer(bench: Path) -> Answer:
    """Replies submitting each turn's gold query, chosen by the turn's utterance."""
    from cypherturn.sessions import read_sessions

    replies = {
        t.utterance: json.dumps({"action": "SUBMIT_ANSWER", "input": t.gold_cypher})
        for s in read_sessions(bench)
        for t in s.turns
    }
    return answer_by_question(replies, json.dumps({"action": "SUBMIT_ANSWER", "input": "RETURN 0"}))


def bench_args(bench: Path, url: str, out: Path) -> list[str]:
    """``bench run`` of ``bench`` on the stub at ``url`` into ``out`` (guided protocol)."""
    return [
        "bench", "run", str(bench), "--model", "openai:stub", "--base-url", url,
        "--out", str(out), "--protocol", "guided",
    ]  # fmt: skip


def qer_args(url: str, out: Path) -> list[str]:
    """``qer run`` of one Fraud tier on the stub at ``url`` into ``out``: 12 episodes."""
    return [
        "qer", "run", "--datasets", "fraud", "--tiers", "easy", "--strategies", "is,ras",
        "-n", "2", "--runs", "3", "--questions", "2", "--model", "openai:stub",
        "--base-url", url, "--out", str(out),
    ]  # fmt: skip


def turns_logged(run_dir: Path) -> int:
    """``turn_end`` events in a bench run's session logs."""
    logs = sorted((run_dir / "sessions").glob("*.jsonl"))
    return sum(1 for e in jsonl_lines(logs) if e.get("event") == "turn_end")


def bench_keys(run_dir: Path) -> list[tuple[str, int, str]]:
    """(session, turn, predicted query) of every record of a bench run, in file order."""
    return [
        (r["session_id"], r["turn"], r["predicted_cypher"])
        for r in jsonl_lines([run_dir / "records.jsonl"])
    ]


def qer_keys(run_dir: Path) -> list[tuple[str, str, str, int, str, int]]:
    """(strategy, dataset, tier, run, question, attempts) of every episode of a QER run."""
    return [
        (
            e["strategy"],
            e["dataset"],
            e["tier"],
            e["run_index"],
            e["question_id"],
            len(e["attempts"]),
        )
        for e in jsonl_lines([run_dir / "attempts.jsonl"])
    ]


@dataclass
class ResumeFigures:
    """A killed and resumed run compared with one never killed.

    Attributes:
        expected: records of the run never killed.
        at_kill: records (turns or episodes) written when the kill was sent.
        lost: keys of the unbroken run missing after the resume.
        duplicated: records written more than once.
        different: records whose content differs from the unbroken run's.
        killed_rc: exit status of the killed run (-9).
        resumed_rc: exit status of the rerun.
        traceback: the rerun printed a traceback.
        servers_left: embedded servers of the run's ``CYPHERTURN_HOME`` still running.
        seconds_to_exit: from the signal to the killed run's exit, seconds.
        killed_traceback: the killed run printed a traceback.
    """

    expected: int
    at_kill: int
    lost: int
    duplicated: int
    different: int
    killed_rc: int
    resumed_rc: int
    traceback: bool
    servers_left: int
    seconds_to_exit: float = 0.0
    killed_traceback: bool = False


def kill_resume(
    kind: str,
    root: Path,
    *,
    bench: Path | None = None,
    delay_s: float = 0.3,
    kill_at: int = 6,
    signum: int = signal.SIGKILL,
    in_flight: bool = False,
) -> ResumeFigures:
    """Kill a ``bench run`` (``kind="bench"``) or ``qer run`` (``"qer"``) mid-way, resume, compare.

    ``signum`` is SIGKILL by default; SIGINT (Ctrl-C) and SIGTERM are the orderly stops.
    With ``in_flight``, the endpoint answers the first ``kill_at`` calls at once and
    leaves the next one unanswered: the signal is sent while that model call is in
    flight (and would stay so for minutes).

    Both runs use their own ``CYPHERTURN_HOME`` under ``root`` and the stub
    endpoint (each answer after ``delay_s``). Records of the killed run are
    counted from its logs (bench: ``turn_end`` events) or ``attempts.jsonl``.
    """
    home = root / f"home-{kind}"
    env = cli_env(home)
    if kind == "bench":
        assert bench is not None
        answer = bench_answer(bench)
    else:
        answer = lambda body: QER_GOOD  # noqa: E731
    stub = StubEndpoint(answer, delay_s=delay_s)
    with stub.serve() as url:
        if kind == "bench":
            assert bench is not None
            ref_args, run_args = (
                bench_args(bench, url, root / n) for n in ("bench-ref", "bench-kill")
            )
            progress = lambda: turns_logged(root / "bench-kill")  # noqa: E731
        else:
            ref_args, run_args = (qer_args(url, root / n) for n in ("qer-ref", "qer-kill"))
            progress = lambda: len(jsonl_lines([root / "qer-kill" / "attempts.jsonl"]))  # noqa: E731
        stub.delay_s = 0.0
        reference = run_cli(ref_args, env)
        assert reference.exit == 0, reference.stderr_lines
        trigger, trigger_at = progress, kill_at
        if in_flight:
            stub.hang_from = stub.calls + kill_at
            trigger, trigger_at = (lambda: stub.hanging), 1
        else:
            stub.delay_s = delay_s

        written: list[int] = []

        def before_rerun() -> None:
            written.append(progress())  # what the stopped run left, before the rerun adds to it
            stub.release()
            stub.delay_s = 0.0

        result = kill_and_resume(
            run_args, env, trigger, kill_at=trigger_at, signum=signum, before_rerun=before_rerun
        )
        if in_flight:
            result.records_at_kill = written[0]
    keys = bench_keys if kind == "bench" else qer_keys
    ref = keys(root / f"{kind}-ref")
    got = keys(root / f"{kind}-kill")
    ids = {k[:-1] for k in ref}
    got_ids = [k[:-1] for k in got]
    return ResumeFigures(
        expected=len(ref),
        at_kill=result.records_at_kill,
        lost=len(ids - set(got_ids)),
        duplicated=len(got_ids) - len(set(got_ids)),
        different=len(set(got) - set(ref)),
        killed_rc=result.killed_rc,
        resumed_rc=result.resumed_rc,
        traceback="Traceback" in result.resumed_stderr,
        servers_left=len(servers_under(home)),
        seconds_to_exit=result.seconds_to_exit,
        killed_traceback="Traceback" in result.killed_stderr,
    )


HEROES_QUERY = "MATCH (h:Hero) RETURN h.name AS name"


@dataclass
class FaultFigures:
    """One endpoint fault played through ``run_benchmark`` (4-turn heroes session, real engine).

    Attributes:
        fault: the fault kind.
        persistent: the fault never stops (else only the first ``transient_calls`` calls).
        calls: requests the endpoint received.
        injected: faults injected.
        completed: sessions completed.
        infra_failures: sessions listed as infrastructure failures (unscored).
        scored_turns: turn records written (scored).
        error: the infrastructure failure's message (empty when none).
        seconds: wall time of the run, seconds.
    """

    fault: str
    persistent: bool
    calls: int
    injected: int
    completed: int
    infra_failures: int
    scored_turns: int
    error: str
    seconds: float


def play_fault(
    engine: Any, out: Path, fault: str, *, persistent: bool, transient_calls: int = 2
) -> FaultFigures:
    """Play one heroes session against the stub injecting ``fault``, through the real openai client.

    The model's timeout is 0.5 s (a ``timeout`` fault hangs 1.5 s) and its retry
    policy makes 4 attempts, 0.05 s apart, honouring a ``Retry-After`` up to 2 s.
    """
    from protocol_world import make_session

    from cypherturn.models import OpenAIChatModel, RetryPolicy
    from cypherturn.protocols import ActionFormat, ProtocolSettings
    from cypherturn.records import RECORDS_FILE, ProtocolName, TurnRecord, read_jsonl
    from cypherturn.runner import INFRA_FILE, run_benchmark

    tools = fault == "malformed_tool_call"
    if tools:
        call = {"name": "SUBMIT_ANSWER", "arguments": json.dumps({"query": HEROES_QUERY})}
        reply = json.dumps({"tool_calls": [call]})
    else:
        reply = json.dumps({"action": "SUBMIT_ANSWER", "input": HEROES_QUERY})
    stub = StubEndpoint(
        lambda body: reply,
        faults=[] if persistent else [fault] * transient_calls,
        repeat=fault if persistent else None,
        hang_s=1.5,
        retry_after_s=1,
    )
    settings = ProtocolSettings(
        protocol=ProtocolName.GUIDED,
        action_format=ActionFormat.TOOLS if tools else ActionFormat.TEXT,
    )
    policy = RetryPolicy(attempts=4, initial_delay_s=0.05, factor=1.0, max_delay_s=2.0)
    started = time.monotonic()
    with stub.serve() as url:
        model = OpenAIChatModel("stub", base_url=url, timeout_s=0.5, retry=policy)
        summary = run_benchmark(
            [make_session(engine, f"heroes-{fault}")],
            model=model,
            engines=lambda world: engine,
            settings=settings,
            out_dir=out,
        )
    listed = json.loads((out / INFRA_FILE).read_text(encoding="utf-8"))
    assert len(listed) == len(summary.infra_failures)
    records = list(read_jsonl(out / RECORDS_FILE, TurnRecord))
    return FaultFigures(
        fault=fault,
        persistent=persistent,
        calls=stub.calls,
        injected=sum(stub.injected.values()),
        completed=summary.completed,
        infra_failures=len(listed),
        scored_turns=len(records),
        error=summary.infra_failures[0].error if summary.infra_failures else "",
        seconds=round(time.monotonic() - started, 2),
    )


def stream_reset() -> tuple[int, str]:
    """A streamed chat cut by a reset after some tokens: (requests made, error text).

    Tokens already shown cannot be taken back, so this one is not retried.
    """
    from cypherturn.errors import ModelError
    from cypherturn.models import ChatMessage, OpenAIChatModel, RetryPolicy

    stub = StubEndpoint(lambda body: "MATCH (h:Hero) RETURN h.name AS name", repeat="reset_stream")
    shown: list[str] = []
    with stub.serve() as url:
        model = OpenAIChatModel(
            "stub", base_url=url, timeout_s=2.0, retry=RetryPolicy(attempts=4, initial_delay_s=0.05)
        )
        try:
            model.chat([ChatMessage(role="user", content="heroes?")], on_token=shown.append)
        except ModelError as e:
            return stub.calls, str(e)
    return stub.calls, ""


def malformed_cases(root: Path) -> dict[str, tuple[list[str], str]]:
    """Bad inputs written under ``root``: name -> (``cypherturn`` arguments, text the error must name).

    Truncated JSONL (a session file, a run's scores), wrong schema versions (a
    session line, a run record, a question set), a ``data.cypher`` with a syntax
    error on line N, an unknown world, a bad engine URL and an unreachable model URL.
    """
    tests = Path(__file__).resolve().parent.parent
    truncated = root / "truncated.jsonl"
    truncated.write_text('{"session_id": "a", "turns": [', encoding="utf-8")
    newer = root / "newer_sessions.jsonl"
    newer.write_text(json.dumps({"format_version": 999, "session_id": "x"}) + "\n")
    cut_run = root / "cut_run"
    cut_run.mkdir()
    (cut_run / "scores.jsonl").write_text('{"schema_version": 1, "run_id": "r", "mod')
    newer_run = root / "newer_run"
    newer_run.mkdir()
    (newer_run / "scores.jsonl").write_text(json.dumps({"schema_version": 2}) + "\n")
    sets = root / "questions"
    sets.mkdir()
    packaged = tests.parent / "src" / "cypherturn" / "experiments" / "data" / "questions"
    qs = json.loads((packaged / "fraud.json").read_text(encoding="utf-8"))
    qs["schema_version"] = 2
    (sets / "fraud.json").write_text(json.dumps(qs), encoding="utf-8")
    tiny = tests / "worlds" / "official_tiny"
    script = (tiny / "data.cypher").read_text(encoding="utf-8").splitlines()
    bad_line = next(i for i, line in enumerate(script) if "(" in line and "//" not in line)
    script[bad_line] = script[bad_line].replace("(", "((", 1)
    bad_cypher = root / "data.cypher"
    bad_cypher.write_text("\n".join(script) + "\n", encoding="utf-8")
    replay = root / "replay.json"
    replay.write_text(json.dumps(["MATCH (n) RETURN count(n)"]), encoding="utf-8")
    empty = root / "empty_replay.json"
    empty.write_text("[]", encoding="utf-8")
    return {
        "truncated sessions JSONL": (["bench", "stats", str(truncated)], "truncated.jsonl:1"),
        "truncated run records": (["report", str(cut_run)], "scores.jsonl:1"),
        "sessions of a newer format version": (["bench", "stats", str(newer)], "version 999"),
        "run records of another schema version": (["report", str(newer_run)], "version 2"),
        "question set of another schema version": (
            ["qer", "questions", "--datasets", "fraud", "--question-dir", str(sets)],
            "version 2",
        ),
        f"data.cypher syntax error on line {bad_line + 1}": (
            [
                "load",
                "--cypher-script",
                str(bad_cypher),
                "--schema",
                str(tiny / "schema.json"),
                "--name",
                "bad_script",
            ],
            f"data.cypher:{bad_line + 1}:",
        ),
        "unknown world": (["load", "atlantis"], "'atlantis'"),
        "bad engine URL": (
            ["ask", "q", "--engine", "ftp://nowhere", "--model", f"replay:{replay}"],
            "ftp://nowhere",
        ),
        "unreachable model URL": (
            # the smallest bundled graph: the case is the model's URL, not the graph's load
            [
                "ask",
                "q",
                "--graph",
                "fraud",
                "--model",
                "openai:m",
                "--base-url",
                "http://127.0.0.1:9/v1",
            ],
            "http://127.0.0.1:9/v1",
        ),
        # an empty replay would fail on its first call: the question is refused before any
        "blank question": (["ask", "   ", "--model", f"replay:{empty}"], "the question is empty"),
    }
