"""The text-format action protocol: one action per reply, a JSON object, parsed tolerantly.

Models without native tool calling answer every step with one JSON object::

    {"action": "EXECUTE_CYPHER", "input": "MATCH (n) RETURN count(n)"}

(the format the action prompt documents, CypherTurn appendix D.5, Table 9).
The parser strips reasoning blocks (``<think>...</think>``), ignores code fences
and surrounding prose, takes the first JSON object that names an action and
accepts ``input``, ``payload``, ``query`` or ``question`` as the payload key. A
reply it cannot read yields a :class:`ParseFailure` whose message becomes the
model's observation (the step still costs one budget unit).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from cypherturn.metrics import Action

__all__ = ["ActionCall", "ParseFailure", "parse_action", "split_reasoning"]

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.IGNORECASE | re.DOTALL)
_ORPHAN_CLOSE = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.IGNORECASE | re.DOTALL)
_PAYLOAD_KEYS = ("input", "payload", "query", "question", "arguments", "args")
_DECODER = json.JSONDecoder()


class ActionCall(BaseModel):
    """One parsed action.

    Attributes:
        action: which of the five actions.
        payload: its argument as text (a Cypher query, a question, or the JSON
            object of SEARCH_VALUES serialised); empty for INSPECT_SCHEMA.
    """

    model_config = ConfigDict(frozen=True)

    action: Action
    payload: str = ""


class ParseFailure(BaseModel):
    """A reply that named no usable action.

    Attributes:
        message: what went wrong, worded for the model (it is its observation).
    """

    model_config = ConfigDict(frozen=True)

    message: str


def split_reasoning(text: str) -> tuple[str, str]:
    """Separate reasoning blocks from the visible answer.

    Args:
        text: a raw completion.

    Returns:
        ``(answer, reasoning)``: the text without ``<think>``-style blocks (an
        unclosed block runs to the end; a ``</think>`` with no opening tag ends a
        leading reasoning part), and the reasoning text that was removed.
    """
    reasoning: list[str] = []

    def _take(match: re.Match[str]) -> str:
        reasoning.append(match.group(0))
        return ""

    answer = _THINK.sub(_take, text)
    orphan = _ORPHAN_CLOSE.match(answer)
    if orphan:
        reasoning.append(orphan.group(0))
        answer = answer[orphan.end() :]
    return answer.strip(), "".join(reasoning)


def _action_of(name: Any) -> Action | None:
    if not isinstance(name, str):
        return None
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    try:
        return Action(key)
    except ValueError:
        return None


def _payload_of(obj: dict[str, Any], action: Action) -> str:
    if action is Action.SEARCH_VALUES and "label" in obj:
        # the flat form {"action": ..., "label": ..., "property": ..., "query": ...}
        return json.dumps({k: v for k, v in obj.items() if k != "action"}, ensure_ascii=False)
    for key in _PAYLOAD_KEYS:
        if key in obj and obj[key] is not None:
            value = obj[key]
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def _objects(text: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = _DECODER.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found


def parse_action(text: str) -> ActionCall | ParseFailure:
    """Read the action a model chose from its reply (text format).

    Args:
        text: the raw completion, reasoning blocks, fences and prose included.

    Returns:
        The :class:`ActionCall` of the first JSON object whose ``action`` names
        one of the five actions, or a :class:`ParseFailure` explaining why none did.
    """
    answer, _ = split_reasoning(text)
    if not answer:
        return ParseFailure(message="Your reply was empty. Reply with one JSON action object.")
    objects = _objects(answer)
    if not objects:
        return ParseFailure(
            message="No JSON object found. Reply with exactly one object such as "
            '{"action": "EXECUTE_CYPHER", "input": "MATCH ..."}.'
        )
    unknown: list[str] = []
    for obj in objects:
        action = _action_of(obj.get("action") or obj.get("name") or obj.get("tool"))
        if action is None:
            unknown.append(str(obj.get("action")))
            continue
        payload = _payload_of(obj, action)
        if action in (Action.EXECUTE_CYPHER, Action.SUBMIT_ANSWER, Action.ASK_USER) and not (
            payload.strip()
        ):
            return ParseFailure(message=f'{action.name} needs a non-empty "input".')
        return ActionCall(action=action, payload=payload)
    names = ", ".join(a.name for a in Action)
    return ParseFailure(
        message=f"Unknown action {unknown[0]!r}. The action must be one of: {names}."
    )
