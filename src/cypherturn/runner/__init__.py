"""The benchmark runner: sessions played under a protocol, logged per action, resumable.

:func:`run_session` plays and logs one session; :func:`run_benchmark` plays
many concurrently into a run directory, resumes a killed run without redoing a
finished session, refuses a changed configuration, keeps infrastructure
failures apart, and writes the ``records.jsonl`` that
:func:`cypherturn.metrics.score_run` scores.
"""

from cypherturn.runner._batch import (
    CONFIG_FILE,
    INFRA_FILE,
    PROMPTS_FILE,
    InfraFailure,
    RunConfig,
    RunSummary,
    collect_records,
    log_path,
    run_benchmark,
    select_sessions,
)
from cypherturn.runner._log import (
    LOG_SCHEMA_VERSION,
    LogEvent,
    SessionFinished,
    SessionLog,
    SessionStarted,
    SessionStatus,
    StepLogged,
    TurnFinished,
    read_log,
)
from cypherturn.runner._session import SessionResult, run_session, session_digest, turn_record

__all__ = [
    "CONFIG_FILE",
    "INFRA_FILE",
    "LOG_SCHEMA_VERSION",
    "PROMPTS_FILE",
    "InfraFailure",
    "LogEvent",
    "RunConfig",
    "RunSummary",
    "SessionFinished",
    "SessionLog",
    "SessionResult",
    "SessionStarted",
    "SessionStatus",
    "StepLogged",
    "TurnFinished",
    "collect_records",
    "log_path",
    "read_log",
    "run_benchmark",
    "run_session",
    "select_sessions",
    "session_digest",
    "turn_record",
]
