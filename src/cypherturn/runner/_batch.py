"""Running many sessions concurrently into a run directory, resumably.

The run directory's layout is described in :mod:`cypherturn.records`; the
configuration check, the worker pool and the failure policy are the batch core's
(:mod:`cypherturn.runner._core`), shared with the QER runner.

Resume: a session whose log ends with ``session_end: completed`` under the same
configuration is read back, never replayed. A session killed mid-way, or lost to
an infrastructure failure, continues from its first unfinished turn: the turns
its log finished are kept, the old log is copied to ``aborted/`` and atomically
replaced by a new one that starts with the kept turns' events.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import GraphEngine, GraphSchema
from cypherturn.models import ChatModel
from cypherturn.protocols import (
    ActionFormat,
    PromptSet,
    ProtocolSettings,
    load_prompts,
)
from cypherturn.records import (
    ABORTED_DIR,
    BENCH_CONFIG_FILE,
    INFRA_FILE,
    PROMPTS_FILE,
    RECORDS_FILE,
    SESSIONS_DIR,
    InfraFailure,
    TurnRecord,
    validation_problem,
    write_jsonl,
)
from cypherturn.runner._core import open_run_dir, run_batch, write_infra_failures
from cypherturn.runner._log import (
    SessionFinished,
    SessionStarted,
    SessionStatus,
    TurnFinished,
    finished_turns,
    read_log,
)
from cypherturn.runner._session import (
    FinishedTurn,
    SessionResult,
    run_session,
    session_digest,
    with_variant,
)
from cypherturn.runner._subset import STRATIFIED_PATTERN, stratified_sessions
from cypherturn.sessions import Session

__all__ = [
    "CONFIG_FILE",
    "INFRA_FILE",
    "PROMPTS_FILE",
    "InfraFailure",
    "RunConfig",
    "RunSummary",
    "collect_records",
    "log_path",
    "run_benchmark",
    "select_sessions",
]

CONFIG_FILE = BENCH_CONFIG_FILE


class RunConfig(BaseModel):
    """Everything that decides how sessions are played; a resumed run must match it exactly.

    Attributes:
        schema_version: layout version (1).
        run_id: the run's identifier.
        model: the evaluated model's spec.
        sim_model: the user simulator's model spec (agentic; ``None``: the evaluated model).
        n_ctx: the context window, tokens, requested for the evaluated local model
            when the run set one (``--n-ctx``; llama.cpp caps it at the model's
            training context); ``None``: the model's default (4,096 for GGUF models).
            Left out of the stored configuration and of the digest while ``None``, so
            runs recorded before it existed still resume; a run started with
            ``--n-ctx 4096`` and one without it are different configurations.
        settings: protocol settings.
        prompt_version: the prompt files' version.
        prompt_digest: digest of the prompt texts.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: Literal[1] = 1
    run_id: str = Field(min_length=1)
    model: str
    sim_model: str | None = None
    n_ctx: int | None = Field(default=None, ge=1)
    settings: ProtocolSettings
    prompt_version: int
    prompt_digest: str

    def digest(self) -> str:
        """SHA-256 of the configuration's JSON (hex, 16 characters).

        ``settings.action_format`` is left out when it is ``text``, the only format
        before it became a setting, so logs written then still match.
        """
        exclude = (
            {"settings": {"action_format"}}
            if self.settings.action_format is ActionFormat.TEXT
            else None
        )
        return hashlib.sha256(self.model_dump_json(exclude=exclude).encode()).hexdigest()[:16]

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.n_ctx is None:
            data.pop("n_ctx", None)
        return data


class RunSummary(BaseModel):
    """What :func:`run_benchmark` did.

    Attributes:
        run_id: the run.
        out_dir: the run directory.
        sessions: sessions selected.
        played: sessions played in this invocation (from their start, or continued).
        turns_kept: turns of interrupted sessions kept from their logs, not replayed.
        resumed: sessions read back from an earlier invocation.
        completed: sessions completed (played or resumed).
        turns: turn records written.
        infra_failures: sessions lost to infrastructure failures.
        wall_s: wall time of this invocation, seconds.
    """

    run_id: str
    out_dir: Path
    sessions: int
    played: int
    turns_kept: int = 0
    resumed: int
    completed: int
    turns: int
    infra_failures: list[InfraFailure] = Field(default_factory=list)
    wall_s: float = 0.0

    @property
    def records_path(self) -> Path:
        """The ``records.jsonl`` the scorer reads."""
        return self.out_dir / RECORDS_FILE


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def log_path(out_dir: Path, session_id: str) -> Path:
    """Where a session's log lives in a run directory."""
    return out_dir / SESSIONS_DIR / f"{_UNSAFE.sub('_', session_id)}.jsonl"


def select_sessions(sessions: Sequence[Session], selector: str | None) -> list[Session]:
    """The sessions whose id or world matches a comma-separated list of shell patterns.

    One term may be ``stratified:K``: of the sessions the patterns match (all, when
    there are none), K per world with personas and phenomena balanced
    (:func:`~cypherturn.runner._subset.stratified_sessions`).

    Args:
        sessions: the benchmark.
        selector: e.g. ``"magic_academy"``, ``"ancient_empire-0-*,ocean_kingdom"``,
            ``"stratified:3"``; ``None`` or empty selects every session.

    Returns:
        The matching sessions, in benchmark order.

    Raises:
        ConfigError: the selector matches nothing, or has two ``stratified:`` terms.
    """
    if not selector:
        return list(sessions)
    terms = [p.strip() for p in selector.split(",") if p.strip()]
    counts = [int(m.group(1)) for t in terms if (m := STRATIFIED_PATTERN.fullmatch(t))]
    if len(counts) > 1:
        raise ConfigError(f"{selector!r} has more than one stratified: term")
    patterns = [t for t in terms if not STRATIFIED_PATTERN.fullmatch(t)]
    chosen = [
        s
        for s in sessions
        if not patterns
        or any(
            fnmatch.fnmatchcase(s.session_id, p) or fnmatch.fnmatchcase(s.world, p)
            for p in patterns
        )
    ]
    if counts:
        chosen = stratified_sessions(chosen, counts[0])
    if not chosen:
        raise ConfigError(f"no session id or world matches {selector!r}")
    return chosen


def _logged(
    path: Path, session: Session, config_digest: str, settings: ProtocolSettings
) -> tuple[SessionResult | None, list[FinishedTurn]]:
    """What a session's log holds: its completed result, else the turns it finished.

    Raises:
        ConfigError: the log was written for another version of the session or
            under another configuration.
        DatasetError: the log is unreadable.
    """
    if not path.exists():
        return None, []
    events = read_log(path)
    if not events or not isinstance(events[0], SessionStarted):
        return None, []
    start = events[0]
    if start.session_digest != session_digest(session):
        raise ConfigError(
            f"session {session.session_id} changed since {path} was written; "
            "resume with the same benchmark file, or use a new --out"
        )
    if start.config_digest != config_digest:
        raise ConfigError(f"{path} was written under a different configuration")
    last = events[-1]
    if not (isinstance(last, SessionFinished) and last.status is SessionStatus.COMPLETED):
        return None, finished_turns(events)
    records = [with_variant(e.record, settings) for e in events if isinstance(e, TurnFinished)]
    result = SessionResult(
        session.session_id, SessionStatus.COMPLETED, records=records, resumed=True
    )
    return result, []


def _copy_aside(path: Path, out_dir: Path) -> None:
    """Keep a copy of an interrupted log; the original stays until its replacement is on disk."""
    aborted = out_dir / ABORTED_DIR
    aborted.mkdir(parents=True, exist_ok=True)
    n = 1
    while (target := aborted / f"{path.stem}.{n}.jsonl").exists():
        n += 1
    shutil.copy2(path, target)


def collect_records(out_dir: Path, sessions: Sequence[Session]) -> list[SessionResult]:
    """Read the completed sessions of a run directory (for ``bench score``).

    Args:
        out_dir: the run directory.
        sessions: the sessions to look for.

    Returns:
        The completed sessions' results, in the given order.

    Raises:
        ConfigError: the run directory has no configuration.
    """
    path = out_dir / CONFIG_FILE
    if not path.exists():
        raise ConfigError(f"{out_dir} is not a run directory (no {CONFIG_FILE})")
    try:
        stored = RunConfig.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as e:
        raise ConfigError(f"{path}: {validation_problem(e, 'run configuration')}") from e
    digest = stored.digest()
    found = (
        _logged(log_path(out_dir, s.session_id), s, digest, stored.settings)[0] for s in sessions
    )
    return [r for r in found if r is not None]


def run_benchmark(
    sessions: Sequence[Session],
    *,
    model: ChatModel,
    engines: Callable[[str], GraphEngine],
    settings: ProtocolSettings,
    out_dir: Path,
    run_id: str | None = None,
    sim_model: ChatModel | None = None,
    n_ctx: int | None = None,
    concurrency: int = 1,
    prompts: PromptSet | None = None,
    on_session: Callable[[SessionResult], None] | None = None,
    on_turn: Callable[[TurnRecord], None] | None = None,
) -> RunSummary:
    """Play sessions concurrently into a run directory, resuming an earlier run there.

    Args:
        sessions: the sessions to play (a filtered benchmark).
        model: the evaluated model (shared by the worker threads).
        engines: the engine of a world by name (called once per world, from this thread).
        settings: protocol settings.
        out_dir: the run directory.
        run_id: the run identifier (default: the directory's name).
        sim_model: the user simulator's model (default: ``model``).
        n_ctx: the context window ``model`` was loaded with when the caller set one,
            tokens; recorded in the configuration (:attr:`RunConfig.n_ctx`).
        concurrency: sessions played at once (threads).
        prompts: the prompt set (default: the packaged current version).
        on_session: called in the calling thread after each session, resumed ones
            included.
        on_turn: called from the worker threads, not serialised, with each turn's
            record as it is played (not for turns kept from an interrupted log).

    Returns:
        The :class:`RunSummary`; ``records.jsonl`` and ``infra_failures.json`` are written.

    Raises:
        ConfigError: the directory holds a run with a different configuration, a
            session changed since it was logged, or ``concurrency < 1``.
        DatasetError: a log or the stored configuration cannot be read or written.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    ids = [s.session_id for s in sessions]
    if len(set(ids)) != len(ids):
        raise DatasetError("session ids must be unique")
    started = time.perf_counter()
    prompts = prompts or load_prompts()
    config = RunConfig(
        run_id=run_id or out_dir.name or "run",
        model=model.spec,
        sim_model=sim_model.spec if sim_model is not None else None,
        n_ctx=n_ctx,
        settings=settings,
        prompt_version=prompts.version,
        prompt_digest=prompts.digest(
            settings.action_format,
            output_note=settings.output_note,
            chain_note=settings.chain_note,
        ),
    )
    open_run_dir(out_dir, CONFIG_FILE, config, what="run configuration")
    (out_dir / PROMPTS_FILE).write_text(prompts.model_dump_json(indent=2), encoding="utf-8")
    digest = config.digest()
    results: dict[str, SessionResult] = {}
    pending: list[Session] = []
    kept: dict[str, list[FinishedTurn]] = {}

    def report(result: SessionResult) -> None:
        results[result.session_id] = result
        if on_session is not None:
            on_session(result)

    for session in sessions:
        path = log_path(out_dir, session.session_id)
        done, finished = _logged(path, session, digest, settings)
        if done is not None:
            report(done)
            continue
        if path.exists():
            _copy_aside(path, out_dir)
        kept[session.session_id] = finished
        pending.append(session)

    worlds: dict[str, tuple[GraphEngine, GraphSchema]] = {}
    for session in pending:
        if session.world not in worlds:
            engine = engines(session.world)
            worlds[session.world] = (engine, engine.schema())

    stop = threading.Event()

    def play(session: Session) -> SessionResult:
        engine, schema = worlds[session.world]
        return run_session(
            session,
            model=model,
            engine=engine,
            settings=settings,
            run_id=config.run_id,
            sim_model=sim_model,
            schema=schema,
            prompts=prompts,
            log_path=log_path(out_dir, session.session_id),
            config_digest=digest,
            resume=kept[session.session_id],
            on_turn=on_turn,
            stop=stop,
        )

    # with several workers: interrupted sessions first, then most turns left first,
    # which shrinks the tail where workers idle while one long session finishes;
    # one worker keeps benchmark order (a replay model's responses follow it);
    # records are written in benchmark order either way
    order = pending
    if concurrency > 1:
        order = sorted(
            pending,
            key=lambda s: (
                not kept[s.session_id],
                -(len(s.turns) - len(kept[s.session_id])),
            ),
        )
    run_batch(
        order,
        play,
        on_done=lambda _, result: report(result),
        on_failed=lambda session, error: report(
            SessionResult(session.session_id, SessionStatus.INFRA_FAILURE, error=str(error))
        ),
        concurrency=concurrency,
        stop=stop,
    )

    ordered = [results[i] for i in ids]
    completed = [r for r in ordered if r.status is SessionStatus.COMPLETED]
    failures = [
        InfraFailure(session_id=r.session_id, error=r.error or "")
        for r in ordered
        if r.status is SessionStatus.INFRA_FAILURE
    ]
    turns = write_jsonl(out_dir / RECORDS_FILE, (rec for r in completed for rec in r.records))
    write_infra_failures(out_dir, failures)
    return RunSummary(
        run_id=config.run_id,
        out_dir=out_dir,
        sessions=len(ids),
        played=len(pending),
        turns_kept=sum(len(k) for k in kept.values()),
        resumed=len(ordered) - len(pending),
        completed=len(completed),
        turns=turns,
        infra_failures=failures,
        wall_s=time.perf_counter() - started,
    )
