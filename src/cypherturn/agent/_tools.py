"""The five actions as OpenAI-style tool definitions, and reading a native tool call back.

For native tool calling (OpenAI ``tools`` / ``tool_calls`` on endpoints that
support it, grammar-constrained calls on GGUF models): :func:`tool_definitions`
gives the five :class:`~cypherturn.models.ToolSpec` s, :func:`parse_tool_call`
turns one returned call (function name, JSON argument string) into the same
:class:`~cypherturn.agent.ActionCall` the text format yields, or a
:class:`~cypherturn.agent.ParseFailure` observation.
"""

from __future__ import annotations

import json
from typing import Any

from cypherturn.agent._parse import ActionCall, ParseFailure
from cypherturn.models import ToolSpec
from cypherturn.records import Action

__all__ = ["parse_tool_call", "tool_definitions"]

_STRING = {"type": "string"}
_PARAMETERS: dict[Action, tuple[str, dict[str, Any], list[str]]] = {
    Action.EXECUTE_CYPHER: (
        "Run a read-only Cypher query; returns up to 20 rows or the database error.",
        {"query": _STRING},
        ["query"],
    ),
    Action.INSPECT_SCHEMA: (
        "Show every node label with typed properties and every relationship type with its "
        "source and target labels.",
        {},
        [],
    ),
    Action.SEARCH_VALUES: (
        "Find up to 10 stored values of one property of one label that match a keyword.",
        {"label": _STRING, "property": _STRING, "query": _STRING},
        ["label", "property", "query"],
    ),
    Action.ASK_USER: (
        "Ask the user a clarifying question; returns the reply.",
        {"question": _STRING},
        ["question"],
    ),
    Action.SUBMIT_ANSWER: (
        "Submit the final Cypher query for the current question; ends the turn.",
        {"query": _STRING},
        ["query"],
    ),
}


def tool_definitions() -> list[ToolSpec]:
    """The five actions as tools (CypherTurn App. D.5, Table 9), one function per action.

    Returns:
        Five :class:`ToolSpec` s named by the upper-case action names
        (``EXECUTE_CYPHER``, ...); ``ToolSpec.openai()`` gives the request layout.
    """
    return [
        ToolSpec(
            name=action.name,
            description=description,
            parameters={
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        )
        for action, (description, properties, required) in _PARAMETERS.items()
    ]


def parse_tool_call(name: str, arguments: str | dict[str, Any] | None) -> ActionCall | ParseFailure:
    """Read one native tool call as an action.

    Args:
        name: the called function's name (case and ``-``/space insensitive).
        arguments: its arguments, as the JSON string the endpoint returned or a dict.

    Returns:
        The :class:`ActionCall` (SEARCH_VALUES keeps its arguments as a JSON
        object string; the others take their one string argument), or a
        :class:`ParseFailure` naming the problem.
    """
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    try:
        action = Action(key)
    except ValueError:
        return ParseFailure(message=f"Unknown tool {name!r}.")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as e:
            return ParseFailure(message=f"The arguments of {action.name} are not valid JSON: {e}.")
    else:
        parsed = arguments or {}
    if not isinstance(parsed, dict):
        return ParseFailure(message=f"The arguments of {action.name} must be a JSON object.")
    _, _, required = _PARAMETERS[action]
    if action is Action.SEARCH_VALUES:
        return ActionCall(action=action, payload=json.dumps(parsed, ensure_ascii=False))
    if not required:
        return ActionCall(action=action)
    value = parsed.get(required[0])
    if not isinstance(value, str) or not value.strip():
        return ParseFailure(message=f'{action.name} needs a non-empty string "{required[0]}".')
    return ActionCall(action=action, payload=value)
