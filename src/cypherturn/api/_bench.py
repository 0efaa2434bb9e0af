"""The CypherTurn benchmark (CypherTurn §2-§3): build it, import the official release, play it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn import runner
from cypherturn.agent import AgentGrounding
from cypherturn.api._engines import bench_engines, official_graph_name
from cypherturn.api._hooks import Status, quiet
from cypherturn.errors import ConfigError, DatasetError, QueryError
from cypherturn.graph import GraphEngine, GraphSchema, open_engine
from cypherturn.metrics import Scorer, score_run
from cypherturn.models import ChatModel, load_model
from cypherturn.protocols import ActionFormat, Framing, ProtocolSettings, get_variant
from cypherturn.records import ProtocolName, TurnRecord, TurnScore
from cypherturn.runner import RunSummary, SessionResult
from cypherturn.sessions import (
    DEFAULT_SESSIONS,
    DEFAULT_WORLDS,
    BenchmarkStats,
    BuildReport,
    DivergenceAuditor,
    FileReport,
    GoldResult,
    Session,
    canonical_rows,
    check_reproduction,
    compute_stats,
    plan_build,
    read_official,
    read_sessions,
    rewrite_sessions,
    write_sessions,
)
from cypherturn.sessions import build_sessions as run_build
from cypherturn.worlds import get_world, load_official_graph, load_world

__all__ = [
    "BenchBuildConfig",
    "BenchBuildResult",
    "BenchImportConfig",
    "BenchImportResult",
    "BenchPlan",
    "BenchRunConfig",
    "SessionRunConfig",
    "bench_session",
    "bench_stats",
    "build_benchmark",
    "import_benchmark",
    "run_benchmark",
    "run_session",
]

_E = TypeVar("_E", bound=Enum)


class BenchBuildConfig(BaseModel):
    """What `cypherturn bench build` generates (CypherTurn §2).

    Attributes:
        seed: build seed; the same seed gives a byte-identical file.
        worlds: the worlds sessions are drawn from (default: the seven CypherTurn worlds).
        sessions: number of sessions (paper: 721).
        turns: total turns (``None``: 5,927 scaled to ``sessions``).
        out: the JSONL file written.
        engine_url: the engine the golds are executed and audited on (``None``: embedded).
        graph_seed: seed the worlds are built with.
        scale: world size multiplier (> 0).
        rewrite: rewrite the utterances with this model spec (``None``: off).
    """

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    worlds: list[str] = Field(default_factory=lambda: list(DEFAULT_WORLDS))
    sessions: int = DEFAULT_SESSIONS
    turns: int | None = None
    out: Path = Path("cypherturn-bench.jsonl")
    engine_url: str | None = None
    graph_seed: int = 0
    scale: float = 1.0
    rewrite: str | None = None


@dataclass(frozen=True, slots=True)
class BenchBuildResult:
    """What :func:`build_benchmark` wrote.

    Attributes:
        sessions: the sessions written, in file order.
        report: queries executed and candidates rejected by the audits.
        stats: the benchmark's distributions.
        out: the file written.
        seconds: wall time, building to writing.
    """

    sessions: list[Session]
    report: BuildReport
    stats: BenchmarkStats
    out: Path
    seconds: float


def build_benchmark(
    config: BenchBuildConfig,
    *,
    on_start: Callable[[int], None] | None = None,
    on_session: Callable[[Session], None] | None = None,
    status: Status = quiet,
) -> BenchBuildResult:
    """Generate the benchmark: every gold executed and audited on the engine, then written as JSONL.

    Each world is loaded (replacing it) into the graph ``cypherturn_bench_<world>``.

    Args:
        config: what to build.
        on_start: called once with the number of sessions planned.
        on_session: called after each session is built.
        status: wraps the utterance rewrite, when ``config.rewrite`` is set.

    Returns:
        The :class:`BenchBuildResult`.

    Raises:
        ConfigError: a scale that is not positive, a bad plan (worlds, counts).
        DatasetError: an unknown world.
        EngineConnectionError: the engine cannot be started or reached.
        ModelError: the rewrite model fails.
    """
    if config.scale <= 0:
        raise ConfigError(f"--scale must be positive, got {config.scale}")
    plan = plan_build(
        seed=config.seed, worlds=config.worlds, sessions=config.sessions, turns=config.turns
    )
    worlds_by_name = {name: get_world(name) for name in config.worlds}
    engines: list[GraphEngine] = []

    def provider(name: str) -> tuple[GraphEngine, GraphSchema]:
        target = open_engine(config.engine_url, f"cypherturn_bench_{name}")
        engines.append(target)
        world = worlds_by_name[name]
        load_world(target, world, seed=config.graph_seed, scale=config.scale, replace=True)
        return target, world.declared_schema()

    started = time.perf_counter()
    if on_start is not None:
        on_start(len(plan))
    try:
        built, report = run_build(
            plan,
            provider,
            seed=config.seed,
            graph_seed=config.graph_seed,
            graph_scale=config.scale,
            on_session=on_session,
        )
    finally:
        for target in engines:
            target.close()
    if config.rewrite is not None:
        with status(f"rewriting utterances with {config.rewrite} ..."):
            built = rewrite_sessions(built, load_model(config.rewrite), seed=config.seed)
    write_sessions(config.out, built)
    return BenchBuildResult(
        sessions=built,
        report=report,
        stats=compute_stats(built),
        out=config.out,
        seconds=time.perf_counter() - started,
    )


def bench_stats(path: Path) -> BenchmarkStats:
    """The distributions of a benchmark file (`cypherturn bench stats`).

    Raises:
        DatasetError: the file is missing or malformed.
    """
    return compute_stats(read_sessions(path))


def bench_session(path: Path, session_id: str) -> Session:
    """One session of a benchmark file (`cypherturn bench show`).

    Raises:
        DatasetError: the file is missing or malformed, or has no such session.
    """
    found = next((s for s in read_sessions(path) if s.session_id == session_id), None)
    if found is None:
        raise DatasetError(f"{path} has no session {session_id!r}")
    return found


class BenchImportConfig(BaseModel):
    """What `cypherturn bench import` converts, and how it checks the official golds.

    Attributes:
        paths: official ``<graph>_sessions.json`` files.
        out: the JSONL file written.
        release_root: the release root holding ``data/graphs/<graph>/`` (``None``:
            inferred from each path, ``<root>/.../scenarios/<file>``).
        engine_url: the engine the golds are re-executed on (``None``: embedded).
        check: re-execute every gold on the engine and report reproduction.
        gold: gold results stored: ``official`` (as released) or ``engine``
            (re-executed; needs ``check``).
    """

    model_config = ConfigDict(extra="forbid")

    paths: list[Path]
    out: Path = Path("cypherturn-official.jsonl")
    release_root: Path | None = None
    engine_url: str | None = None
    check: bool = True
    gold: str = "official"


@dataclass(frozen=True, slots=True)
class BenchImportResult:
    """What :func:`import_benchmark` wrote.

    Attributes:
        sessions: the converted sessions, in file order.
        reports: one reproduction report per file (empty without ``check``).
        out: the file written.
    """

    sessions: list[Session]
    reports: list[FileReport]
    out: Path


def import_benchmark(config: BenchImportConfig, *, status: Status = quiet) -> BenchImportResult:
    """Convert official release files to our format; re-execute every gold and report reproduction.

    Each official graph is loaded (replacing it) into ``cypherturn_official_<graph>``.

    Args:
        config: what to import.
        status: wraps the re-execution of each file.

    Returns:
        The :class:`BenchImportResult`.

    Raises:
        ConfigError: a bad ``gold``, ``gold="engine"`` without ``check``, a release
            root that cannot be inferred.
        DatasetError: malformed release files.
        EngineConnectionError: the engine cannot be started or reached.
    """
    if config.gold not in ("official", "engine"):
        raise ConfigError(f"--gold must be official or engine, not {config.gold!r}")
    if config.gold == "engine" and not config.check:
        raise ConfigError("--gold engine needs --check")
    converted: list[Session] = []
    reports: list[FileReport] = []
    engines: dict[str, GraphEngine] = {}
    try:
        for path in config.paths:
            sessions = read_official(path)
            if config.check:
                root = config.release_root or _release_root(path)

                def engine_for(graph: str, root: Path = root) -> GraphEngine:
                    if graph not in engines:
                        engines[graph] = _official_engine(config.engine_url, root, graph)
                    return engines[graph]

                with status(f"re-executing {path.name} ..."):
                    reports.append(check_reproduction(path, sessions, engine_for))
                if config.gold == "engine":
                    sessions = [_with_engine_results(s, engines[s.world]) for s in sessions]
            converted.extend(sessions)
    finally:
        for target in engines.values():
            target.close()
    write_sessions(config.out, converted)
    return BenchImportResult(sessions=converted, reports=reports, out=config.out)


def _release_root(path: Path) -> Path:
    parent = path.resolve().parent
    if parent.name != "scenarios":
        raise ConfigError(f"cannot infer the release root from {path}; pass --release DIR")
    return parent.parent.parent


def _official_engine(url: str | None, root: Path, graph: str) -> GraphEngine:
    folder = root / "data" / "graphs" / graph
    target = open_engine(url, official_graph_name(graph))
    try:
        load_official_graph(
            target, folder / "data.cypher", folder / "schema.json", target.graph, replace=True
        )
    except Exception:
        target.close()
        raise
    return target


def _with_engine_results(session: Session, target: GraphEngine) -> Session:
    auditor = DivergenceAuditor(target)
    turns = []
    for turn in session.turns:
        try:
            result = target.execute(turn.gold_cypher)
        except QueryError:
            turns.append(turn)  # the official answer stays; import_check records the error
            continue
        # FalkorDB sums integers into a float; the stored answer keeps Neo4j's integer
        integral = set(auditor.integer_sum_columns(turn.gold_cypher))
        rows = [
            [
                int(v) if i in integral and isinstance(v, float) and v.is_integer() else v
                for i, v in enumerate(row)
            ]
            for row in result.rows
        ]
        rows = rows if turn.gold_result.ordered else canonical_rows(rows)
        stored = GoldResult(
            columns=list(result.columns), rows=rows, ordered=turn.gold_result.ordered
        )
        turns.append(turn.model_copy(update={"gold_result": stored}))
    return session.model_copy(update={"turns": turns})


class SessionRunConfig(BaseModel):
    """How sessions are played (CypherTurn §3.1): the model, the protocol and its settings.

    Attributes:
        model: the evaluated model's spec.
        model_options: keyword options for :func:`cypherturn.models.load_model`.
        protocol: ``guided`` or ``agentic``.
        budget: agentic budget multiplier m (3, 5, 10; ``None``: the variant's
            default, 3, or 10 for ``budget_encouraging``); guided accepts only 3.
        variant: a registered protocol variant (:func:`~cypherturn.protocols.get_variant`:
            ``base``, ``persistent_schema``, ``disclosed_horizon``, ``budget_encouraging``).
        sim_model: the user simulator's model spec (``None``: the evaluated model).
        engine_url: as in :func:`~cypherturn.api.connect`.
        temperature: sampling temperature of the evaluated model.
        seed: sampling seed.
        max_tokens: completion cap per action step, tokens.
        action_format: ``text`` (one JSON action per reply) or ``tools`` (native
            tool calling; grammar-constrained calls on GGUF models).
        grounding: grounding parts on EXECUTE_CYPHER and SUBMIT_ANSWER, comma-separated
            (``check``, ``repair``, ``values``; ``all``; ``none``, the default and the
            paper's agent). See :class:`~cypherturn.agent.AgentGrounding`.
        framing: ``paper`` (default) or ``explicit`` observation headers
            (:class:`~cypherturn.protocols.Framing`).
        decoding_guards: GGUF models stop at the observation headers and at runaway
            repetition (default off).
        output_note: end the system prompt with the benchmark's column naming
            (``protocols/prompts/output.v1.txt``; default off, as the paper).
        chain_note: end the system prompt (after the output note) with how a follow-up
            builds on an earlier result (``protocols/prompts/chain.v1.txt``; default
            off, as the paper).
        repeat_guard: note an action that repeats an earlier step of the turn and
            sample the next call (default off, as the paper).
        query_memory: guided only: the history shows the query the model submitted
            for each earlier turn (default off, as the paper).
        schema_first: agentic only: the harness takes the session's first action,
            an INSPECT_SCHEMA (default off, as the paper).
        last_action_note: guided only: the footer before a turn's last action says
            that only a query can answer now (default off, as the paper).
        action_grammar: text format, GGUF models: every reply is decoded under the
            action grammar (:func:`~cypherturn.agent.action_grammar`; default off, as
            the paper).
        release_root: the official release's root, for imported official sessions
            (see :func:`~cypherturn.api.bench_engines`).
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "default"
    model_options: dict[str, Any] = Field(default_factory=dict)
    protocol: str = "guided"
    budget: int | None = None
    variant: str = "base"
    sim_model: str | None = None
    engine_url: str | None = None
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int = 512
    action_format: str = "text"
    grounding: str = "none"
    framing: str = "paper"
    decoding_guards: bool = False
    output_note: bool = False
    chain_note: bool = False
    repeat_guard: bool = False
    query_memory: bool = False
    schema_first: bool = False
    last_action_note: bool = False
    action_grammar: bool = False
    release_root: Path | None = None

    def protocol_settings(self) -> ProtocolSettings:
        """The :class:`~cypherturn.protocols.ProtocolSettings` these options name.

        Raises:
            ConfigError: unknown protocol, variant, action format, grounding part or
                framing; a bad budget.
        """
        chosen = _choice(ProtocolName, self.protocol, "protocol")
        variant = get_variant(self.variant)
        action_format = _choice(ActionFormat, self.action_format, "action format")
        framing = _choice(Framing, self.framing, "framing")
        grounding = AgentGrounding.parse(self.grounding)
        budget = self.budget if self.budget is not None else variant.default_multiplier
        try:
            return ProtocolSettings(
                protocol=chosen,
                budget_multiplier=budget,
                variant=variant.name,
                temperature=self.temperature,
                seed=self.seed,
                max_tokens=self.max_tokens,
                action_format=action_format,
                grounding=grounding,
                framing=framing,
                decoding_guards=self.decoding_guards,
                output_note=self.output_note,
                chain_note=self.chain_note,
                repeat_guard=self.repeat_guard,
                query_memory=self.query_memory,
                schema_first=self.schema_first,
                last_action_note=self.last_action_note,
                action_grammar=self.action_grammar,
            )
        except ValidationError as e:
            # the validators' own sentences, without pydantic's wrapping
            reasons = (err["msg"].removeprefix("Value error, ") for err in e.errors())
            raise ConfigError("; ".join(reasons)) from e


class BenchRunConfig(SessionRunConfig):
    """What `cypherturn bench run` plays: a benchmark file into a run directory.

    Attributes:
        benchmark: the benchmark JSONL file (`bench build` / `bench import`).
        out_dir: the run directory (resumed when it holds an earlier run).
        sessions: comma-separated shell patterns over session ids and world names.
        concurrency: sessions played at once.
        score: score the run when it is done.
        (the rest): as in :class:`SessionRunConfig`.
    """

    benchmark: Path
    out_dir: Path
    sessions: str | None = None
    concurrency: int = 1
    score: bool = True


@dataclass(frozen=True, slots=True)
class BenchPlan:
    """The sessions a benchmark run is about to play (passed to ``on_start``).

    Attributes:
        sessions: the selected sessions.
        release_ignored: a release root was given, but no selected session is an
            imported official one, so it is not used.
    """

    sessions: list[Session]
    release_ignored: bool

    @property
    def turns(self) -> int:
        """Turns over the selected sessions."""
        return sum(len(s.turns) for s in self.sessions)


def _choice(kind: type[_E], value: str, what: str) -> _E:
    """``kind(value)``, or a ConfigError naming the option and its choices."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in kind)
        raise ConfigError(f"unknown {what} {value!r}; choose from {choices}") from None


def _models(
    config: SessionRunConfig, model: ChatModel | None, sim_model: ChatModel | None
) -> tuple[ChatModel, ChatModel | None]:
    chat_model = model if model is not None else load_model(config.model, **config.model_options)
    if sim_model is None and config.sim_model is not None:
        sim_model = load_model(config.sim_model)
    return chat_model, sim_model


def run_session(
    session: Session,
    config: SessionRunConfig | None = None,
    *,
    model: ChatModel | None = None,
    sim_model: ChatModel | None = None,
    log_path: Path | None = None,
) -> SessionResult:
    """Play one benchmark session under a protocol (CypherTurn §3.1).

    Args:
        session: the session.
        config: how to play it (``None``: the defaults, guided with the default model).
        model: a loaded evaluated model to use instead of loading ``config.model``.
        sim_model: a loaded simulator model to use instead of ``config.sim_model``.
        log_path: where to write the session's action log.

    Returns:
        The :class:`~cypherturn.runner.SessionResult` with one TurnRecord per turn.

    Raises:
        ConfigError: unknown protocol, variant or model spec; bad budget.
        EngineConnectionError, DatasetError: as in :func:`~cypherturn.api.connect`.
    """
    config = config if config is not None else SessionRunConfig()
    settings = config.protocol_settings()
    chat_model, simulator = _models(config, model, sim_model)
    with bench_engines(
        [session], engine_url=config.engine_url, release_root=config.release_root
    ) as engine_for:
        return runner.run_session(
            session,
            model=chat_model,
            engine=engine_for(session.world),
            settings=settings,
            sim_model=simulator,
            log_path=log_path,
        )


def run_benchmark(
    config: BenchRunConfig,
    *,
    sessions: Sequence[Session] | None = None,
    model: ChatModel | None = None,
    sim_model: ChatModel | None = None,
    on_start: Callable[[BenchPlan], None] | None = None,
    on_session: Callable[[SessionResult], None] | None = None,
    on_scores: Callable[[list[TurnScore]], None] | None = None,
    on_turn: Callable[[TurnRecord], None] | None = None,
) -> RunSummary:
    """Run a benchmark under a protocol into a run directory, resuming one that is there.

    What `cypherturn bench run` calls. Finished sessions of an earlier run with
    the same configuration are kept, not replayed; a different configuration is
    refused. With ``config.score``, the completed sessions are then scored
    (:func:`cypherturn.metrics.score_run`), so ``cypherturn report RUN_DIR`` works.

    Args:
        config: what to play, how, and where to.
        sessions: the session pool to select from instead of reading ``config.benchmark``.
        model / sim_model: loaded models to use instead of the configuration's specs.
        on_start: called once with the selected sessions, before any is played.
        on_session: called after each session (resumed ones included).
        on_scores: when given, each completed session is scored as soon as it
            ends (EX so far) and its :class:`~cypherturn.records.TurnScore` list is
            passed here; the gold results computed then are reused by the final scoring.
        on_turn: called with each turn's record as it is played (not for kept turns).

    Returns:
        The :class:`~cypherturn.runner.RunSummary`.

    Raises:
        ConfigError: bad option, selector matching nothing, changed configuration.
        DatasetError: unreadable benchmark or run directory.
        EngineConnectionError: as in :func:`~cypherturn.api.connect`.
    """
    settings = config.protocol_settings()
    pool = list(sessions) if sessions is not None else read_sessions(config.benchmark)
    chosen = runner.select_sessions(pool, config.sessions)
    if on_start is not None:
        ignored = config.release_root is not None and not any(
            s.source == "official" for s in chosen
        )
        on_start(BenchPlan(sessions=chosen, release_ignored=ignored))
    chat_model, simulator = _models(config, model, sim_model)
    with bench_engines(
        chosen, engine_url=config.engine_url, release_root=config.release_root
    ) as engine_for:
        scorer = Scorer(engine_for)

        def finished(result: SessionResult) -> None:
            if on_session is not None:
                on_session(result)
            if on_scores is not None and result.records:
                on_scores(scorer.score(result.records))

        summary = runner.run_benchmark(
            chosen,
            model=chat_model,
            engines=engine_for,
            settings=settings,
            out_dir=config.out_dir,
            sim_model=simulator,
            n_ctx=config.model_options.get("n_ctx"),
            concurrency=config.concurrency,
            on_session=finished,
            on_turn=on_turn,
        )
        if config.score and summary.turns:
            score_run(
                summary.records_path, engine_for, config.out_dir, gold_cache=scorer.gold_cache
            )
    return summary
