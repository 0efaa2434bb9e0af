"""Grammar-constrained sampling that checks the whole vocabulary only when it must.

llama-cpp-python puts llama.cpp's grammar sampler first in its sampler chain, so
every generated token costs a grammar check of every vocabulary entry before
top-k: 151,936 entries for Qwen2.5, about 54 ms a token on this project's 2-core
machine with a schema grammar, more than the model's own forward pass (37 tokens:
3.7 s with the grammar, 1.7 s without).

:func:`grammar_first_rejection` samples as llama.cpp's own ``common_sampler_sample``
(``common/sampling.cpp``; llama.cpp pull request 4306, "Check the full vocab for
grammar only if necessary") does: draw a token from the chain *without* the
grammar, check that one token against the grammar, and only when the grammar
rejects it, mask the whole vocabulary and draw again. The result has the
constrained distribution: a valid token t is returned with probability
``p(t) + p(invalid) * p(t) / p(valid) = p(t) / p(valid)``, and greedy decoding
returns exactly the token that full masking would (the unconstrained argmax, when
it is valid, is the argmax of the valid tokens). With top-k / top-p truncation the
two differ slightly, as in llama.cpp.

Deviation from llama-cpp-python: its ``Llama`` builds the grammar into the chain;
:class:`RejectionLlama` (a ``Llama`` whose ``_init_sampler`` returns this sampler
when a grammar is given) is what :mod:`cypherturn.models._gguf` loads.
"""

from __future__ import annotations

import ctypes
import math
import weakref
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import Llama, LlamaGrammar
from llama_cpp import _internals as internals

__all__ = ["GrammarRejectionSampler", "RejectionLlama"]


class GrammarRejectionSampler:
    """A sampler chain plus an optional grammar, applied as llama.cpp's ``common_sampler_sample``.

    Also sums the log-probability of every sampled token under the model's own
    distribution (softmax of the raw logits, temperature 1, whole vocabulary,
    before any grammar or truncation): the completion's probability, a lower
    bound on its probability under the constrained, sharper sampler.

    Args:
        chain: llama-cpp-python's sampler chain built without the grammar
            (penalties, top-k, top-p, min-p, temperature, dist; or greedy).
        vocab: the model's ``llama_vocab`` pointer.
        n_vocab: vocabulary size, tokens.
        grammar: the GBNF grammar (root rule ``grammar._root``); ``None``: none.

    Attributes:
        full_checks: tokens for which the first draw broke the grammar and the
            whole vocabulary was masked (for tests and benchmarks).
        tokens: tokens sampled.
        logprob: sum of the sampled tokens' log-probabilities, nats (<= 0).

    Raises:
        ValueError: llama.cpp refuses the grammar.
    """

    def __init__(
        self,
        chain: internals.LlamaSampler,
        vocab: Any,
        n_vocab: int,
        grammar: LlamaGrammar | None,
    ) -> None:
        self._chain = chain
        self._n_vocab = n_vocab
        self._grammar: Any = None
        if grammar is not None:
            grammar_sampler = llama_cpp.llama_sampler_init_grammar(
                vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
            )
            if not grammar_sampler:
                raise ValueError("llama.cpp refused the grammar")
            self._grammar = grammar_sampler
            weakref.finalize(self, llama_cpp.llama_sampler_free, grammar_sampler)
        self._data = (llama_cpp.llama_token_data * n_vocab)()
        self._view = np.ctypeslib.as_array(self._data)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self._one = (llama_cpp.llama_token_data * 1)()
        self.full_checks = 0
        self.tokens = 0
        self.logprob = 0.0

    def _candidates(self, logits: np.ndarray[Any, Any]) -> llama_cpp.llama_token_data_array:
        self._view["id"] = self._ids
        self._view["logit"] = logits
        self._view["p"] = 0.0
        return llama_cpp.llama_token_data_array(
            data=self._data, size=self._n_vocab, selected=-1, sorted=False
        )

    def _draw(self, candidates: llama_cpp.llama_token_data_array) -> int:
        llama_cpp.llama_sampler_apply(self._chain.sampler, ctypes.byref(candidates))
        return int(self._data[candidates.selected].id)

    def _grammar_allows(self, token: int) -> bool:
        self._one[0] = llama_cpp.llama_token_data(token, 0.0, 0.0)
        single = llama_cpp.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(single))
        return not math.isinf(self._one[0].logit)

    def sample(self, ctx: internals.LlamaContext, idx: int = -1) -> int:
        """Draw the next token from the logits of batch position ``idx`` and accept it.

        Returns:
            The token id, valid under the grammar.
        """
        pointer = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        token = self._draw(self._candidates(logits))
        if self._grammar is not None:
            if not self._grammar_allows(token):
                self.full_checks += 1
                candidates = self._candidates(logits)
                llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(candidates))
                token = self._draw(candidates)
            llama_cpp.llama_sampler_accept(self._grammar, token)
        llama_cpp.llama_sampler_accept(self._chain.sampler, token)
        top = float(logits.max())
        self.logprob += float(logits[token]) - top - math.log(np.exp(logits - top).sum())
        self.tokens += 1
        return token


class RejectionLlama(Llama):
    """``llama_cpp.Llama`` whose sampling goes through :class:`GrammarRejectionSampler`.

    Everything else is llama-cpp-python's. ``last_sampler`` is the sampler of
    the latest completion (``None`` before one): its token count, full grammar
    checks and log-probability.
    """

    last_sampler: GrammarRejectionSampler | None = None

    def _init_sampler(self, *args: Any, grammar: LlamaGrammar | None = None, **kwargs: Any) -> Any:
        chain = super()._init_sampler(*args, **kwargs)
        sampler = GrammarRejectionSampler(chain, self._model.vocab, self._n_vocab, grammar)
        self.last_sampler = sampler
        return sampler
