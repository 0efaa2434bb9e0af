"""The schema context a strategy answers from: the schema prompt and the few-shot examples."""

from __future__ import annotations

from cypherturn.graph import GraphEngine, render_schema_prompt
from cypherturn.grounding import graph_index
from cypherturn.models import ChatMessage, ChatModel
from cypherturn.strategies._examples import FewShotExample, schema_examples
from cypherturn.strategies._grounded import GroundedStrategy
from cypherturn.strategies._records import StrategyConfig
from cypherturn.strategies._scaling import Strategy

__all__ = ["prefix_context", "schema_context", "warm_prefix"]


def schema_context(strategy: Strategy, engine: GraphEngine) -> tuple[str, list[FewShotExample]]:
    """The schema text and examples ``strategy`` is given on ``engine``'s graph.

    ``ras+`` builds the graph index anyway, and the index keeps its schema for the
    process (per graph size), so later questions skip the introspection (1 s on
    POLE); the other strategies read the schema from the engine.

    Args:
        strategy: the strategy that will run.
        engine: an engine on the loaded graph.

    Returns:
        ``(schema prompt, schema-derived few-shot examples)``.

    Raises:
        EngineConnectionError: the engine is unreachable.
    """
    schema = (
        graph_index(engine).schema if isinstance(strategy, GroundedStrategy) else engine.schema()
    )
    return render_schema_prompt(schema), schema_examples(schema)


def prefix_context(
    strategy: Strategy, engine: GraphEngine, config: StrategyConfig | None = None
) -> list[ChatMessage]:
    """The attempt-1 context :func:`cypherturn.api.ask` builds, with a placeholder question.

    Everything before its last message is the prompt prefix every question on
    the graph shares (:func:`schema_context`, :meth:`Strategy.initial_context`).

    Raises:
        EngineConnectionError: the engine is unreachable.
        ConfigError: the config names an unknown prompt version.
    """
    schema_text, examples = schema_context(strategy, engine)
    return strategy.initial_context(engine, "?", schema_text, config, examples)


def warm_prefix(model: ChatModel, context: list[ChatMessage]) -> int:
    """Bring the prompt prefix of ``context`` (all but its last message) into ``model`` now.

    A model with a ``warm`` method (in-process GGUF) takes the prefix's state
    from memory or the disk prefix cache, or evaluates and stores it, so the
    next call that starts with it evaluates only what follows. ``cypherturn
    chat`` and ``cypherturn mcp`` call this in the background at start.

    Returns:
        Prompt tokens the model now holds evaluated (0: a model without a prefix cache).

    Raises:
        ModelError: the model cannot be loaded.
        CallAbandoned: the caller's call limits stopped it.
    """
    warm = getattr(model, "warm", None)
    return int(warm(context)) if callable(warm) else 0
