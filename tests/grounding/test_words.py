"""One tokenizer and one stemmer for every comparison of a question's words with a graph's names."""

from __future__ import annotations

from cypherturn.grounding import FUNCTION_WORDS, stem, stems, words
from cypherturn.grounding._words import content_words


def test_a_schema_name_splits_into_the_words_a_question_uses() -> None:
    assert words("ReportedCrime HAS_STATUS lastOutcome") == [
        "Reported", "Crime", "HAS", "STATUS", "last", "Outcome",
    ]  # fmt: skip
    assert stems("ReportedCrime") == stems("reported crimes")
    assert stems("PARTY_TO") == stems("party to")


def test_inflections_and_irregular_plurals_meet_at_one_stem() -> None:
    pairs = [("Crimes", "crime"), ("categories", "category"), ("people", "person"),
             ("children", "child"), ("investigated", "investigating"), ("Officer's", "officer"),
             ("LIVES", "live"), ("Locations", "location")]  # fmt: skip
    for inflected, plain in pairs:
        assert stem(inflected) == stem(plain), (inflected, plain)


def test_function_words_are_never_content() -> None:
    assert content_words("Which of those officers did they investigate?") == [
        "officers", "investigate",
    ]  # fmt: skip
    assert {"those", "their", "which", "how", "many"} <= FUNCTION_WORDS
    assert stems("") == [] and words("42 + 7") == []
