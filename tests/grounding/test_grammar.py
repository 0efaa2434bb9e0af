"""The schema grammar, checked by llama.cpp's own grammar sampler and by a real model.

Acceptance is decided by the sampler llama-cpp-python decodes with
(``llama_sampler_init_grammar`` over the bundled SmolLM2 vocabulary): a text is
accepted when each of its tokens survives ``llama_sampler_apply`` in turn and
the end-of-generation token is allowed after the last one. So the tests judge
the GBNF text exactly as decoding will use it, not a re-implementation.
"""

from __future__ import annotations

import ctypes
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_cpp import Llama
from llama_cpp import llama_cpp as lib

from cypherturn.cypher import Token, TokenKind, parse_query, tokenize
from cypherturn.errors import ConfigError
from cypherturn.graph import (
    GraphEngine,
    GraphSchema,
    LabelSchema,
    RelationshipTypeSchema,
    render_schema_prompt,
)
from cypherturn.grounding import GRAMMAR_KEYWORDS, schema_grammar
from cypherturn.models import ChatMessage, GGUFChatModel, default_model_path
from cypherturn.strategies import load_prompts, schema_examples
from cypherturn.worlds import get_world, load_world, world_names

CASES = json.loads(Path(__file__).with_name("grammar_cases.json").read_text(encoding="utf-8"))
QUESTIONS = Path(__file__).parents[2] / "src/cypherturn/experiments/data/questions"
GRAPH_OF_DATASET = {"crime": "pole", "healthcare": "healthcare", "fraud": "fraud"}


class Recogniser:
    """Runs a GBNF grammar over a text with llama.cpp's grammar sampler."""

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        self.vocab = llama._model.vocab
        self.eos = llama.token_eos()

    def compiles(self, grammar: str) -> bool:
        sampler = lib.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        if not sampler:
            return False
        lib.llama_sampler_free(sampler)
        return True

    def _allowed(self, sampler: Any, token: int) -> bool:
        data = (lib.llama_token_data * 1)(lib.llama_token_data(token, 0.0, 0.0))
        candidates = lib.llama_token_data_array(data, 1, -1, False)
        lib.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return not math.isinf(data[0].logit)

    def accepts(self, grammar: str, text: str) -> bool:
        """True when ``text`` is a complete sentence of ``grammar``."""
        sampler = lib.llama_sampler_init_grammar(self.vocab, grammar.encode(), b"root")
        assert sampler, "the grammar does not compile"
        try:
            for token in self.llama.tokenize(text.encode(), add_bos=False, special=False):
                # Accepting a token the grammar refuses would abort the process.
                if not self._allowed(sampler, token):
                    return False
                lib.llama_sampler_accept(sampler, token)
            return self._allowed(sampler, self.eos)
        finally:
            lib.llama_sampler_free(sampler)


@pytest.fixture(scope="module")
def recogniser() -> Iterator[Recogniser]:
    llama = Llama(model_path=str(default_model_path()), vocab_only=True, verbose=False)
    yield Recogniser(llama)
    llama.close()


def declared(name: str) -> GraphSchema:
    return get_world(name).declared_schema()


def schema_names(schema: GraphSchema) -> tuple[set[str], set[str], set[str]]:
    labels = {lab.label for lab in schema.labels}
    types = {rel.type for rel in schema.relationship_types}
    keys = {k for lab in schema.labels for k in lab.properties}
    keys |= {k for rel in schema.relationship_types for k in rel.properties}
    return labels, types, keys


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return str(value)


def gold_queries() -> list[tuple[str, str]]:
    """(graph, query) for every check query of the QER question sets, parameters inlined."""
    out = []
    for path in sorted(QUESTIONS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for question in data["questions"]:
            query = question["check_query"]
            if not query:
                continue
            for name, value in question["values"].items():
                query = re.sub(rf"\${name}\b", lambda _m, v=value: _literal(v), query)
            assert "$" not in query
            out.append((GRAPH_OF_DATASET[data["dataset"]], query))
    return out


@pytest.mark.parametrize("world", world_names())
def test_grammar_compiles_for_every_world(recogniser: Recogniser, world: str) -> None:
    grammar = schema_grammar(declared(world))
    assert recogniser.compiles(grammar)
    for example in schema_examples(declared(world)):
        assert recogniser.accepts(grammar, example.cypher), example.cypher


def test_a_broken_grammar_does_not_compile(recogniser: Recogniser) -> None:
    # The compile check above can fail: llama.cpp refuses undefined rules.
    assert not recogniser.compiles(schema_grammar(declared("pole")) + "x ::= undefined-rule\n")


def test_grammar_of_an_introspected_schema(recogniser: Recogniser, make_engine: Any) -> None:
    engine: GraphEngine = make_engine("grammar")
    load_world(engine, get_world("magic_academy"))
    schema = engine.schema()
    grammar = schema_grammar(schema)
    assert recogniser.compiles(grammar)
    label = schema.labels[0]
    key = sorted(label.properties)[0]
    query = f"MATCH (x:{label.label}) RETURN x.{key} AS value LIMIT 3"
    assert recogniser.accepts(grammar, query)
    engine.execute(query)
    assert not recogniser.accepts(grammar, f"MATCH (x:{label.label}) RETURN x.no_such_key")


@pytest.mark.parametrize("group", ["accept", "accept_neo4j"])
def test_typical_queries_are_accepted(recogniser: Recogniser, group: str) -> None:
    refused = []
    for world, queries in CASES[group].items():
        grammar = schema_grammar(declared(world))
        refused += [q for q in queries if not recogniser.accepts(grammar, q)]
    assert refused == []


def test_accepted_corpus_is_valid_cypher_on_the_engine(make_engine: Any) -> None:
    engine: GraphEngine = make_engine("corpus")
    for queries in CASES["accept"].values():
        for query in queries:
            parse_query(query)
            engine.execute(query)


def test_gold_queries_are_accepted(recogniser: Recogniser) -> None:
    golds = gold_queries()
    assert len(golds) >= 100
    grammars = {graph: schema_grammar(declared(graph)) for graph in GRAPH_OF_DATASET.values()}
    refused = [(g, q) for g, q in golds if not recogniser.accepts(grammars[g], q)]
    assert refused == []


def test_ungrounded_or_wrapped_queries_are_rejected(recogniser: Recogniser) -> None:
    for world, cases in CASES["reject"].items():
        grammar = schema_grammar(declared(world))
        accepted = [c for c in cases if recogniser.accepts(grammar, c["query"])]
        assert accepted == []


def test_names_that_need_backticks_are_written_with_them(recogniser: Recogniser) -> None:
    schema = GraphSchema(
        labels=[
            LabelSchema(label="Crime Scene", count=1, properties={"first name": "STRING"}),
            LabelSchema(label="Odd`Label", count=1, properties={"plain": "STRING"}),
        ],
        relationship_types=[RelationshipTypeSchema(type="HAS PART", count=1)],
    )
    grammar = schema_grammar(schema)
    assert recogniser.accepts(
        grammar,
        "MATCH (n:`Crime Scene` {`first name`: 'x'})-[:`HAS PART`]->(m:`Odd``Label`) "
        "RETURN n.`first name`, m.plain",
    )
    for query in (
        "MATCH (n:Crime Scene) RETURN n",
        "MATCH (n:`Crime`) RETURN n",
        "MATCH (n:`Crime Scene`) RETURN n.first name",
        "MATCH (n)-[:HAS PART]->(m) RETURN m",
    ):
        assert not recogniser.accepts(grammar, query), query


def test_schema_without_relationships_or_properties(recogniser: Recogniser) -> None:
    grammar = schema_grammar(GraphSchema(labels=[LabelSchema(label="Thing", count=3)]))
    assert recogniser.compiles(grammar)
    assert recogniser.accepts(grammar, "MATCH (t:Thing) RETURN count(t)")
    assert not recogniser.accepts(grammar, "MATCH (t:Thing) RETURN t.name")
    assert not recogniser.accepts(grammar, "MATCH (t:Thing)-[:R]->(u) RETURN u")


CRIME_TYPES = ("Robbery", "Burglary", "Vehicle crime", "Public order", "O'Brien's")


@pytest.mark.parametrize(
    ("query", "accepted"),
    [
        ("MATCH (c:Crime) WHERE c.type = 'Robbery' RETURN c.id", True),
        ('MATCH (c:Crime) WHERE c.type <> "Vehicle crime" RETURN c.id', True),
        ("MATCH (c:Crime) WHERE c.type IN ['Robbery', 'Burglary'] RETURN count(c)", True),
        ("MATCH (c:Crime {type: 'Public order'}) RETURN count(c)", True),
        ("MATCH (c:Crime) WHERE c.type = 'O\\'Brien\\'s' RETURN c", True),
        ("MATCH (c:Crime) WHERE c.type CONTAINS 'rob' RETURN c.id", True),
        ("MATCH (c:Crime) WHERE toLower(c.type) = 'robbery' RETURN c.id", True),
        ("MATCH (c:Crime) WHERE c.type = c.last_outcome RETURN c.id", True),
        ("MATCH (c:Crime) WHERE c.id = 'anything' AND c.type = 'Burglary' RETURN c", True),
        ("MATCH (c:Crime) RETURN c.type, count(*) AS n ORDER BY n DESC", True),
        ("MATCH (c:Crime) WHERE c.type = 'robbery' RETURN c.id", False),
        ("MATCH (c:Crime) WHERE c.type <> 'Nope' RETURN c.id", False),
        ("MATCH (c:Crime) WHERE c.type IN ['Robbery', 'Nope'] RETURN c.id", False),
        ("MATCH (c:Crime {type: 'Nope'}) RETURN c.id", False),
        ("MATCH (c:Crime) WHERE c.id = 'x' AND c.type = 'Nope' RETURN c", False),
        ("MATCH (c:Crime) WHERE NOT c.type = 'Nope' RETURN c", False),
    ],
)
def test_value_grounding(recogniser: Recogniser, query: str, accepted: bool) -> None:
    grammar = schema_grammar(declared("pole"), values={"type": CRIME_TYPES, "charge": []})
    assert recogniser.accepts(grammar, query) is accepted


def test_values_of_an_unknown_key_are_refused() -> None:
    with pytest.raises(ConfigError, match="no_such_key"):
        schema_grammar(declared("pole"), values={"no_such_key": ["x"]})


def test_keywords_cover_the_clause_words_of_the_grammar() -> None:
    assert {"MATCH", "WHERE", "RETURN", "WITH", "AS", "ORDER", "LIMIT"} <= GRAMMAR_KEYWORDS


def _name(tok: Token) -> str | None:
    if tok.kind is TokenKind.QUOTED_NAME:
        return tok.text[1:-1].replace("``", "`")
    return tok.text if tok.kind is TokenKind.NAME else None


def _grounded_names(tokens: list[Token]) -> tuple[set[str], set[str]]:
    """(labels and types, property keys) a query names.

    Labels and types: the names after ``:`` outside a map literal, and after
    ``|`` or ``|:`` that follow a type inside a relationship pattern. Property
    keys: the names after ``.``.
    """
    after_colon: set[str] = set()
    after_dot: set[str] = set()
    # Each open bracket, and whether it opens a relationship pattern (``-[`` or ``<-[``).
    brackets: list[tuple[str, bool]] = []
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        if tok.is_punct("(", "[", "{"):
            brackets.append((tok.text, prev is not None and prev.is_punct("-", "<-")))
        elif tok.is_punct(")", "]", "}") and brackets:
            brackets.pop()
        name = _name(tok)
        if name is None or prev is None:
            continue
        if prev.is_punct("."):
            after_dot.add(name)
        elif prev.is_punct(":") and not (brackets and brackets[-1][0] == "{"):
            after_colon.add(name)
            j = i + 1
            in_relationship = bool(brackets) and brackets[-1][1]
            while in_relationship and j + 1 < len(tokens) and tokens[j].is_punct("|"):
                k = j + 2 if tokens[j + 1].is_punct(":") else j + 1
                alternative = _name(tokens[k]) if k < len(tokens) else None
                if alternative is None:
                    break
                after_colon.add(alternative)
                j = k + 1
    return after_colon, after_dot


def test_grounded_names_helper() -> None:
    colon, dot = _grounded_names(
        tokenize(
            "MATCH (a:A:B {k: x.y})-[:T|U|:V]->(b) WHERE b:C "
            "RETURN [z IN l WHERE z:D | z.w], {m: 1}"
        )
    )
    assert colon == {"A", "B", "T", "U", "V", "C", "D"}
    assert dot == {"y", "w"}


QUESTIONS_ASKED = (
    "How many crimes of each type are there?",
    "Which officers investigated the most crimes? Give their names.",
    "List the people who know someone involved in a crime.",
)


@pytest.mark.slow
def test_constrained_completions_of_the_bundled_model_are_grounded_cypher() -> None:
    """Every completion that ends by itself is a read-only statement naming only the schema."""
    schema = declared("pole")
    labels, types, keys = schema_names(schema)
    grammar = schema_grammar(schema)
    prompts = load_prompts()
    examples = schema_examples(schema)
    model = GGUFChatModel(default_model_path())
    finished = []
    for q, question in enumerate(QUESTIONS_ASKED):
        context: list[ChatMessage] = prompts.initial_context(
            question, render_schema_prompt(schema), examples
        )
        for seed in (11 + q, 23 + q):
            response = model.chat(
                context, temperature=0.9, max_tokens=96, seed=seed, grammar=grammar
            )
            if response.finish_reason == "length":
                continue
            finished.append(response.text)
            parsed = parse_query(response.text)
            assert not parsed.writes, response.text
            assert all(part.final_projection is not None for part in parsed.parts), response.text
            colon, dot = _grounded_names(tokenize(response.text))
            assert colon <= labels | types, response.text
            assert dot <= keys, response.text
    # Not vacuous: at temperature 0.9 most of these completions end before the cap.
    assert len(finished) >= 2
