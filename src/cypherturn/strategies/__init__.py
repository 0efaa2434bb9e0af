"""Inference-time strategies for Text-to-Cypher: single pass, Independent Scaling, RAS, grounded RAS+.

``get_strategy(name).run(model, engine, question, schema_text, config)`` answers
one question with at most ``config.budget`` generate-extract-execute attempts
(RAS paper, Algorithms 1 and 2), within ``config.max_seconds`` of wall clock
when set (:class:`TimeBudget`), and returns a :class:`StrategyResult`. A new
strategy is registered by name with :func:`register_strategy`.
"""

from cypherturn.strategies._budget import MIN_QUERY_S, TimeBudget, query_timeout_within
from cypherturn.strategies._context import prefix_context, schema_context, warm_prefix
from cypherturn.strategies._examples import (
    FewShotExample,
    grounded_examples,
    recalled_examples,
    schema_examples,
)
from cypherturn.strategies._extract import extract_cypher
from cypherturn.strategies._grounded import (
    NOTES_HEADER,
    GroundedStrategy,
    answer_key,
    looks_empty,
)
from cypherturn.strategies._prompts import PROMPT_VERSION, PromptSet, load_prompts
from cypherturn.strategies._records import (
    DEFAULT_BUDGET,
    GROUNDING_PARTS,
    RESULT_SCHEMA_VERSION,
    Attempt,
    FollowUp,
    GroundingParts,
    StrategyConfig,
    StrategyResult,
    Verdict,
)
from cypherturn.strategies._registry import (
    GROUNDED,
    STRATEGIES,
    STRATEGY_NAMES,
    StrategyFactory,
    get_strategy,
    register_strategy,
    strategy_names,
)
from cypherturn.strategies._scaling import EMPTY_EXTRACTION_MESSAGE, Strategy, TokenCallback

__all__ = [
    "DEFAULT_BUDGET",
    "EMPTY_EXTRACTION_MESSAGE",
    "GROUNDED",
    "GROUNDING_PARTS",
    "MIN_QUERY_S",
    "NOTES_HEADER",
    "PROMPT_VERSION",
    "RESULT_SCHEMA_VERSION",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "Attempt",
    "FewShotExample",
    "FollowUp",
    "GroundedStrategy",
    "GroundingParts",
    "PromptSet",
    "Strategy",
    "StrategyConfig",
    "StrategyFactory",
    "StrategyResult",
    "TimeBudget",
    "TokenCallback",
    "Verdict",
    "answer_key",
    "extract_cypher",
    "get_strategy",
    "grounded_examples",
    "load_prompts",
    "looks_empty",
    "prefix_context",
    "query_timeout_within",
    "recalled_examples",
    "register_strategy",
    "schema_context",
    "schema_examples",
    "strategy_names",
    "warm_prefix",
]
