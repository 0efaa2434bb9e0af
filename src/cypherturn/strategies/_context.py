"""The schema context a strategy answers from: the schema prompt and the few-shot examples."""

from __future__ import annotations

from cypherturn.graph import GraphEngine, render_schema_prompt
from cypherturn.grounding import graph_index
from cypherturn.strategies._examples import FewShotExample, schema_examples
from cypherturn.strategies._grounded import GroundedStrategy
from cypherturn.strategies._scaling import Strategy

__all__ = ["schema_context"]


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
