"""LangChain drop-ins: cypherturn as a tool, as a retriever, and its local models as a chat model.

Install with ``pip install 'cypherturn[langchain]'`` (``langchain-core`` only).

* :class:`CypherTurnTool`: a ``BaseTool`` an agent calls with a question; it answers
  with cypherturn's strategy (``ras+`` by default) and returns the Cypher and the
  rows as JSON text, with the whole :class:`~cypherturn.strategies.StrategyResult`
  as the tool message's artifact.
* :class:`CypherTurnRetriever`: a ``BaseRetriever`` whose documents are the result
  rows, one ``Document`` per row, the Cypher in each document's metadata.
* :class:`CypherTurnChatModel`: a ``BaseChatModel`` over any cypherturn model spec.
  It runs a bundled GGUF with the settings the GGUF itself declares, where
  ``langchain_community``'s ``ChatLlamaCpp`` sets ``rope_freq_base=10000`` unless
  told otherwise (Qwen2.5 declares 1,000,000); ``bind_tools`` works through
  cypherturn's schema-constrained tool calls.

Example (needs the ``pole`` graph and the model pack, so not a doctest)::

    from cypherturn.integrations.langchain import CypherTurnTool

    tool = CypherTurnTool.from_graph("pole", model="qwen2.5-coder-1.5b")
    tool.invoke({"question": "How many crimes are there of each type?"})
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

try:
    from langchain_core.callbacks import (
        CallbackManagerForLLMRun,
        CallbackManagerForRetrieverRun,
        CallbackManagerForToolRun,
    )
    from langchain_core.documents import Document
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.messages.tool import invalid_tool_call, tool_call
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool, ToolException
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "cypherturn.integrations.langchain needs LangChain: pip install 'cypherturn[langchain]'"
    ) from e
from pydantic import BaseModel, ConfigDict, Field

from cypherturn.integrations._answerer import GraphAnswerer, answer_payload, row_text
from cypherturn.models import DEFAULT_TEMPERATURE, ChatMessage, ChatModel, ToolCall, ToolSpec
from cypherturn.models import load_model as _load_model
from cypherturn.strategies import StrategyResult

__all__ = ["CypherTurnChatModel", "CypherTurnRetriever", "CypherTurnTool", "GraphQuestion"]


class GraphQuestion(BaseModel):
    """The tool's one argument."""

    question: str = Field(description="A question about the graph, in plain language.")


class CypherTurnTool(BaseTool):
    """Answer a question over one graph: Cypher written, checked and run by cypherturn.

    The content the agent reads is JSON text (:func:`answer_payload`: ``cypher``,
    ``executed``, ``columns``, ``rows``, ``row_count``, ``truncated``), at most
    ``max_rows`` rows. The artifact is the whole ``StrategyResult`` (every
    attempt). When no attempt produced a query that runs, the tool raises
    ``ToolException``; with ``handle_tool_error`` on (the default here) the agent
    reads that message instead of the call failing.
    """

    name: str = "query_graph"
    description: str = (
        "Answers a question about the graph's data by writing and running a read-only "
        "Cypher query. Input: the question in plain language. Output: the query and its rows."
    )
    args_schema: type[BaseModel] = GraphQuestion
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True
    answerer: GraphAnswerer = Field(exclude=True)
    max_rows: int = Field(default=50, ge=1)

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def from_graph(
        cls,
        graph: str,
        *,
        model: str | ChatModel = "default",
        max_rows: int = 50,
        **options: Any,
    ) -> CypherTurnTool:
        """A tool over ``graph``; ``options`` are :class:`~cypherturn.api.AskConfig` fields.

        Raises:
            pydantic.ValidationError: an unknown option or a value out of range.
        """
        answerer = GraphAnswerer.from_options(graph=graph, model=model, **options)
        return cls(answerer=answerer, max_rows=max_rows)

    def _run(
        self, question: str, run_manager: CallbackManagerForToolRun | None = None
    ) -> tuple[str, StrategyResult]:
        result = self.answerer.answer(question)
        if not result.success:
            last = f"; the last was: {result.final_query}" if result.final_query else ""
            stop = f" ({result.stop_reason})" if result.stop_reason else ""
            raise ToolException(
                f"no query that runs was found in {len(result.attempts)} attempt(s){stop}{last}"
            )
        payload = answer_payload(result, max_rows=self.max_rows)
        return json.dumps(payload, ensure_ascii=False, default=str), result


class CypherTurnRetriever(BaseRetriever):
    """Documents that are result rows: ``page_content`` ``"column: value; ..."``.

    Each document's metadata holds ``cypher`` (the query that produced it),
    ``row`` (its index) and ``values`` (the row as a dict). A question no
    attempt could answer with a query that runs yields no documents, and
    ``metadata`` of nothing to carry the query: the run's callbacks see it.
    """

    answerer: GraphAnswerer = Field(exclude=True)
    k: int | None = Field(default=None, ge=1, description="Most documents returned (None: all).")

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def from_graph(
        cls,
        graph: str,
        *,
        model: str | ChatModel = "default",
        k: int | None = None,
        **options: Any,
    ) -> CypherTurnRetriever:
        """A retriever over ``graph``; ``options`` are :class:`~cypherturn.api.AskConfig` fields.

        Raises:
            pydantic.ValidationError: an unknown option or a value out of range.
        """
        return cls(answerer=GraphAnswerer.from_options(graph=graph, model=model, **options), k=k)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        payload = answer_payload(self.answerer.answer(query), max_rows=self.k)
        return [
            Document(
                page_content=row_text(row),
                metadata={"cypher": payload["cypher"], "row": i, "values": row},
            )
            for i, row in enumerate(payload["rows"])
        ]


def _text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    parts = [p if isinstance(p, str) else p.get("text", "") for p in content]
    return "".join(parts)


def _to_message(message: BaseMessage) -> ChatMessage:
    content = _text(message.content)
    if isinstance(message, SystemMessage):
        return ChatMessage(role="system", content=content)
    if isinstance(message, HumanMessage):
        return ChatMessage(role="user", content=content)
    if isinstance(message, ToolMessage):
        return ChatMessage(role="tool", content=content, tool_call_id=message.tool_call_id)
    if isinstance(message, AIMessage):
        calls = [
            ToolCall(id=c.get("id") or "", name=c["name"], arguments=json.dumps(c["args"]))
            for c in message.tool_calls
        ]
        return ChatMessage(role="assistant", content=content, tool_calls=calls)
    raise ValueError(
        f"cypherturn models take system, human, AI and tool messages, not {message.type}"
    )


def _to_ai_message(text: str, calls: Sequence[ToolCall], usage: dict[str, int]) -> AIMessage:
    parsed, invalid = [], []
    for call in calls:
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError as e:
            invalid.append(
                invalid_tool_call(name=call.name, args=call.arguments, id=call.id, error=str(e))
            )
            continue
        parsed.append(
            tool_call(name=call.name, args=args if isinstance(args, dict) else {}, id=call.id)
        )
    return AIMessage(
        content=text,
        tool_calls=parsed,
        invalid_tool_calls=invalid,
        usage_metadata=usage,
    )


class CypherTurnChatModel(BaseChatModel):
    """A LangChain chat model over a cypherturn model (``gguf:``, a model pack, ``openai:``).

    ``bind_tools`` offers functions; a GGUF model then answers with a call whose
    arguments are decoded under the tools' JSON schema (``tool_choice`` is not
    needed: a model offered tools always calls one). ``stop`` strings cut the
    text after decoding.
    """

    model: ChatModel = Field(exclude=True)
    temperature: float = DEFAULT_TEMPERATURE
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def from_spec(cls, spec: str = "default", **fields: Any) -> CypherTurnChatModel:
        """Load the model ``spec`` (as ``--model`` takes it) and wrap it.

        Raises:
            ConfigError: an unknown spec; ModelError: the model cannot be loaded.
        """
        return cls(model=_load_model(spec), **fields)

    @property
    def _llm_type(self) -> str:
        return "cypherturn"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model.spec, "temperature": self.temperature, "seed": self.seed}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = [ToolSpec.model_validate(t["function"]) for t in kwargs.get("tools") or []]
        response = self.model.chat(
            [_to_message(m) for m in messages],
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            tools=tools or None,
            on_token=run_manager.on_llm_new_token if run_manager is not None else None,
        )
        text = response.text
        for marker in stop or []:
            text = text.split(marker, 1)[0]
        usage = {
            "input_tokens": response.prompt_tokens,
            "output_tokens": response.completion_tokens,
            "total_tokens": response.prompt_tokens + response.completion_tokens,
        }
        message = _to_ai_message(text, response.tool_calls, usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Offer ``tools`` (LangChain tools, pydantic models, functions or OpenAI dicts).

        ``tool_choice`` is accepted for the interface and not needed: see the class note.
        """
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)
