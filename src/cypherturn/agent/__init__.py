"""The CypherTurn five-action agent: action parsing, the environment actions, the user simulator.

Every action costs one budget unit (CypherTurn §3.1, appendix D.5, Table 9):
EXECUTE_CYPHER, INSPECT_SCHEMA, SEARCH_VALUES, ASK_USER and SUBMIT_ANSWER. The
protocols in :mod:`cypherturn.protocols` drive the loop.
"""

from cypherturn.agent._grounding import GROUNDING_CHECKS, AgentGrounding, TurnContext
from cypherturn.agent._observe import (
    CURRENT_TURN_ROWS,
    EXECUTE_TIMEOUT_S,
    SEARCH_LIMIT,
    ActionExecutor,
    Observation,
    render_rows,
    render_schema,
)
from cypherturn.agent._parse import (
    ActionCall,
    ParseFailure,
    action_grammar,
    action_schema,
    parse_action,
    salvage_runaway,
    split_reasoning,
)
from cypherturn.agent._simulator import (
    FALLBACK_REPLY,
    IMPATIENCE_AFTER,
    REJECTIONS,
    SIMULATOR_TEMPERATURE,
    SimIntent,
    SimulatorReply,
    UserSimulator,
    schema_terms,
)
from cypherturn.agent._steps import ActionStep, TurnEnd
from cypherturn.agent._tools import parse_tool_call, tool_definitions

__all__ = [
    "CURRENT_TURN_ROWS",
    "EXECUTE_TIMEOUT_S",
    "FALLBACK_REPLY",
    "GROUNDING_CHECKS",
    "IMPATIENCE_AFTER",
    "REJECTIONS",
    "SEARCH_LIMIT",
    "SIMULATOR_TEMPERATURE",
    "ActionCall",
    "ActionExecutor",
    "ActionStep",
    "AgentGrounding",
    "Observation",
    "ParseFailure",
    "SimIntent",
    "SimulatorReply",
    "TurnContext",
    "TurnEnd",
    "UserSimulator",
    "action_grammar",
    "action_schema",
    "parse_action",
    "parse_tool_call",
    "render_rows",
    "render_schema",
    "salvage_runaway",
    "schema_terms",
    "split_reasoning",
    "tool_definitions",
]
