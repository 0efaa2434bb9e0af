"""The tool wire of a GGUF model: tools a chat template does not know, written as plain messages.

A GGUF chat template knows no tool roles and the model no native tool calls,
so the offered tools are listed in the system message, decoding is constrained
to one JSON call (:func:`tool_call_schema`), and the call is read back from the
completion's text (:func:`constrained_call`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cypherturn.models._base import ChatMessage, ToolCall, ToolSpec

__all__ = ["constrained_call", "tool_call_schema", "wire_messages"]


def tool_call_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """JSON Schema of one call to one of ``tools``: ``{"name": ..., "arguments": {...}}``.

    llama.cpp turns it into a grammar, so a constrained completion is always a
    well-formed call to an offered tool (how a GGUF model gets tool calling
    without a template that supports it).

    Args:
        tools: the offered tools.

    Returns:
        An ``anyOf`` schema with one object branch per tool (``name`` fixed by
        ``const``, ``arguments`` the tool's parameter schema).
    """
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"],
            }
            for t in tools
        ]
    }


def _tool_listing(tools: Sequence[ToolSpec]) -> str:
    listed = "\n".join(
        json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters})
        for t in tools
    )
    return (
        "You can call these tools:\n"
        f"{listed}\n"
        'Call exactly one tool per reply, written as {"name": <tool name>, "arguments": {...}}.'
    )


def wire_messages(
    messages: list[ChatMessage], tools: Sequence[ToolSpec] | None
) -> list[dict[str, str]]:
    """Messages for the model's own chat template, which knows no tool roles.

    A ``tool`` message becomes a ``user`` message; an assistant's call is written
    as the JSON the model produced; the tool listing is appended to the system message.
    """
    out: list[dict[str, str]] = []
    for m in messages:
        content = m.content
        if m.role == "assistant" and not content and m.tool_calls:
            call = m.tool_calls[0]
            content = f'{{"name": {json.dumps(call.name)}, "arguments": {call.arguments or "{}"}}}'
        out.append({"role": "user" if m.role == "tool" else m.role, "content": content})
    if tools:
        listing = _tool_listing(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{listing}"}
        else:
            out.insert(0, {"role": "system", "content": listing})
    return out


def constrained_call(text: str) -> list[ToolCall]:
    """The call a grammar-constrained completion holds ([] when it was cut short).

    llama.cpp's JSON grammar lets raw control characters (newlines) into strings,
    which strict JSON forbids; they are accepted here.
    """
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return []
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return []
    arguments = value.get("arguments", {})
    return [ToolCall(id="call_0", name=value["name"], arguments=json.dumps(arguments))]
