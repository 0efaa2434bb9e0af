"""The answer in words: number extraction, the check against the rows, the template fallback.

The model-facing tests use a replay model (the check is what is under test, not
a model's wording) and rows produced by real queries on the embedded engine;
one slow test runs the bundled SmolLM2-135M and asserts only the guarantee.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from cypherturn.answers import (
    NO_DATA,
    answer_in_words,
    answer_prompt,
    numbers_in,
    template_answer,
    unsupported_names,
    unsupported_numbers,
)
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.models import ChatMessage, ChatResponse, ReplayChatModel


@pytest.fixture
def shop(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("answers")
    engine.write(
        "CREATE (:Product {name: 'Lamp', price: 19.99, stock: 12, added: date('2021-03-04')}),"
        " (:Product {name: 'Desk', price: 249.5, stock: 3, added: date('2020-11-30')}),"
        " (:Product {name: 'Chair', price: 89.0, stock: 40, added: date('2022-01-15')})"
    )
    return engine


def test_numbers_are_found_as_written() -> None:
    text = "61,521 crimes, twenty-five thefts, one of them on 2017-08-01, 3.14 on average, three."
    assert numbers_in(text) == ["61,521", "twenty-five", "2017", "08", "01", "3.14", "three"]
    assert numbers_in("No number here, no one knows.") == []


def test_a_number_is_supported_by_a_cell_a_string_the_row_count_or_the_question(
    shop: GraphEngine,
) -> None:
    result = shop.execute(
        "MATCH (p:Product) RETURN p.name AS name, p.price AS price, p.stock AS stock,"
        " toString(p.added) AS added ORDER BY name"
    )
    assert result.row_count == 3
    text = "Desk costs 249.5, Lamp 19.99 (not 21.0), 12 lamps, added in 2021, 3 items"
    assert unsupported_numbers(text, result) == ["21.0"]
    # rounding a non-integral cell to the decimals written is allowed; an integer is not rounded
    assert unsupported_numbers("The lamp costs about 20 or 19.990", result) == []
    assert unsupported_numbers("Stock is 13", result) == ["13"]
    assert unsupported_numbers("Stock is 13 in 2019", result, "stock in 2019?") == ["13"]
    assert unsupported_numbers("forty chairs, twelve lamps, seven desks", result) == ["seven"]


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (p:Product) RETURN count(p) AS products",
        "MATCH (p:Product) RETURN p.name AS name, p.price AS price ORDER BY name",
        "MATCH (p:Product) RETURN p ORDER BY p.name",
        "MATCH (p:Product) RETURN avg(p.price) AS mean, collect(p.stock) AS stocks",
        "UNWIND range(1, 40) AS i RETURN i, i * 1.5 AS x",
    ],
)
def test_the_template_passes_its_own_check(shop: GraphEngine, query: str) -> None:
    result = shop.execute(query)
    text = template_answer(result)
    assert text and unsupported_numbers(text, result) == []
    assert unsupported_names(text, result, "", query) == []


def test_a_supported_answer_is_kept_and_streamed(shop: GraphEngine) -> None:
    result = shop.execute("MATCH (p:Product) RETURN p.name AS name, p.stock AS stock ORDER BY name")
    model = ReplayChatModel(["Chair has 40 in stock, Desk 3 and Lamp 12."])
    pieces: list[str] = []
    answer = answer_in_words(
        model, "What is in stock?", "MATCH ...", result, on_token=pieces.append
    )
    assert answer.source == "model" and answer.reason is None
    assert answer.text == "Chair has 40 in stock, Desk 3 and Lamp 12."
    assert "".join(pieces) == answer.text
    assert answer.numbers_checked == ["40", "3", "12"] and answer.unsupported == []
    assert answer.tokens > 0 and answer.prompt_tokens > 0 and answer.seconds >= 0
    sent = model.calls[0][-1].content
    assert "What is in stock?" in sent and "Lamp | 12" in sent and "3 rows" in sent
    assert model.settings[0]["temperature"] == 0.0


def test_an_invented_number_falls_back_to_the_template(shop: GraphEngine) -> None:
    result = shop.execute("MATCH (p:Product) RETURN count(p) AS products")
    answer = answer_in_words(ReplayChatModel(["There are 7 products."]), "How many?", "Q", result)
    assert answer.source == "template"
    assert answer.text == template_answer(result) == "products: 3."
    assert answer.unsupported == ["7"] and answer.model_text == "There are 7 products."
    assert answer.reason == "numbers not in the rows: 7"


@pytest.mark.parametrize(
    ("text", "unsupported"),
    [
        ("Chair has 40 in stock; the Desk has 3 and the LAMP 12.", []),
        ("The cheapest Product is the Lamp.", []),  # a label of the query
        ("The best seller is Sofa (IKEA), with 40 sold.", ["Sofa", "IKEA"]),
        ("Lamp, Chair and Stool are in stock. Stool is new.", ["Stool"]),
        ("Sofa is the cheapest.", []),  # a sentence's first word is not read as a name
        ("I think it is the Desk\u2019s drawer.", []),
    ],
)
def test_a_name_is_supported_by_a_cell_a_column_the_question_or_the_query(
    shop: GraphEngine, text: str, unsupported: list[str]
) -> None:
    query = "MATCH (p:Product) RETURN p.name AS name, p.stock AS stock ORDER BY name"
    result = shop.execute(query)
    assert unsupported_names(text, result, "Which products are in stock?", query) == unsupported


def test_an_invented_name_falls_back_to_the_template(shop: GraphEngine) -> None:
    query = "MATCH (p:Product) RETURN p.name AS name ORDER BY p.price LIMIT 1"
    result = shop.execute(query)
    invented = "The cheapest product is the Lamp by Philips."
    answer = answer_in_words(ReplayChatModel([invented]), "Cheapest?", query, result)
    assert answer.source == "template" and answer.text == template_answer(result)
    assert answer.unsupported_names == ["Philips"] and answer.unsupported == []
    assert answer.reason == "names not in the rows: Philips" and answer.model_text == invented


class CutOffModel(ReplayChatModel):
    """Replays, reporting every reply as cut off at the token cap (``finish_reason="length"``)."""

    def chat(self, messages: list[ChatMessage], **options: Any) -> ChatResponse:
        return super().chat(messages, **options).model_copy(update={"finish_reason": "length"})


def test_an_answer_cut_off_at_the_token_cap_keeps_its_complete_sentences(
    shop: GraphEngine,
) -> None:
    query = "MATCH (p:Product) RETURN p.name AS name, p.stock AS stock ORDER BY stock DESC"
    result = shop.execute(query)
    cut = "Chair has the most, 40. Lamp has 12, and Desk has"
    kept = answer_in_words(CutOffModel([cut]), "Stock?", query, result)
    assert kept.source == "model" and kept.text == "Chair has the most, 40."
    assert kept.model_text == cut and kept.reason is None
    # one unfinished sentence leaves nothing: the template answers instead
    run_on = "There are 40 chairs, 12 lamps and"
    replaced = answer_in_words(CutOffModel([run_on]), "Stock?", query, result, max_tokens=10)
    assert replaced.source == "template" and replaced.text == template_answer(result)
    assert replaced.reason == "the model's answer was cut off at 10 tokens"


def test_no_rows_says_so_without_a_model_call(shop: GraphEngine) -> None:
    result = shop.execute("MATCH (p:Product) WHERE p.stock > 1000 RETURN p.name")
    model = ReplayChatModel([])
    answer = answer_in_words(model, "Which have more than 1000?", "Q", result)
    assert answer.text == NO_DATA and answer.source == "template" and model.calls == []


def test_a_failing_or_silent_model_falls_back(shop: GraphEngine) -> None:
    result = shop.execute("MATCH (p:Product) RETURN p.name AS name ORDER BY name")
    failed = answer_in_words(ReplayChatModel([]), "Names?", "Q", result)
    assert failed.source == "template" and "model failed" in (failed.reason or "")
    silent = answer_in_words(ReplayChatModel(["   "]), "Names?", "Q", result)
    assert silent.source == "template" and silent.reason == "the model wrote nothing"
    assert silent.text == "3 results: Chair; Desk; Lamp."


def test_the_prompt_shows_at_most_twenty_rows_and_the_total() -> None:
    result = QueryResult(columns=["i"], rows=[[i] for i in range(50)])
    body = answer_prompt("q", "UNWIND range(0, 49) AS i RETURN i", result)[-1].content
    assert "50 rows, the first 20 shown" in body and "\n19\n" in body and "\n20\n" not in body


@pytest.mark.slow
def test_bundled_model_answer_cites_only_numbers_from_the_rows(shop: GraphEngine) -> None:
    from cypherturn.models import load_model

    result = shop.execute("MATCH (p:Product) RETURN p.name AS name, p.stock AS stock ORDER BY name")
    answer = answer_in_words(
        load_model("smollm2-135m"), "How many of each product are in stock?", "Q", result
    )
    assert answer.text
    assert answer.tokens > 0 and answer.model_text is not None
    # the guarantee, whatever the model wrote: what is shown cites only the rows
    assert unsupported_numbers(answer.text, result, "How many of each product are in stock?") == []
    assert (answer.source == "model") == (
        answer.unsupported == [] and bool(answer.model_text.strip())
    )
