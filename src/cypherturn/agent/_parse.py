"""The text-format action protocol: one action per reply, a JSON object, parsed tolerantly.

Models without native tool calling answer every step with one JSON object::

    {"action": "EXECUTE_CYPHER", "input": "MATCH (n) RETURN count(n)"}

(the format the action prompt documents, CypherTurn appendix D.5, Table 9).
The parser strips reasoning blocks (``<think>...</think>``), ignores code fences
and surrounding prose, takes the first JSON object that names an action and
accepts ``input``, ``payload``, ``query`` or ``question`` as the payload key. A
reply it cannot read yields a :class:`ParseFailure` whose message becomes the
model's observation (the step still costs one budget unit).

The parser is lenient in the same way for every model (docs/design/protocols.md,
"Action space"): an object
that is not valid JSON is read again after the mistakes models commonly make are
undone. A backslash before a character JSON cannot escape (``\\'``, ``\\_``) is
kept as written, since it belongs to the Cypher inside the string; single
quotes, trailing commas, unquoted keys and unescaped inner quotes are repaired
by the json-repair library. An object that is never closed is completed only
when the reply ended by itself (``parse_action(..., ended=True)``); one cut off at
the token cap mid-query is not, since that would run a truncated query, except a
query whose final ``RETURN`` list had begun to repeat itself
(:func:`salvage_runaway`). Markdown escapes
outside string literals of a Cypher payload (``PARTY\\_TO``) are dropped. Every
such reading sets :attr:`ActionCall.repaired`, which the step record keeps.

A reply with no JSON object that names an action is read in two text forms, also
marked repaired: an action name followed by its input (``EXECUTE_CYPHER: MATCH ...``,
or ReAct's ``Action: EXECUTE_CYPHER`` / ``Action Input: MATCH ...``), and a bare query
whose first clause is a reading one (``MATCH``, ``OPTIONAL MATCH``, ``WITH``, ``UNWIND``,
``CALL``, ``RETURN``), read as EXECUTE_CYPHER: the model sees the rows and still chooses
what to submit. Qwen2.5-Coder-1.5B answered 6 of 619 agentic actions this way with the
schema in its prompt (``agentic3-1.5b-schema-first``). A bare query ends at a blank line or
at a line opening with a header such as ``Result:``, so an explanation or an imitated
result after it is not executed.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import json_repair
from pydantic import BaseModel, ConfigDict

from cypherturn.cypher import runaway_projection_end, unescape_markdown
from cypherturn.records import Action

__all__ = [
    "ActionCall",
    "ParseFailure",
    "action_grammar",
    "action_schema",
    "parse_action",
    "salvage_runaway",
    "split_reasoning",
]

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.IGNORECASE | re.DOTALL)
_ORPHAN_CLOSE = re.compile(r"^.*?</(?:think|thinking|reasoning)>", re.IGNORECASE | re.DOTALL)
_PAYLOAD_KEYS = ("input", "payload", "query", "question", "arguments", "args")
# A backslash and the character after it: pairs are consumed together, so an escaped
# backslash followed by "_" is not mistaken for an invalid escape.
_ESCAPE = re.compile(r"\\(.?)", re.DOTALL)
_CYPHER_ACTIONS = (Action.EXECUTE_CYPHER, Action.SUBMIT_ANSWER)
_NEEDS_INPUT = (Action.EXECUTE_CYPHER, Action.SUBMIT_ANSWER, Action.ASK_USER)
# A language tag ends at the fence's first newline and is never a clause keyword (```OPTIONAL
# then MATCH ... on the next line is a query); on a one-line fence (```MATCH (n) RETURN n```)
# only a known tag is one, else the query's first word would be read as the tag.
_FENCED = re.compile(
    r"^```(?:(?!(?i:optional|match|with|return|unwind|call|union)\b)[\w-]*[ \t]*\n"
    r"|(?i:cypher|cql|opencypher|neo4j|json|sql)[ \t]+)?(?P<body>.*?)\n?```$",
    re.DOTALL,
)
_NAMED = re.compile(
    r"^(?:action\s*:\s*)?(?P<name>(?:execute|submit|inspect|search|ask)[_ ]"
    r"(?:cypher|answer|schema|values|user))\b[ \t]*(?:\n\s*(?:action[_ ])?input\s*)?"
    r"[:=\-]?\s*(?P<payload>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# where a bare query ends: a blank line, or a line opening with a capitalised header such as
# "Result:", "Explanation:" or "SUBMIT_ANSWER:" (the 0.5B model wrote the query, then imitated
# its result and an action, in one reply)
_QUERY_END = re.compile(r"\n\s*\n|\n(?=[ \t]*[A-Z][A-Za-z_ ]*:)")
_READING_CLAUSE = re.compile(
    r"^(?:optional\s+match|match|with|unwind|call|return)\b", re.IGNORECASE
)


class ActionCall(BaseModel):
    """One parsed action.

    Attributes:
        action: which of the five actions.
        payload: its argument as text (a Cypher query, a question, or the JSON
            object of SEARCH_VALUES serialised); empty for INSPECT_SCHEMA.
        repaired: the reply was not read as written: its object was not valid
            JSON, or Markdown escapes were dropped from its Cypher.
    """

    model_config = ConfigDict(frozen=True)

    action: Action
    payload: str = ""
    repaired: bool = False


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


def _named(obj: dict[str, Any]) -> Any:
    """What an object names as its action (``action``, ``name`` or ``tool``)."""
    return obj.get("action") or obj.get("name") or obj.get("tool")


def _payload_of(obj: dict[str, Any], action: Action) -> str:
    if action is Action.SEARCH_VALUES and "label" in obj:
        # the flat form {"action": ..., "label": ..., "property": ..., "query": ...}
        return json.dumps({k: v for k, v in obj.items() if k != "action"}, ensure_ascii=False)
    for key in _PAYLOAD_KEYS:
        if key in obj and obj[key] is not None:
            value = obj[key]
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def _scan(text: str, start: int) -> tuple[int | None, int, str]:
    """Scan the object at ``start``: ``(offset past its closing }, or None; depth and open quote at the end)``.

    Braces inside ``"..."`` or ``'...'`` strings (backslash escapes skipped) are not counted.
    """
    depth = 0
    quote = ""
    i = start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1, 0, ""
        i += 1
    return None, depth, quote


def _object_end(text: str, start: int) -> int | None:
    """Offset just past the ``}`` that closes the ``{`` at ``start``; None when it never closes."""
    return _scan(text, start)[0]


def _closed_at_end(text: str, start: int, ended: bool) -> tuple[str, bool] | None:
    """The object at ``start``, left open at the end of ``text``, with what it misses added.

    Qwen2.5-Coder-0.5B wrote ``{"action": "SEARCH_VALUES", "input": {"label": ...,
    "query": "..."}`` (one ``}`` short) in 15 of 609 guided actions, and the inner
    object, which names no action, was read instead. A reply that stops inside a
    double-quoted string is closed only when it ``ended`` by itself (end of sequence,
    or a stop sequence where the model began to write the user's reply); one cut off
    at the token cap has a last value that cannot be trusted. A single quote left
    open is prose (``{movie's title}``), never closed.

    Returns:
        ``(closed text, a string was closed)``, or None.
    """
    end, depth, quote = _scan(text, start)
    if end is not None or depth <= 0 or quote == "'" or (quote and not ended):
        return None
    body = text[start:].rstrip()
    if quote:
        # a dangling backslash would escape the quote that closes the string
        trailing = len(body) - len(body.rstrip("\\"))
        body = body[: len(body) - trailing % 2]
    return body + quote + "}" * depth, bool(quote)


def _keep_invalid_escape(match: re.Match[str]) -> str:
    """Double a backslash that starts no JSON escape (RFC 8259 §7), so it reads as written."""
    escaped = match.group(1)
    return match.group(0) if escaped and escaped in '\\"/bfnrtu' else "\\" + match.group(0)


def _read_object(candidate: str) -> tuple[dict[str, Any] | None, bool, str]:
    """Decode one ``{...}`` span: ``(object or None, repaired, decoder error)``."""
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as e:
        error = str(e)
    else:
        return (value, False, "") if isinstance(value, dict) else (None, False, "not an object")
    try:
        value = json.loads(_ESCAPE.sub(_keep_invalid_escape, candidate))
    except json.JSONDecodeError:
        value = json_repair.loads(candidate)
    return (value, True, "") if isinstance(value, dict) and value else (None, True, error)


def _objects(text: str, ended: bool) -> tuple[list[tuple[dict[str, Any], bool]], str, bool]:
    """The JSON objects of a reply, each with whether it was repaired (``ended``: see :func:`parse_action`).

    Returns:
        ``(objects, first decoder error, an object was left unclosed)``.
    """
    found: list[tuple[dict[str, Any], bool]] = []
    # an object closed inside a string is read only when no later one names an action:
    # the open string may be prose that swallowed the real object
    string_closed: tuple[dict[str, Any], bool] | None = None
    error = ""
    unclosed = False
    index = text.find("{")
    while index != -1:
        end = _object_end(text, index)
        if end is None:
            closed = _closed_at_end(text, index, ended)
            if closed is not None:
                value, _, _ = _read_object(closed[0])
                if value is not None and not closed[1]:
                    found.append((value, True))
                    break
                if value is not None and string_closed is None:
                    string_closed = (value, True)
            unclosed = True
            index = text.find("{", index + 1)
            continue
        value, repaired, problem = _read_object(text[index:end])
        if value is None:
            error = error or problem
            index = text.find("{", index + 1)
            continue
        found.append((value, repaired))
        index = text.find("{", end)
    if string_closed is not None and not any(_action_of(_named(obj)) for obj, _ in found):
        found.append(string_closed)
    return found, error, unclosed


def _unfence(text: str) -> str:
    """The text inside one Markdown code fence around all of ``text``, else ``text``."""
    text = text.replace("\r\n", "\n").strip()
    fenced = _FENCED.match(text)
    return fenced.group("body").strip() if fenced else text


def _text_action(answer: str) -> ActionCall | ParseFailure | None:
    """The action of a reply written without a JSON object (module docstring), if it names one."""
    body = _unfence(answer)
    named = _NAMED.match(body)
    if named:
        action = _action_of(named.group("name"))
        if action is None:
            return None
        payload = _unfence(named.group("payload")).strip()
        if action is Action.INSPECT_SCHEMA:
            payload = ""
        elif len(payload) > 1 and payload[0] == payload[-1] and payload[0] in "\"'`":
            payload = payload[1:-1].strip()
        if payload.startswith(",") or _NAMED.match(payload):
            # "EXECUTE_CYPHER, SUBMIT_ANSWER, ASK_USER, ..." lists the actions; it chooses none
            return None
    elif _READING_CLAUSE.match(body):
        action, payload = Action.EXECUTE_CYPHER, _QUERY_END.split(body, maxsplit=1)[0].strip()
    else:
        return None
    if action in _NEEDS_INPUT and not payload:
        return ParseFailure(message=f'{action.name} needs a non-empty "input".')
    if action in _CYPHER_ACTIONS:
        payload = unescape_markdown(payload)
    return ActionCall(action=action, payload=payload, repaired=True)


def parse_action(text: str, *, ended: bool = False) -> ActionCall | ParseFailure:
    """Read the action a model chose from its reply (text format).

    Args:
        text: the raw completion, reasoning blocks, fences and prose included.
        ended: the completion ended by itself (end of sequence or a stop sequence),
            not at the token cap: an action object left open inside its last string
            is then closed and read (marked repaired). Qwen2.5-Coder-1.5B wrote
            ``{"action": "ASK_USER", "input": "Are you sure about ...?`` and went on
            with the user's reply, where the ``\nUser:`` stop sequence ended it.

    Returns:
        The :class:`ActionCall` of the first JSON object whose ``action`` names
        one of the five actions (``repaired`` set when the object or its Cypher
        had to be repaired), else of the reply's text form (an action name and its
        input, or a bare reading query as EXECUTE_CYPHER; ``repaired`` set), or a
        :class:`ParseFailure` saying why none did: no
        ``{`` at all, an object never closed, one that cannot be read even after
        repair, no ``action`` key, or an unknown action.
    """
    answer, _ = split_reasoning(text)
    if not answer:
        return ParseFailure(message="Your reply was empty. Reply with one JSON action object.")
    example = '{"action": "EXECUTE_CYPHER", "input": "MATCH ..."}'
    objects, error, unclosed = _objects(answer, ended)
    if not any(_action_of(_named(obj)) for obj, _ in objects):
        text_action = _text_action(answer)
        if text_action is not None:
            return text_action
    if not objects:
        if unclosed:
            reason = "Your JSON object is not closed (a missing '}'; was the reply cut off?)."
        elif error:
            reason = f"Your JSON object could not be read ({error})."
        else:
            reason = "No JSON object found."
        return ParseFailure(message=f"{reason} Reply with exactly one object such as {example}.")
    unknown: list[str] = []
    for obj, repaired in objects:
        named = _named(obj)
        action = _action_of(named)
        if action is None:
            unknown.append(str(named))
            continue
        payload = _payload_of(obj, action)
        if action in _NEEDS_INPUT and not payload.strip():
            return ParseFailure(message=f'{action.name} needs a non-empty "input".')
        if action in _CYPHER_ACTIONS:
            unescaped = unescape_markdown(payload)
            repaired = repaired or unescaped != payload
            payload = unescaped
        return ActionCall(action=action, payload=payload, repaired=repaired)
    names = ", ".join(a.name for a in Action)
    if all(name == "None" for name in unknown):
        return ParseFailure(
            message=f'Your JSON object has no "action" key. The action must be one of: {names}.'
        )
    first = next(name for name in unknown if name != "None")
    return ParseFailure(message=f"Unknown action {first!r}. The action must be one of: {names}.")


_CUT_CYPHER_ACTION = re.compile(
    r'^\s*(?:```[\w-]*\s*)?\{\s*"action"\s*:\s*"(?P<name>EXECUTE_CYPHER|SUBMIT_ANSWER)"\s*,'
    r'\s*"(?:input|payload|query|arguments|args)"\s*:\s*"(?P<query>(?:[^"\\]|\\.)*)\\?$',
    re.IGNORECASE | re.DOTALL,
)


def salvage_runaway(text: str) -> ActionCall | None:
    """The Cypher action of a reply stopped while its projection repeated itself, if it is one.

    For a reply that was stopped (token cap or repetition guard) inside the query
    string of an EXECUTE_CYPHER or SUBMIT_ANSWER object, whose last ``RETURN``/``WITH``
    list had begun to repeat its items: the action with the query up to the first
    repeated item (:func:`cypherturn.cypher.runaway_projection_end`), marked repaired.
    Only a query cut inside that list is read; a reply cut anywhere else gets the
    cut-off observation, since its query would be truncated.

    Args:
        text: the raw completion.

    Returns:
        The :class:`ActionCall`, or None when the reply is not such a runaway.
    """
    answer, _ = split_reasoning(text)
    cut = _CUT_CYPHER_ACTION.match(answer)
    if cut is None:
        return None
    # a \uXXXX escape the cut left unfinished is dropped; raw newlines are kept (strict=False:
    # llama.cpp's JSON grammar lets them into strings)
    content = re.sub(r"\\u[0-9a-fA-F]{0,3}$", "", cut.group("query"))
    try:
        query = json.loads('"' + _ESCAPE.sub(_keep_invalid_escape, content) + '"', strict=False)
    except json.JSONDecodeError:
        return None
    end = runaway_projection_end(query)
    if end is None:
        return None
    action = _action_of(cut.group("name"))
    assert action is not None  # the pattern admits the two Cypher actions only
    return ActionCall(action=action, payload=unescape_markdown(query[:end]), repaired=True)


def action_schema() -> dict[str, Any]:
    """JSON Schema of one text-format action object, as the action prompt documents it.

    One branch per action (``action`` fixed by ``const``, keys in the prompt's
    order): EXECUTE_CYPHER, SUBMIT_ANSWER and ASK_USER take a non-empty string
    ``input``, SEARCH_VALUES an object of non-empty ``label``, ``property`` and
    ``query``, INSPECT_SCHEMA nothing.

    Returns:
        A ``oneOf`` schema.
    """
    text = {"type": "string", "minLength": 1}
    search = {
        "type": "object",
        "properties": {"label": text, "property": text, "query": text},
        "required": ["label", "property", "query"],
        "additionalProperties": False,
    }
    branches = []
    for action in Action:
        properties: dict[str, Any] = {"action": {"const": action.name}}
        if action is Action.SEARCH_VALUES:
            properties["input"] = search
        elif action is not Action.INSPECT_SCHEMA:
            properties["input"] = text
        branches.append(
            {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            }
        )
    return {"oneOf": branches}


@cache
def action_grammar() -> str:
    """llama.cpp GBNF text whose every match is one action object of :func:`action_schema`.

    Built by llama-cpp-python's ``json_schema_to_gbnf``. A completion decoded under it
    starts with ``{"action": `` and ends with the object's ``}`` (or is cut at the
    token cap inside it), so prose, imitated turns, code fences and an action without
    its input cannot be written; the parser still reads it, as any reply.

    Returns:
        The grammar (start rule ``root``).
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    order = ["action", "input", "label", "property", "query"]
    return json_schema_to_gbnf(json.dumps(action_schema()), prop_order=order)
