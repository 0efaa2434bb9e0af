"""Grammar-first rejection sampling against llama-cpp-python's full masking, on the bundled model.

Both samplers are real llama.cpp samplers over the SmolLM2-135M vocabulary; the
only difference is whether the grammar masks every token or only the drawn one
first. Seeds are fixed, so each comparison is deterministic on a given build.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from llama_cpp import Llama, LlamaGrammar
from scipy.stats import chi2_contingency

from cypherturn.graph import (
    GraphSchema,
    LabelSchema,
    RelationshipPattern,
    RelationshipTypeSchema,
)
from cypherturn.grounding import schema_grammar
from cypherturn.models import RejectionLlama, default_model_path, model_threads
from cypherturn.models._gguf_load import _extra_buffer_types

SCHEMA = GraphSchema(
    labels=[
        LabelSchema(label="Person", count=2, properties={"name": "STRING", "age": "INTEGER"}),
        LabelSchema(label="City", count=1, properties={"name": "STRING"}),
    ],
    relationship_types=[RelationshipTypeSchema(type="LIVES_IN", count=2)],
    patterns=[RelationshipPattern(source="Person", type="LIVES_IN", target="City")],
)

PROMPTS = [
    "Write a Cypher query. Question: Which people live in Paris?\nCypher: ",
    "Write a Cypher query. Question: How old is Ann?\nCypher: ",
    "Write a Cypher query. Question: How many cities are there?\nCypher: ",
]


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[Llama, RejectionLlama]]:
    path = str(default_model_path())
    # loaded as the product loads GGUF models: llama.cpp's AMX repacking segfaults on
    # some virtual machines (cypherturn.models._gguf_load._extra_buffer_types)
    with _extra_buffer_types(False):
        threads = {"n_threads": model_threads(), "n_threads_batch": model_threads()}
        plain = Llama(model_path=path, n_ctx=1024, verbose=False, **threads)
        rejection = RejectionLlama(model_path=path, n_ctx=1024, verbose=False, **threads)
    yield plain, rejection
    plain.close()
    rejection.close()


def _complete(model: Llama, prompt: str, grammar: str, **kwargs: object) -> str:
    result = model.create_completion(
        prompt, grammar=LlamaGrammar.from_string(grammar, verbose=False), **kwargs
    )
    return str(result["choices"][0]["text"])  # type: ignore[index]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_decoding_under_the_schema_grammar_is_unchanged(
    models: tuple[Llama, RejectionLlama], prompt: str
) -> None:
    plain, rejection = models
    grammar = schema_grammar(SCHEMA)
    expected = _complete(plain, prompt, grammar, temperature=0.0, max_tokens=40)
    assert _complete(rejection, prompt, grammar, temperature=0.0, max_tokens=40) == expected
    sampler = rejection.last_sampler
    assert sampler is not None and sampler.tokens > 0
    # most tokens pass the one-token check: that is where the time goes
    assert sampler.full_checks < sampler.tokens


def test_a_rejected_draw_is_redrawn_from_the_grammar(
    models: tuple[Llama, RejectionLlama],
) -> None:
    _, rejection = models
    grammar = 'root ::= "ZQX" [0-9] [0-9]'
    text = _complete(rejection, "The capital of France is", grammar, temperature=0.9, seed=3)
    sampler = rejection.last_sampler
    assert sampler is not None and sampler.full_checks >= 1
    assert len(text) == 5 and text.startswith("ZQX") and text[3:].isdigit()


def test_sampling_keeps_the_constrained_distribution(
    models: tuple[Llama, RejectionLlama],
) -> None:
    # Without truncation (top-k, top-p, min-p off) rejection draws p(t) / p(valid),
    # the distribution full masking samples from.
    plain, rejection = models
    grammar = 'root ::= "red" | "green" | "blue" | "yellow"'
    prompt = "My favourite colour is"
    options = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "max_tokens": 4}
    counts = [
        Counter(_complete(model, prompt, grammar, seed=seed, **options) for seed in range(240))
        for model in (plain, rejection)
    ]
    colours = sorted(set(counts[0]) | set(counts[1]))
    assert set(colours) <= {"red", "green", "blue", "yellow"} and len(colours) >= 2
    table = [[c[colour] for colour in colours] for c in counts]
    assert chi2_contingency(table).pvalue > 0.01
    sampler = rejection.last_sampler
    assert sampler is not None


def test_the_completion_logprob_is_the_models_own(models: tuple[Llama, RejectionLlama]) -> None:
    _, rejection = models
    with _extra_buffer_types(False):
        reference = Llama(
            model_path=str(default_model_path()),
            n_ctx=1024,
            n_threads=model_threads(),
            n_threads_batch=model_threads(),
            verbose=False,
            logits_all=True,
        )
    try:
        for prompt in PROMPTS[:2]:
            expected = reference.create_completion(
                prompt, temperature=0.0, max_tokens=12, logprobs=1
            )["choices"][0]  # type: ignore[index]
            text = rejection.create_completion(prompt, temperature=0.0, max_tokens=12)["choices"][
                0
            ]["text"]  # type: ignore[index]
            sampler = rejection.last_sampler
            assert text == expected["text"] and sampler is not None and sampler.tokens == 12
            assert sampler.logprob == pytest.approx(
                sum(expected["logprobs"]["token_logprobs"]), abs=1e-3
            )
            assert sampler.logprob < 0
    finally:
        reference.close()
