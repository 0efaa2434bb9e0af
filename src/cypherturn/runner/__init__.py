"""The batch runner: benchmark sessions (and, through its core, QER episodes), resumably.

:func:`run_session` plays and logs one session; :func:`run_benchmark` plays
many concurrently into a run directory, resumes a killed run without redoing a
finished session, refuses a changed configuration, keeps infrastructure
failures apart, and writes the ``records.jsonl`` that
:func:`cypherturn.metrics.score_run` scores.

Records written before they named why each turn ended, its action counts and the
simulator are completed from the run directory's own files by
:func:`with_logged_play`.

The core both batch runs share (:mod:`._core`; the QER runner,
:func:`cypherturn.experiments.run_qer_experiment`, is built on it too):
:func:`open_run_dir` (store the configuration, or refuse a changed one),
:func:`run_batch` (worker threads; outcomes handed to the calling thread as they
finish, to be appended at once; the failure policy) and
:func:`write_infra_failures`. The run-directory layout: :mod:`cypherturn.records`.
"""

from cypherturn.runner._backfill import with_logged_play
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
from cypherturn.runner._core import (
    INFRA_ERRORS,
    STOP_GRACE_S,
    open_run_dir,
    run_batch,
    write_infra_failures,
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
    "INFRA_ERRORS",
    "INFRA_FILE",
    "LOG_SCHEMA_VERSION",
    "PROMPTS_FILE",
    "STOP_GRACE_S",
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
    "open_run_dir",
    "read_log",
    "run_batch",
    "run_benchmark",
    "run_session",
    "select_sessions",
    "session_digest",
    "turn_record",
    "with_logged_play",
    "write_infra_failures",
]
