"""The public Python API: every CLI verb as a function that takes a config object.

Only this package and :mod:`cypherturn.cli` turn names (``--engine``,
``--model``, ``--strategy``, ``--graph``) into objects; everything below them
receives objects. A verb takes one pydantic config (what to do: plain values
that can be stored and compared) and, as keywords, the live objects and hooks
that are no configuration (a loaded model, progress callbacks, a status
wrapper). The CLI parses arguments into the config, calls the verb and prints
what it returns.

=====================  ==============================  ========================
command                function                        config
=====================  ==============================  ========================
``ask``                :func:`run_ask` (:func:`ask`)   :class:`AskConfig`
``chat``               :class:`ChatSession`            :class:`ChatConfig`
``load``               :func:`load`                    keywords
``bench build``        :func:`build_benchmark`         :class:`BenchBuildConfig`
``bench import``       :func:`import_benchmark`        :class:`BenchImportConfig`
``bench stats/show``   :func:`bench_stats`,            a path
                       :func:`bench_session`
``bench run``          :func:`run_benchmark`           :class:`BenchRunConfig`
``bench ask``          :func:`run_ask_bench`           :class:`AskBenchConfig`
``bench ask-import``   :func:`import_ask_set`          :class:`AskImportConfig`
``qer run``            :func:`run_qer`                 :class:`QerRun`
``qer questions``      :func:`qer_questions`           :class:`QerQuestionsConfig`
``qer report``         :func:`qer_report`              :class:`QerReportConfig`
``report``             :func:`report`                  :class:`ReportConfig`
``doctor``             :func:`doctor`                  keywords
``learn``              :func:`learn`, :func:`remember`,  keywords
                       :func:`forget`
=====================  ==============================  ========================

Example (it needs the ``pole`` graph and a model, so it is not a doctest)::

    from cypherturn import api

    result = api.ask("How many crimes are there?", graph="pole")
    result.final_query, result.success
"""

from cypherturn.api._ask import (
    DEFAULT_MAX_SECONDS,
    AskConfig,
    answer_within_budget,
    ask,
    memory_examples,
    require_question,
    run_ask,
)
from cypherturn.api._askbench import (
    BENCH_TIMEOUT_S,
    GOLD_TIMEOUT_S,
    AskBenchConfig,
    AskBenchResult,
    AskImportConfig,
    AskImportResult,
    import_ask_set,
    run_ask_bench,
    stratified_sample,
)
from cypherturn.api._bench import (
    BenchBuildConfig,
    BenchBuildResult,
    BenchImportConfig,
    BenchImportResult,
    BenchPlan,
    BenchRunConfig,
    SessionRunConfig,
    bench_session,
    bench_stats,
    build_benchmark,
    import_benchmark,
    run_benchmark,
    run_session,
)
from cypherturn.api._chat import ChatConfig, ChatSession
from cypherturn.api._engines import (
    DEFAULT_GRAPH,
    OFFICIAL_GRAPH_PREFIX,
    bench_engines,
    connect,
    doctor,
    load,
    official_graph_name,
)
from cypherturn.api._hooks import Status, quiet
from cypherturn.api._memory import forget, graph_memory, learn, remember
from cypherturn.api._qer import (
    QerQuestionsConfig,
    QerQuestionsResult,
    QerReportConfig,
    QerReportResult,
    QerRun,
    qer_questions,
    qer_report,
    run_qer,
)
from cypherturn.api._report import ReportConfig, ReportResult, report

__all__ = [
    "BENCH_TIMEOUT_S",
    "DEFAULT_GRAPH",
    "DEFAULT_MAX_SECONDS",
    "GOLD_TIMEOUT_S",
    "OFFICIAL_GRAPH_PREFIX",
    "AskBenchConfig",
    "AskBenchResult",
    "AskConfig",
    "AskImportConfig",
    "AskImportResult",
    "BenchBuildConfig",
    "BenchBuildResult",
    "BenchImportConfig",
    "BenchImportResult",
    "BenchPlan",
    "BenchRunConfig",
    "ChatConfig",
    "ChatSession",
    "QerQuestionsConfig",
    "QerQuestionsResult",
    "QerReportConfig",
    "QerReportResult",
    "QerRun",
    "ReportConfig",
    "ReportResult",
    "SessionRunConfig",
    "Status",
    "answer_within_budget",
    "ask",
    "bench_engines",
    "bench_session",
    "bench_stats",
    "build_benchmark",
    "connect",
    "doctor",
    "forget",
    "graph_memory",
    "import_ask_set",
    "import_benchmark",
    "learn",
    "load",
    "memory_examples",
    "official_graph_name",
    "qer_questions",
    "qer_report",
    "quiet",
    "remember",
    "report",
    "require_question",
    "run_ask",
    "run_ask_bench",
    "run_benchmark",
    "run_qer",
    "run_session",
    "stratified_sample",
]
