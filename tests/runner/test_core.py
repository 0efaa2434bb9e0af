"""The batch core shared by bench runs and QER runs: the resume check and the failure policy."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from cypherturn.errors import (
    ConfigError,
    DatasetError,
    EngineConnectionError,
    ModelResponseError,
    ModelTransientError,
    QueryError,
)
from cypherturn.graph import GraphEngine
from cypherturn.records import INFRA_FILE, InfraFailure
from cypherturn.runner import open_run_dir, run_batch, write_infra_failures
from cypherturn.sessions import Session


class _Config(BaseModel):
    schema_version: int = 1
    model: str
    budget: int


def test_a_run_directory_keeps_its_configuration(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = _Config(model="a", budget=5)
    open_run_dir(out, "config.json", first, what="test configuration")
    assert _Config.model_validate_json((out / "config.json").read_text()) == first
    open_run_dir(out, "config.json", first, what="test configuration")  # the same: resumes
    with pytest.raises(ConfigError, match=r"changed: budget 5 -> 3; model 'a' -> 'b'"):
        open_run_dir(out, "config.json", _Config(model="b", budget=3), what="test configuration")
    assert _Config.model_validate_json((out / "config.json").read_text()) == first


def test_an_unreadable_configuration_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text('{"schema_version": 1, "model": "a"}')
    with pytest.raises(DatasetError, match="not a valid test configuration: budget") as caught:
        open_run_dir(out, "config.json", _Config(model="a", budget=5), what="test configuration")
    assert "\n" not in str(caught.value)


def test_results_without_a_configuration_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "attempts.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"holds attempts\.jsonl but no config\.json"):
        open_run_dir(
            out,
            "config.json",
            _Config(model="a", budget=5),
            what="x",
            started_by=["attempts.jsonl"],
        )
    assert not (out / "config.json").exists()


def test_infrastructure_failures_are_recorded_and_the_batch_goes_on() -> None:
    failing: dict[int, Exception] = {
        2: ModelTransientError("HTTP 503"),
        4: ModelResponseError("malformed tool call"),
        5: EngineConnectionError("connection refused"),
    }

    def play(task: int) -> int:
        if task in failing:
            raise failing[task]
        return task * 10

    done: list[tuple[int, int]] = []
    failed: list[tuple[int, str]] = []
    run_batch(
        list(range(1, 8)),
        play,
        on_done=lambda task, result: done.append((task, result)),
        on_failed=lambda task, error: failed.append((task, str(error))),
    )
    # one worker: outcomes in task order, every task after a failure still played
    assert done == [(1, 10), (3, 30), (6, 60), (7, 70)]
    assert failed == [(2, "HTTP 503"), (4, "malformed tool call"), (5, "connection refused")]


@pytest.mark.parametrize(
    "fatal", [QueryError("a bug, not the infrastructure"), KeyboardInterrupt()]
)
def test_any_other_error_stops_the_batch_after_handing_over_what_finished(
    fatal: BaseException,
) -> None:
    started: list[int] = []
    lock = threading.Lock()
    gate = threading.Event()

    def play(task: int) -> int:
        with lock:
            started.append(task)
        if task == 3:
            gate.wait(5)  # finishes after task 4 has failed
            return 3
        if task == 4:
            gate.set()
            raise fatal
        return task

    done: list[int] = []
    with pytest.raises(type(fatal)):
        run_batch(
            list(range(1, 40)),
            play,
            on_done=lambda task, result: done.append(result),
            on_failed=lambda task, error: pytest.fail(f"not an infrastructure failure: {error}"),
            concurrency=2,
        )
    # tasks 1-3 finished and were handed over (3 after the failure); at most 2 x 2 tasks
    # are in flight at a time, so the batch stopped long before its end
    assert {1, 2, 3} <= set(done) <= set(started) - {4}
    assert max(started) <= 8


def test_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="concurrency must be at least 1, got 0"):
        run_batch(
            [1], lambda t: t, on_done=lambda *_: None, on_failed=lambda *_: None, concurrency=0
        )


def test_the_failure_list_is_rewritten_by_every_invocation(tmp_path: Path) -> None:
    write_infra_failures(tmp_path, [InfraFailure(session_id="s-1", error="HTTP 500")])
    assert (tmp_path / INFRA_FILE).read_text().count("s-1") == 1
    write_infra_failures(tmp_path, [])
    assert (tmp_path / INFRA_FILE).read_text() == "[]"


def test_an_interrupted_batch_abandons_calls_and_stops_waiting_for_a_blocked_task() -> None:
    # task 0 finishes; task 1 waits on a model-like call that only a stop ends; task 2
    # blocks in something no stop reaches (an endpoint read); Ctrl-C comes in on_done
    from cypherturn.errors import CallAbandoned
    from cypherturn.models import current_limits, limited_sleep
    from cypherturn.runner import STOP_GRACE_S

    ended: dict[int, str] = {}
    never = threading.Event()

    def play(task: int) -> int:
        if task == 1:
            try:
                limited_sleep(60)  # as a GGUF call: the batch's stop ends it
            except CallAbandoned:
                ended[task] = "abandoned"
                raise
        if task == 2:
            assert current_limits().stops  # the batch's stop reached the worker
            never.wait(60)
        return task

    def done(task: int, result: int) -> None:
        time.sleep(0.2)  # tasks 1 and 2 are running now
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_batch([0, 1, 2], play, on_done=done, on_failed=lambda *_: None, concurrency=3)
    assert time.monotonic() - started < 0.2 + STOP_GRACE_S + 0.5
    assert ended == {1: "abandoned"}
    blocked = [t for t in threading.enumerate() if t.name.startswith("cypherturn-run")]
    assert blocked and all(t.daemon for t in blocked)  # left running; the exit does not wait
    never.set()


def test_a_failure_while_the_run_stops_is_an_interruption_not_an_infrastructure_failure(
    heroes: GraphEngine, session: Session, tmp_path: Path
) -> None:
    from cypherturn.errors import RunInterrupted
    from cypherturn.protocols import ProtocolName, ProtocolSettings
    from cypherturn.runner import read_log, run_session

    stop = threading.Event()

    class Failing:
        spec = "replay:failing"
        supports_grammar = False

        def chat(self, *args: object, **kwargs: object) -> object:
            stop.set()  # the run stops while the request fails (its connection closed)
            raise ModelTransientError("replay:failing: connection closed")

    log = tmp_path / "log.jsonl"
    with pytest.raises(RunInterrupted):
        run_session(
            session,
            model=Failing(),  # type: ignore[arg-type]
            engine=heroes,
            settings=ProtocolSettings(protocol=ProtocolName.GUIDED),
            log_path=log,
            stop=stop,
        )
    # no infrastructure failure is logged: the log ends as after a crash, and resumes
    assert [e.event for e in read_log(log)] == ["session_start"]
