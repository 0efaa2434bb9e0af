"""The neo4j-graphrag drop-ins with the real library, the embedded engine and real models."""

from __future__ import annotations

import pytest
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.retrievers.base import Retriever

from cypherturn.graph import GraphEngine
from cypherturn.integrations.graphrag import CypherTurnLLM, CypherTurnRetriever
from cypherturn.models import ChatModel, ReplayChatModel

PEOPLE_QUERY = "MATCH (p:Person) RETURN p.name AS name, p.born AS born ORDER BY born"


def _retriever(engine: GraphEngine, *responses: str, **options: object) -> CypherTurnRetriever:
    return CypherTurnRetriever.from_graph(
        engine.graph, model=ReplayChatModel(list(responses)), strategy="single", **options
    )


def test_search_items_are_the_rows_and_the_metadata_names_the_cypher(people: GraphEngine) -> None:
    retriever = _retriever(people, PEOPLE_QUERY)
    assert isinstance(retriever, Retriever)
    found = retriever.search(query_text="Who was born when?")
    assert [item.metadata for item in found.items] == people.execute(PEOPLE_QUERY).records()
    assert found.items[0].content == 'name: "Ada"; born: 1815'
    assert found.metadata is not None and found.metadata["cypher"] == PEOPLE_QUERY
    assert found.metadata["executed"] is True


def test_a_question_no_query_answers_gives_no_items(people: GraphEngine) -> None:
    found = _retriever(people, "MATCH (p:Person RETURN p").search(query_text="Who?")
    assert found.items == [] and found.metadata is not None
    assert found.metadata["executed"] is False


def test_structured_output_is_refused(bundled_model: ChatModel) -> None:
    with pytest.raises(NotImplementedError):
        CypherTurnLLM(bundled_model).invoke([{"role": "user", "content": "x"}], response_format={})


@pytest.mark.slow
def test_a_graphrag_pipeline_on_the_bundled_model_answers_from_the_rows(
    people: GraphEngine, bundled_model: ChatModel
) -> None:
    llm = CypherTurnLLM(
        bundled_model, model_params={"temperature": 0.0, "seed": 0, "max_tokens": 24}
    )
    rag = GraphRAG(retriever=_retriever(people, PEOPLE_QUERY, max_rows=2), llm=llm)
    result = rag.search(query_text="Who was born first?", return_context=True)
    assert isinstance(result.answer, str) and result.answer
    assert result.retriever_result is not None
    assert [item.metadata for item in result.retriever_result.items] == (
        people.execute(PEOPLE_QUERY).records()[:2]
    )
