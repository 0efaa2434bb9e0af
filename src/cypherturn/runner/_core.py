"""The batch core shared by benchmark runs and QER runs: resume check, failure policy, workers.

One mechanism for both (:func:`cypherturn.runner.run_benchmark` and
:func:`cypherturn.experiments.run_qer_experiment`):

* **Resume check** (:func:`open_run_dir`): a run directory stores its
  configuration on the first run; a rerun with the same configuration resumes,
  one with another is refused with the changed settings named.
* **Append as you go**: each unit of work (a session, a QER episode) is written
  as soon as it finishes (session logs, :class:`~cypherturn.records.JsonlAppender`),
  so a killed run loses at most the unit in progress, and a rerun skips what
  was written.
* **Failure policy** (:func:`run_batch`): transient model errors are retried
  inside the model layer (``cypherturn.models.RetryPolicy``); a unit that still
  fails with an infrastructure error (:data:`INFRA_ERRORS`) is recorded as an
  infrastructure failure (``infra_failures.json``), never scored, and the batch
  continues; the next run with the same configuration redoes it. Any other error
  stops the batch, after the units finished before it are written.
* **Interruption** (:func:`run_batch`): Ctrl-C or SIGTERM abandons the model
  calls in flight and stops waiting for the running units after
  :data:`STOP_GRACE_S`; workers are daemon threads, so nothing holds the
  process up, and a unit left running loses only itself, as after a kill.
"""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from cypherturn.errors import ConfigError, DatasetError, EngineConnectionError, ModelError
from cypherturn.models import call_limits, stop_calls
from cypherturn.records import INFRA_FILE, config_changes, validation_problem

__all__ = ["INFRA_ERRORS", "STOP_GRACE_S", "open_run_dir", "run_batch", "write_infra_failures"]

logger = logging.getLogger(__name__)

INFRA_ERRORS: Final = (ModelError, EngineConnectionError)
"""Infrastructure failures: the model endpoint still failing after the model layer's
retries, a malformed endpoint answer, an unreachable engine. A unit of work that
ends in one is recorded apart and redone on resume, never scored as a model error."""

C = TypeVar("C", bound=BaseModel)
T = TypeVar("T")
R = TypeVar("R")


def open_run_dir(
    out_dir: Path,
    config_file: str,
    config: C,
    *,
    what: str,
    started_by: Sequence[str] = (),
) -> None:
    """Start a run directory, or check that it was started with the same configuration.

    Args:
        out_dir: the run directory (created when missing).
        config_file: the configuration's file name inside it.
        config: the configuration asked for; written when the directory has none.
        what: what the configuration is called in messages (``"run configuration"``).
        started_by: files whose presence without ``config_file`` means the directory
            holds a run of unknown configuration (refused).

    Raises:
        ConfigError: the stored configuration differs (the message names each
            changed setting), or a ``started_by`` file is there without one.
        DatasetError: the stored configuration cannot be read or is malformed.
    """
    path = out_dir / config_file
    if not path.exists():
        orphans = [name for name in started_by if (out_dir / name).exists()]
        if orphans:
            raise ConfigError(
                f"{out_dir} holds {', '.join(orphans)} but no {config_file}; use a new --out"
            )
        out_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(config.model_dump_json(indent=2), encoding="utf-8")
        return
    try:
        stored = type(config).model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e}") from e
    except ValidationError as e:
        raise DatasetError(f"{path}: {validation_problem(e, what)}") from e
    if stored != config:
        raise ConfigError(
            f"{out_dir} holds a run with a different configuration (changed: "
            f"{'; '.join(config_changes(stored, config))}); rerun with the same options "
            "to resume, or use a new --out"
        )


def write_infra_failures(out_dir: Path, failures: Iterable[BaseModel]) -> None:
    """Write ``infra_failures.json``: the units this invocation lost (``[]`` when none).

    Raises:
        OSError: the file cannot be written.
    """
    (out_dir / INFRA_FILE).write_text(
        json.dumps([f.model_dump(mode="json") for f in failures], indent=2), encoding="utf-8"
    )


STOP_GRACE_S: Final = 0.5
"""How long an interrupted batch waits for its running tasks to end, seconds.

A task whose model call was abandoned (a GGUF generation aborts within
milliseconds) ends well within it; one blocked in an endpoint request or an
engine query is left to its daemon thread, so Ctrl-C or SIGTERM stops a run
within 2 s whatever is in flight. A task left so writes nothing more that
matters: its session log ends mid-turn as after a crash, and resume redoes
that turn."""


class _DaemonPool:
    """Worker threads that never hold the process up at exit.

    ``concurrent.futures.ThreadPoolExecutor`` joins its workers when the
    interpreter exits, so a run interrupted while a worker waited on a
    120 s request took up to 120 s to exit. These workers are daemon threads,
    and each task runs in a copy of the submitting thread's context, so the
    call limits set around the batch (:func:`~cypherturn.models.call_limits`)
    reach the model calls the tasks make.
    """

    def __init__(self, workers: int, name: str) -> None:
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._threads = [
            threading.Thread(target=self._work, name=f"{name}_{n}", daemon=True)
            for n in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as error:  # handed to the caller through the future
                future.set_exception(error)

    def submit(self, play: Callable[[T], R], task: T) -> Future[R]:
        """Queue ``play(task)`` to run in a copy of the current context."""
        future: Future[R] = Future()
        context = contextvars.copy_context()
        self._queue.put((future, lambda: context.run(play, task)))
        return future

    def shutdown(self) -> None:
        """Let the workers end after their current task (without waiting for them)."""
        for _ in self._threads:
            self._queue.put(None)


def _hand_over(
    futures: Iterable[Future[R]],
    order: Mapping[Future[R], int],
    tasks: Sequence[T],
    on_done: Callable[[T, R], None],
    on_failed: Callable[[T, ModelError | EngineConnectionError], None],
) -> BaseException | None:
    """Deliver finished futures in submission order; return the first error that is not infrastructure.

    Args:
        futures: finished (or cancelled) futures of :func:`run_batch`.
        order: each future's task number.
        tasks: the batch's tasks.
        on_done: receives a task and its result.
        on_failed: receives a task whose play raised one of :data:`INFRA_ERRORS`.
    """
    fatal: BaseException | None = None
    for future in sorted(futures, key=order.__getitem__):
        task = tasks[order[future]]
        if future.cancelled():
            continue
        error = future.exception()
        if error is None:
            on_done(task, future.result())
        elif isinstance(error, INFRA_ERRORS):
            logger.warning("infrastructure failure, recorded and skipped: %s", error)
            on_failed(task, error)
        elif fatal is None:
            fatal = error
    return fatal


def _interrupted(stop: threading.Event, pending: set[Future[R]], grace_s: float) -> list[Future[R]]:
    """Stop an interrupted batch: abandon model calls, cancel what has not started, wait ``grace_s``.

    Returns:
        The pending futures that are done after the grace (finished or cancelled).
    """
    stop_calls(stop)
    for future in pending:
        future.cancel()
    wait(pending, timeout=grace_s)
    return [f for f in pending if f.done()]


def run_batch(
    tasks: Sequence[T],
    play: Callable[[T], R],
    *,
    on_done: Callable[[T, R], None],
    on_failed: Callable[[T, ModelError | EngineConnectionError], None],
    concurrency: int = 1,
    name: str = "cypherturn-run",
    stop: threading.Event | None = None,
    grace_s: float = STOP_GRACE_S,
) -> None:
    """Play tasks on worker threads, handing each outcome to the calling thread as it finishes.

    At most ``2 * concurrency`` tasks are submitted at a time, so an interrupted
    batch has started little it did not finish. ``on_done`` and ``on_failed`` run
    in the calling thread only (files written there never interleave), in
    submission order among tasks that finish together; with one worker that is
    the order of ``tasks``.

    Interruption (Ctrl-C, SIGTERM, or any error raised in the calling thread):
    ``stop`` is set through :func:`~cypherturn.models.stop_calls`, which also
    abandons the model calls the tasks have in flight; tasks not started are
    cancelled; the running ones get ``grace_s`` to end and are then left to
    their daemon threads. The outcomes of the tasks that finished are handed
    over, then the error propagates.

    Args:
        tasks: the units of work, in the order to submit them.
        play: plays one task (from a worker thread, in a copy of the calling
            thread's context, under ``stop``).
        on_done: receives a task and its result.
        on_failed: receives a task whose ``play`` raised one of :data:`INFRA_ERRORS`;
            the batch continues.
        concurrency: worker threads.
        name: the worker threads' name prefix.
        stop: set when the batch is interrupted (``None``: one of its own); a
            ``play`` that checks it between its steps (a bench session after every
            logged action) ends there, and model calls made under it are abandoned.
        grace_s: how long an interrupted batch waits for its running tasks.

    Raises:
        ConfigError: ``concurrency < 1``.
        Exception: whatever else ``play`` raised (or a ``KeyboardInterrupt``): tasks
            not started are cancelled, the outcomes of those that finished are
            handed over first, then it propagates.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    stop = stop if stop is not None else threading.Event()
    order: dict[Future[R], int] = {}
    pending: set[Future[R]] = set()

    hand_over = functools.partial(
        _hand_over, order=order, tasks=tasks, on_done=on_done, on_failed=on_failed
    )

    def drain(limit: int) -> None:
        nonlocal pending
        while len(pending) > limit:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            fatal = hand_over(finished)
            if fatal is not None:
                raise fatal

    pool = _DaemonPool(concurrency, name)
    try:
        with call_limits(stop=stop):
            for number, task in enumerate(tasks):
                future = pool.submit(play, task)
                order[future] = number
                pending.add(future)
                drain(2 * concurrency - 1)
            drain(0)
    except BaseException:
        # the outcomes of the tasks that finished in the grace are handed over, then it propagates
        hand_over(_interrupted(stop, pending, grace_s))
        raise
    finally:
        pool.shutdown()
