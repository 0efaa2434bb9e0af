"""One graph, one strategy, one warm model: what every framework drop-in asks of cypherturn."""

from __future__ import annotations

import json
import threading
from typing import Any

from cypherturn.api import AskConfig, run_ask
from cypherturn.models import ChatModel, GGUFChatModel, load_model
from cypherturn.strategies import StrategyResult

__all__ = ["GraphAnswerer", "answer_payload", "row_text"]


class GraphAnswerer:
    """Answers questions over one graph with one strategy, loading the model once.

    The framework adapters call :meth:`answer` from whatever thread they run
    tools or retrievers on; a lock serialises the calls, because one in-process
    GGUF model decodes one sequence at a time.

    Args:
        config: the question-independent settings of ``cypherturn ask``
            (graph, engine URL, strategy, budget, model spec, recall, ...).
        model: a loaded model to use instead of loading ``config.model``.

    Example (needs the ``pole`` graph and the model pack, so not a doctest)::

        answerer = GraphAnswerer(AskConfig(graph="pole", model="qwen2.5-coder-1.5b"))
        result = answerer.answer("How many crimes are there of each type?")
    """

    def __init__(self, config: AskConfig, *, model: ChatModel | None = None) -> None:
        self.config = config
        self._model = model
        self._lock = threading.Lock()

    @classmethod
    def from_options(cls, *, model: str | ChatModel = "default", **options: Any) -> GraphAnswerer:
        """Build one from :class:`~cypherturn.api.AskConfig` fields as keywords.

        Args:
            model: a model spec (``qwen2.5-coder-1.5b``, ``gguf:PATH``,
                ``openai:NAME``) or a loaded model.
            options: any other :class:`~cypherturn.api.AskConfig` field
                (``graph``, ``engine_url``, ``strategy``, ``budget``, ``recall``, ...).

        Raises:
            pydantic.ValidationError: an unknown field or a value out of range.
        """
        if isinstance(model, str):
            return cls(AskConfig(model=model, **options))
        return cls(AskConfig(model=model.spec, **options), model=model)

    @property
    def model(self) -> ChatModel:
        """The model, loaded on first use and kept.

        Raises:
            ConfigError: an unknown model spec; ModelError: it cannot be loaded.
        """
        if self._model is None:
            self._model = load_model(self.config.model, **self.config.model_options)
            if isinstance(self._model, GGUFChatModel):
                self._model.load()
        return self._model

    def answer(self, question: str) -> StrategyResult:
        """Answer ``question`` as ``cypherturn ask`` would (:func:`~cypherturn.api.run_ask`).

        Returns:
            Every attempt, the final query and its rows (``final_result`` is
            ``None`` when no attempt executed).

        Raises:
            ConfigError: an empty question or a bad setting; ModelError,
            EngineConnectionError, DatasetError: as :func:`~cypherturn.api.run_ask`.
        """
        with self._lock:
            return run_ask(question, self.config, model=self.model)


def answer_payload(result: StrategyResult, *, max_rows: int | None = None) -> dict[str, Any]:
    """What a framework shows its LLM or user: the Cypher, whether it ran, and the rows.

    Args:
        result: an answer of :meth:`GraphAnswerer.answer`.
        max_rows: keep at most this many rows (``None``: all the engine returned).

    Returns:
        ``{"cypher": str, "executed": bool, "columns": [str], "rows": [{column: value}],
        "row_count": int, "truncated": bool}``, JSON-ready; ``row_count`` counts
        the rows before ``max_rows`` cut them, ``truncated`` says whether the
        engine's row cap or ``max_rows`` cut any.
    """
    final = result.final_result if result.success else None
    records = final.records() if final is not None else []
    kept = records if max_rows is None else records[:max_rows]
    return {
        "cypher": result.final_query,
        "executed": final is not None,
        "columns": final.columns if final is not None else [],
        "rows": kept,
        "row_count": len(records),
        "truncated": bool(final is not None and final.truncated) or len(kept) < len(records),
    }


def row_text(row: dict[str, Any]) -> str:
    """One result row as text for an LLM's context: ``"column: value; ..."``, values as JSON.

    Example:
        >>> row_text({"name": "Ada", "born": 1815})
        'name: "Ada"; born: 1815'
    """
    return "; ".join(
        f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}" for key, value in row.items()
    )
