"""cypherturn inside the frameworks users already have: LangChain and neo4j-graphrag.

=========================================  ===========================================
module (optional extra)                    what it gives
=========================================  ===========================================
:mod:`cypherturn.integrations.langchain`   ``CypherTurnTool`` (a ``BaseTool``),
(``pip install 'cypherturn[langchain]'``)  ``CypherTurnRetriever`` (a ``BaseRetriever``),
                                           ``CypherTurnChatModel`` (a ``BaseChatModel``)
:mod:`cypherturn.integrations.graphrag`    ``CypherTurnRetriever`` (a ``Retriever``),
(``pip install 'cypherturn[graphrag]'``)   ``CypherTurnLLM`` (an ``LLMInterfaceV2``)
=========================================  ===========================================

Each drop-in answers through :class:`GraphAnswerer`: one graph, one strategy
(``ras+`` by default), one model loaded once and kept warm. This package imports
neither framework; its two modules each import one, and raise ``ImportError``
naming the extra when it is missing.
"""

from cypherturn.integrations._answerer import GraphAnswerer, answer_payload, row_text

__all__ = ["GraphAnswerer", "answer_payload", "row_text"]
