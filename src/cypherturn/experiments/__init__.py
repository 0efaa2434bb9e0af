"""The RAS experiment: QER of Independent vs Reflection-Augmented Scaling (RAS paper §3.3-§5).

Question sets for the Healthcare, Crime (POLE) and Fraud graphs at three
complexity tiers (:mod:`._questions`, :mod:`._templates`, :mod:`._modelgen`),
and the resumable runner that plays every (dataset, model, tier, strategy)
configuration R times with budget n and logs every attempt (:mod:`._runner`).

The gold queries of the question sets, derived at scoring time (:mod:`._golds`), and the
answer accuracy (EX, relaxed EX) of a run's final queries against them (:mod:`._answers`).

The `ask` accuracy set: plain-language questions with gold Cypher (:mod:`._askset`).

The ask benchmark (``cypherturn bench ask``): question sets from any JSONL or a
packaged set (:mod:`._askitems`), every gold re-executed on our engine and
labelled kept, repaired or excluded (:mod:`._askgolds`), and the resumable runner
that answers and scores them (:mod:`._askbench`).
"""

from cypherturn.experiments._answers import (
    AnswerStatus,
    QerAnswer,
    QerAnswers,
    read_qer_config,
    score_qer_answers,
)
from cypherturn.experiments._askbench import (
    AskFailure,
    AskRunConfig,
    AskRunSummary,
    harness_of,
    read_answers,
    run_ask_benchmark,
)
from cypherturn.experiments._askgolds import (
    GoldRepair,
    answer_digest,
    check_gold,
    check_golds,
    property_types,
    reason_counts,
    repair_gold,
)
from cypherturn.experiments._askitems import (
    PACKAGED_ASK_SETS,
    AskItem,
    AskSet,
    read_ask_items,
    write_ask_items,
)
from cypherturn.experiments._askset import (
    ASK_PHENOMENA,
    ASK_SET_SCHEMA_VERSION,
    AskPhenomenon,
    AskQuestion,
    AskSetFile,
    load_ask_set,
    read_ask_file,
)
from cypherturn.experiments._golds import (
    GOLD_VERSION,
    PAPER_GOLDS,
    PAPER_NO_GOLD,
    gold_query,
    no_gold_reason,
)
from cypherturn.experiments._modelgen import (
    MIN_QUESTION_CHARS,
    MODEL_GENERATOR_VERSION,
    QUESTION_ENDINGS,
    TIER_DEFINITIONS,
    TOKENS_PER_QUESTION,
    generate_model_questions,
    sample_subgraph,
)
from cypherturn.experiments._questions import (
    DATASET_GRAPHS,
    DATASETS,
    QUESTION_SET_SCHEMA_VERSION,
    TIERS,
    Question,
    QuestionSet,
    Tier,
    dataset_graph,
    load_question_set,
    read_question_set,
    select_questions,
    validate_question_set,
    write_question_set,
)
from cypherturn.experiments._runner import (
    QER_CONFIG_FILE,
    TRANSCRIPTS_FILE,
    EpisodeKey,
    QerRunConfig,
    QerRunSummary,
    QerTranscript,
    episode_seed,
    plan_tasks,
    question_set_digest,
    run_qer_experiment,
)
from cypherturn.experiments._templates import (
    GENERATOR_VERSION,
    PAPER_QUESTIONS,
    TEMPLATES,
    QuestionTemplate,
    generate_question_set,
)

__all__ = [
    "ASK_PHENOMENA",
    "ASK_SET_SCHEMA_VERSION",
    "DATASETS",
    "DATASET_GRAPHS",
    "GENERATOR_VERSION",
    "GOLD_VERSION",
    "MIN_QUESTION_CHARS",
    "MODEL_GENERATOR_VERSION",
    "PACKAGED_ASK_SETS",
    "PAPER_GOLDS",
    "PAPER_NO_GOLD",
    "PAPER_QUESTIONS",
    "QER_CONFIG_FILE",
    "QUESTION_ENDINGS",
    "QUESTION_SET_SCHEMA_VERSION",
    "TEMPLATES",
    "TIERS",
    "TIER_DEFINITIONS",
    "TOKENS_PER_QUESTION",
    "TRANSCRIPTS_FILE",
    "AnswerStatus",
    "AskFailure",
    "AskItem",
    "AskPhenomenon",
    "AskQuestion",
    "AskRunConfig",
    "AskRunSummary",
    "AskSet",
    "AskSetFile",
    "EpisodeKey",
    "GoldRepair",
    "QerAnswer",
    "QerAnswers",
    "QerRunConfig",
    "QerRunSummary",
    "QerTranscript",
    "Question",
    "QuestionSet",
    "QuestionTemplate",
    "Tier",
    "answer_digest",
    "check_gold",
    "check_golds",
    "dataset_graph",
    "episode_seed",
    "generate_model_questions",
    "generate_question_set",
    "gold_query",
    "harness_of",
    "load_ask_set",
    "load_question_set",
    "no_gold_reason",
    "plan_tasks",
    "property_types",
    "question_set_digest",
    "read_answers",
    "read_ask_file",
    "read_ask_items",
    "read_qer_config",
    "read_question_set",
    "reason_counts",
    "repair_gold",
    "run_ask_benchmark",
    "run_qer_experiment",
    "sample_subgraph",
    "score_qer_answers",
    "select_questions",
    "validate_question_set",
    "write_ask_items",
    "write_question_set",
]
