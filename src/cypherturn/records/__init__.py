"""The on-disk records of a run and the run-directory layout: versioned pydantic models.

Every record here carries a ``schema_version`` (a reader refuses a version it
does not know, naming it: :func:`validation_problem`) and documents each field.
Records are read and written through this package (:func:`read_jsonl`,
:func:`write_jsonl`, :class:`JsonlAppender`, :func:`intact_lines`,
:func:`read_run`), so the agent, the protocols, the runner and the scorer share
them without importing one another. The vocabularies the records use,
:class:`Action` and :class:`ProtocolName`, live here for the same reason.

Run-directory layout (the one description; JSON Lines files hold one record per line)::

    RUN_DIR/                              bench run (cypherturn.runner.run_benchmark)
      bench_config.json   RunConfig: model, protocol settings, prompt digest; a resumed
                          run must match it, a changed setting is refused by name
      prompts.json        the prompt texts the run used (their digest is in the config)
      sessions/<id>.jsonl one action log per session, appended as it is played:
                          session_start, step per action, turn_end (with its TurnRecord)
                          per turn, session_end (completed | infra_failure); every line
                          flushed, session_start / turn_end / session_end fsynced
      aborted/<id>.<n>.jsonl  copies of logs an interrupted run left unfinished
      records.jsonl       TurnRecord of every turn of every completed session
      infra_failures.json InfraFailure per session the last invocation lost (unscored)

    RUN_DIR/                              scored run (cypherturn.metrics.score_run)
      run.json            RunManifest: run id, scoring settings, counts, engine
                          executions, the engine (EngineInfo) of each graph, METRICS_VERSION
      records.jsonl       TurnRecord per line: the scorer's input (kept for re-scoring)
      scores.jsonl        TurnScore per line: what reports and the viewer read

    RUN_DIR/                              QER run (cypherturn.experiments.run_qer_experiment)
      qer.json            QerRunConfig: the grid, budget, runs, seeds, question-set digests;
                          a resumed run must match it
      attempts.jsonl      QerEpisode per (configuration, question, run), appended as each
                          finishes: the input of the QER tables; the authority on resume
      transcripts.jsonl   QerTranscript per episode (raw completions, engine messages);
                          trimmed on resume to the episodes attempts.jsonl holds
      infra_failures.json QerFailure per episode the last invocation lost (redone on resume)

    RUN_DIR/                              ask benchmark run (cypherturn bench ask)
      ask.json            AskRunConfig: the question set (name, digest, split), budget,
                          temperature, seed, prompt, limits; a resumed run must match it
      golds.jsonl         GoldCheck per question: kept, repaired (how) or excluded (why),
                          the gold's row count and answer digest on our engine
      answers.jsonl       AskAnswer per (model, strategy, budget, prompt, question),
                          appended as each finishes: executable, EX, relaxed EX, the
                          StrategyResult; the authority on resume

    RUN_DIR/                              ask-accuracy run of the retired
      config.json                         benchmarks/bench_ask_accuracy.py (read by
      records.jsonl                       the viewer; superseded by `bench ask`)

    RUN_DIR/report/       tables and plots (cypherturn report, cypherturn qer report)
    RUN_DIR/view.html     the run viewer's page (cypherturn view)

A benchmark run directory becomes a scored one when ``bench run --score`` (the
default) or ``cypherturn report`` scores it: ``run.json`` and ``scores.jsonl``
are added beside the runner's files. Both runners share one core
(:mod:`cypherturn.runner`): results are appended as they finish, a rerun with
the same configuration skips finished work and continues, and infrastructure
failures are recorded and redone on the next run, never scored.

The records written by other packages (the configurations, the session-log
events, QER transcripts) build on models that live with their owners
(protocol settings, agent steps, strategy results); their file names are here.
"""

from cypherturn.records._ask import (
    ASK_RECORD_VERSION,
    REPAIR_REASONS,
    AskAnswer,
    DataSplit,
    GoldCheck,
    GoldReason,
    GoldStatus,
    Harness,
)
from cypherturn.records._files import (
    ABORTED_DIR,
    ANSWERS_FILE,
    ASK_CONFIG_FILE,
    ATTEMPTS_FILE,
    BENCH_CONFIG_FILE,
    GOLDS_FILE,
    INFRA_FILE,
    MANIFEST_FILE,
    PROMPTS_FILE,
    QER_CONFIG_FILE,
    RECORDS_FILE,
    SCORES_FILE,
    SESSIONS_DIR,
    TRANSCRIPTS_FILE,
    JsonlAppender,
    RunData,
    config_changes,
    intact_lines,
    read_jsonl,
    read_model,
    read_run,
    validation_problem,
    write_jsonl,
)
from cypherturn.records._models import (
    BASE_VARIANT,
    METRICS_VERSION,
    SCHEMA_VERSION,
    STORED_CONTEXT,
    UNKNOWN_VERSION,
    Action,
    EngineInfo,
    ExecutionStats,
    InfraFailure,
    PredictionStatus,
    ProtocolName,
    PsjsStatus,
    QerEpisode,
    QerFailure,
    QueryAttempt,
    RunManifest,
    ScoringSettings,
    SessionKey,
    StrategyAttemptLike,
    StrategyResultLike,
    TurnEnd,
    TurnRecord,
    TurnScore,
    episode_from_strategy_result,
)

__all__ = [
    "ABORTED_DIR",
    "ANSWERS_FILE",
    "ASK_CONFIG_FILE",
    "ASK_RECORD_VERSION",
    "ATTEMPTS_FILE",
    "BASE_VARIANT",
    "BENCH_CONFIG_FILE",
    "GOLDS_FILE",
    "INFRA_FILE",
    "MANIFEST_FILE",
    "METRICS_VERSION",
    "PROMPTS_FILE",
    "QER_CONFIG_FILE",
    "RECORDS_FILE",
    "REPAIR_REASONS",
    "SCHEMA_VERSION",
    "SCORES_FILE",
    "SESSIONS_DIR",
    "STORED_CONTEXT",
    "TRANSCRIPTS_FILE",
    "UNKNOWN_VERSION",
    "Action",
    "AskAnswer",
    "DataSplit",
    "EngineInfo",
    "ExecutionStats",
    "GoldCheck",
    "GoldReason",
    "GoldStatus",
    "Harness",
    "InfraFailure",
    "JsonlAppender",
    "PredictionStatus",
    "ProtocolName",
    "PsjsStatus",
    "QerEpisode",
    "QerFailure",
    "QueryAttempt",
    "RunData",
    "RunManifest",
    "ScoringSettings",
    "SessionKey",
    "StrategyAttemptLike",
    "StrategyResultLike",
    "TurnEnd",
    "TurnRecord",
    "TurnScore",
    "config_changes",
    "episode_from_strategy_result",
    "intact_lines",
    "read_jsonl",
    "read_model",
    "read_run",
    "validation_problem",
    "write_jsonl",
]
