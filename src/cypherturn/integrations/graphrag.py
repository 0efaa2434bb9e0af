"""neo4j-graphrag drop-ins: cypherturn as a ``Retriever``, and its local models as an LLM.

Install with ``pip install 'cypherturn[graphrag]'``.

* :class:`CypherTurnRetriever`: a ``neo4j_graphrag.retrievers.base.Retriever``
  in the place of ``Text2CypherRetriever``. It answers with cypherturn's
  strategy (``ras+`` by default) over any engine cypherturn opens, the embedded
  FalkorDB included; each result row becomes one ``RetrieverResultItem``, and the
  result's metadata holds the Cypher, as ``Text2CypherRetriever``'s does.
* :class:`CypherTurnLLM`: an ``LLMInterfaceV2`` over a cypherturn model spec, so
  a ``GraphRAG`` pipeline can run on a bundled GGUF in-process (neo4j-graphrag
  has no llama.cpp adapter of its own).

Deviation from the base class: ``Retriever.__init__`` takes a ``neo4j.Driver``
and asks it for the server version; this retriever opens its engine through
cypherturn instead, so it skips that ``__init__`` and holds no driver
(``driver`` is ``None``). Nothing in ``Retriever.search`` or ``GraphRAG`` uses it.

Example (needs the ``pole`` graph and the model pack, so not a doctest)::

    from neo4j_graphrag.generation import GraphRAG
    from cypherturn.integrations.graphrag import CypherTurnLLM, CypherTurnRetriever

    llm = CypherTurnLLM("qwen2.5-coder-1.5b")
    retriever = CypherTurnRetriever.from_graph("pole", model=llm.model)
    GraphRAG(retriever=retriever, llm=llm).search("How many crimes are there of each type?")
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    import neo4j
    from neo4j_graphrag.exceptions import LLMGenerationError
    from neo4j_graphrag.llm.base import LLMInterfaceV2
    from neo4j_graphrag.llm.types import LLMResponse
    from neo4j_graphrag.retrievers.base import Retriever
    from neo4j_graphrag.types import LLMMessage, RawSearchResult, RetrieverResultItem
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "cypherturn.integrations.graphrag needs neo4j-graphrag: pip install 'cypherturn[graphrag]'"
    ) from e
from pydantic import BaseModel

from cypherturn.errors import CypherTurnError
from cypherturn.integrations._answerer import GraphAnswerer, answer_payload, row_text
from cypherturn.models import DEFAULT_TEMPERATURE, ChatMessage, ChatModel, load_model

__all__ = ["CypherTurnLLM", "CypherTurnRetriever"]


class CypherTurnRetriever(Retriever):
    """Result rows of cypherturn's answer as retriever items.

    ``search(query_text=...)`` returns one item per row, ``content``
    ``"column: value; ..."`` and ``metadata`` the row; the result's metadata has
    ``cypher`` (the final query), ``executed`` and ``attempts``. A question no
    attempt could answer with a query that runs gives no items (and
    ``GraphRAG`` then answers with its fallback).

    Args:
        answerer: the graph, strategy and model to answer with.
        max_rows: at most this many items (``None``: all the engine returned).
    """

    VERIFY_NEO4J_VERSION = False

    def __init__(self, answerer: GraphAnswerer, *, max_rows: int | None = None) -> None:
        # No Retriever.__init__: it needs a neo4j.Driver (module note).
        self.driver = None  # type: ignore[assignment]  # no driver: see the module note
        self.neo4j_database = None
        self.answerer = answerer
        self.max_rows = max_rows

    @classmethod
    def from_graph(
        cls,
        graph: str,
        *,
        model: str | ChatModel = "default",
        max_rows: int | None = None,
        **options: Any,
    ) -> CypherTurnRetriever:
        """A retriever over ``graph``; ``options`` are :class:`~cypherturn.api.AskConfig` fields.

        Raises:
            pydantic.ValidationError: an unknown option or a value out of range.
        """
        answerer = GraphAnswerer.from_options(graph=graph, model=model, **options)
        return cls(answerer, max_rows=max_rows)

    def get_search_results(self, query_text: str) -> RawSearchResult:
        """Answer ``query_text`` and return its rows as records.

        Args:
            query_text: the question, in plain language.

        Returns:
            The rows as ``neo4j.Record`` s, and ``cypher``, ``executed`` and
            ``attempts`` as metadata.

        Raises:
            CypherTurnError: as :meth:`GraphAnswerer.answer` (a bad setting, an
                unreachable engine or model).
        """
        result = self.answerer.answer(query_text)
        payload = answer_payload(result, max_rows=self.max_rows)
        return RawSearchResult(
            records=[neo4j.Record(row) for row in payload["rows"]],
            metadata={
                "cypher": payload["cypher"],
                "executed": payload["executed"],
                "attempts": len(result.attempts),
            },
        )

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        """``"column: value; ..."`` for the LLM, the row itself as metadata."""
        row = record.data()
        content = row_text(row)
        return RetrieverResultItem(content=content, metadata=row)


class CypherTurnLLM(LLMInterfaceV2):
    """neo4j-graphrag's LLM interface over a cypherturn model (spec or loaded model).

    Args:
        model: a model spec as ``--model`` takes it, or a loaded model.
        model_params: ``temperature`` (default 0.9, RAS paper §4.7), ``max_tokens``
            (default 512) and ``seed``.

    ``response_format`` (structured output) is not supported: ``invoke`` raises
    ``NotImplementedError`` for it, as the interface asks of such providers.
    """

    def __init__(
        self, model: str | ChatModel = "default", model_params: dict[str, Any] | None = None
    ) -> None:
        loaded = load_model(model) if isinstance(model, str) else model
        super().__init__(model_name=loaded.spec, model_params=model_params)
        self.model = loaded

    def invoke(
        self,
        input: list[LLMMessage],
        *,
        response_format: type[BaseModel] | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        """Complete the chat ``input`` (system, user and assistant messages).

        Raises:
            NotImplementedError: a ``response_format`` was asked for.
            LLMGenerationError: the model failed (its cypherturn error is the cause).
        """
        if response_format is not None:
            raise NotImplementedError("CypherTurnLLM does not support structured output")
        params = {**self.model_params, **kwargs}
        messages = [ChatMessage(role=m["role"], content=m["content"]) for m in input]
        try:
            response = self.model.chat(
                messages,
                temperature=params.get("temperature", DEFAULT_TEMPERATURE),
                max_tokens=params.get("max_tokens", 512),
                seed=params.get("seed"),
            )
        except CypherTurnError as e:
            raise LLMGenerationError(str(e)) from e
        return LLMResponse(content=response.text)

    async def ainvoke(
        self,
        input: list[LLMMessage],
        *,
        response_format: type[BaseModel] | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        """:meth:`invoke` on a worker thread (the model decodes in-process)."""
        return await asyncio.to_thread(
            self.invoke, input, response_format=response_format, **kwargs
        )
