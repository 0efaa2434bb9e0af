"""The LangChain drop-ins with the real ``langchain-core``, the embedded engine and real models."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda

from cypherturn.graph import GraphEngine
from cypherturn.integrations.langchain import (
    CypherTurnChatModel,
    CypherTurnRetriever,
    CypherTurnTool,
)
from cypherturn.models import ChatModel, ReplayChatModel
from cypherturn.strategies import StrategyResult

PEOPLE_QUERY = "MATCH (p:Person) RETURN p.name AS name, p.born AS born ORDER BY born"


def _tool(engine: GraphEngine, *responses: str, **options: object) -> CypherTurnTool:
    model = ReplayChatModel(list(responses))
    return CypherTurnTool.from_graph(engine.graph, model=model, strategy="single", **options)


def test_the_tool_returns_the_cypher_and_the_rows_it_ran(people: GraphEngine) -> None:
    tool = _tool(people, f"```cypher\n{PEOPLE_QUERY}\n```")
    message = tool.invoke(
        {"type": "tool_call", "id": "call-1", "name": tool.name, "args": {"question": "Who?"}}
    )
    assert isinstance(message, ToolMessage) and message.tool_call_id == "call-1"
    payload = json.loads(message.content)
    assert payload["cypher"] == PEOPLE_QUERY and payload["executed"] is True
    assert payload["rows"] == people.execute(PEOPLE_QUERY).records()
    assert payload["row_count"] == 3 and payload["truncated"] is False
    assert isinstance(message.artifact, StrategyResult) and message.artifact.success


def test_the_tool_cuts_rows_and_says_so(people: GraphEngine) -> None:
    tool = _tool(people, PEOPLE_QUERY, max_rows=2)
    payload = json.loads(tool.invoke({"question": "Who?"}))
    assert len(payload["rows"]) == 2 and payload["row_count"] == 3 and payload["truncated"]


def test_a_question_no_query_answers_reaches_the_agent_as_an_error(people: GraphEngine) -> None:
    tool = _tool(people, "MATCH (p:Person RETURN p")
    message = tool.invoke(
        {"type": "tool_call", "id": "call-2", "name": tool.name, "args": {"question": "Who?"}}
    )
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert "no query that runs" in message.content


def test_retriever_documents_are_the_rows_in_a_runnable_chain(people: GraphEngine) -> None:
    retriever = CypherTurnRetriever.from_graph(
        people.graph, model=ReplayChatModel([PEOPLE_QUERY]), strategy="single"
    )
    chain = retriever | RunnableLambda(lambda docs: [d.metadata["values"] for d in docs])
    assert chain.invoke("Who was born when?") == people.execute(PEOPLE_QUERY).records()
    docs = CypherTurnRetriever.from_graph(
        people.graph, model=ReplayChatModel([PEOPLE_QUERY]), strategy="single", k=1
    ).invoke("Who?")
    assert len(docs) == 1 and docs[0].metadata["cypher"] == PEOPLE_QUERY
    assert docs[0].page_content == 'name: "Ada"; born: 1815'


@pytest.mark.slow
def test_an_agent_on_the_bundled_model_calls_the_tool_and_reads_its_rows(
    people: GraphEngine, bundled_model: ChatModel
) -> None:
    """The LangChain tool-calling loop: model → tool call → tool message → model."""
    llm = CypherTurnChatModel(model=bundled_model, temperature=0.0, seed=0, max_tokens=48)
    tool = _tool(people, PEOPLE_QUERY)
    messages: list = [
        SystemMessage("Answer questions about people with the query_graph tool."),
        HumanMessage("Who was born first?"),
    ]
    called = llm.bind_tools([tool]).invoke(messages)
    assert isinstance(called, AIMessage) and len(called.tool_calls) == 1
    call = called.tool_calls[0]
    assert call["name"] == tool.name and isinstance(call["args"].get("question"), str)
    result = tool.invoke({**call, "type": "tool_call"})
    assert json.loads(result.content)["rows"] == people.execute(PEOPLE_QUERY).records()
    final = llm.invoke([*messages, called, result])
    assert isinstance(final, AIMessage) and final.tool_calls == []
    assert final.usage_metadata is not None and final.usage_metadata["input_tokens"] > 0


def test_an_answer_the_time_budget_cut_short_says_so(people: GraphEngine) -> None:
    tool = _tool(people, PEOPLE_QUERY, max_seconds=1e-9)
    message = tool.invoke(
        {"type": "tool_call", "id": "call-3", "name": tool.name, "args": {"question": "Who?"}}
    )
    assert isinstance(message, ToolMessage) and message.status == "error"
    assert "time budget" in message.content and "the last was" not in message.content
