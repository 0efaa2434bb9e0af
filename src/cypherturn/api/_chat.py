"""`chat`: a conversation over one graph, each turn answered by ask's strategy with the history."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

from pydantic import Field

from cypherturn.api._ask import AskConfig, answer_within_budget, require_question
from cypherturn.api._engines import connect
from cypherturn.api._memory import graph_memory
from cypherturn.chat import (
    HISTORY_TURNS,
    ChatTurn,
    Transcript,
    chat_history,
    contextual_question,
    read_transcript,
    refers_back,
    result_problem,
    scope_problem,
    write_transcript,
)
from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine, GraphSchema, render_schema_prompt
from cypherturn.grounding import (
    GraphIndex,
    PreviousResult,
    graph_index,
    points_to_previous,
    previous_names,
)
from cypherturn.memory import Recall, VerifiedPair, verify_pair
from cypherturn.models import ChatModel, load_model
from cypherturn.protocols import HISTORY_ROWS
from cypherturn.strategies import (
    FollowUp,
    GroundedStrategy,
    Strategy,
    TokenCallback,
    get_strategy,
    recalled_examples,
    schema_examples,
    warm_prefix,
)

__all__ = ["ChatConfig", "ChatSession"]


class ChatConfig(AskConfig):
    """What `cypherturn chat` runs: ask's settings, plus the answer, the history and the transcript.

    Attributes:
        graph / engine_url / strategy / model / model_options / temperature /
            seed / timeout_s / row_cap / data_path / prompt_version / max_seconds:
            inherited from :class:`~cypherturn.api.AskConfig` (the same defaults:
            ``ras+`` with the strongest local model, 60 s a turn), as is
            :meth:`strategy_config`.
        budget: T, the most attempts of every turn (at least 1, checked here).
        answer: write an answer in words for every answered turn.
        history_turns: earlier answered turns given to the model as context.
        history_rows: rows of each earlier result in that context.
        transcript: the file the transcript is rewritten to after every turn
            (``None``: not saved unless :meth:`ChatSession.save` is called).
    """

    budget: int = Field(default=5, ge=1)
    answer: bool = True
    history_turns: int = Field(default=HISTORY_TURNS, ge=0)
    history_rows: int = Field(default=HISTORY_ROWS, ge=1)
    transcript: Path | None = None


class ChatSession:
    """A conversation over one graph; use it as a context manager (it holds an open engine).

    Each :meth:`ask` runs the configured strategy (``ras+`` by default, as
    ``cypherturn ask``) on the question preceded by the conversation so far
    (:func:`~cypherturn.chat.chat_history`) when it refers back to it
    (:func:`~cypherturn.chat.refers_back`), so a follow-up is resolved against
    earlier questions, queries and results. Under ``ras+`` the question checks
    read the current question alone (:class:`~cypherturn.strategies.FollowUp`),
    and a follow-up about "those" whose query ranges over the label of the names
    the last answered turn listed is restricted to those names
    (:func:`~cypherturn.grounding.bind_reference`, recorded as a repair). Then, for an answered turn, writes
    the answer in words (:func:`~cypherturn.answers.answer_in_words`). A question
    the graph cannot answer is recorded as ``out_of_scope`` with the reason
    (:func:`~cypherturn.chat.scope_problem`, :func:`~cypherturn.chat.result_problem`).

    Args:
        config: the settings (``None``: the defaults, graph ``pole``).
        model: a loaded model to use instead of loading ``config.model``.
        turns: earlier turns to continue from (see :meth:`resume`).

    Example (it needs the ``pole`` graph and a model, so it is not a doctest)::

        with ChatSession(ChatConfig(graph="pole")) as chat:
            chat.ask("How many crimes are there of each type?")
            turn = chat.ask("Which of those are burglaries?")
            print(turn.answer.text, turn.query)
    """

    def __init__(
        self,
        config: ChatConfig | None = None,
        *,
        model: ChatModel | None = None,
        turns: Sequence[ChatTurn] = (),
    ) -> None:
        self.config = config or ChatConfig()
        self._model = model
        self._turns: list[ChatTurn] = list(turns)
        self._stack: ExitStack | None = None
        self._engine: GraphEngine | None = None
        self._index: GraphIndex | None = None
        self._schema: GraphSchema | None = None
        self._schema_text = ""
        self._recall: Recall | None = None

    @classmethod
    def resume(
        cls, path: Path, config: ChatConfig | None = None, *, model: ChatModel | None = None
    ) -> ChatSession:
        """A session continuing the transcript at ``path``: its turns are the earlier context.

        The transcript keeps being saved to ``path`` unless ``config.transcript``
        names another file.

        Args:
            path: a transcript written by :meth:`save` or the autosave.
            config: the settings (``None``: the defaults on the transcript's graph).
            model: as in the constructor.

        Returns:
            The session, not yet open.

        Raises:
            ConfigError: the file is missing or not a transcript, or it is over
                another graph than ``config.graph``.
        """
        transcript = read_transcript(path)
        chosen = config or ChatConfig(graph=transcript.graph)
        if chosen.graph != transcript.graph:
            raise ConfigError(
                f"transcript {path} is a conversation over graph {transcript.graph!r}, "
                f"not {chosen.graph!r}; pass --graph {transcript.graph} or start a new chat"
            )
        if chosen.transcript is None:
            chosen = chosen.model_copy(update={"transcript": path})
        return cls(chosen, model=model, turns=transcript.turns)

    def __enter__(self) -> ChatSession:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def open(self) -> ChatSession:
        """Open the graph (a known world is loaded on first use), index it, load the model.

        Returns:
            This session.

        Raises:
            ConfigError: unknown strategy or model spec.
            ModelError: the model cannot be loaded.
            EngineConnectionError, DatasetError: as in :func:`~cypherturn.api.connect`.
        """
        if self._stack is not None:
            return self
        get_strategy(self.config.strategy)  # an unknown strategy fails before anything loads
        self.config.strategy_config()
        stack = ExitStack()
        try:
            engine = stack.enter_context(
                connect(
                    self.config.graph,
                    engine_url=self.config.engine_url,
                    data_path=self.config.data_path,
                )
            )
            self._schema = engine.schema()
            self._schema_text = render_schema_prompt(self._schema)
            self._index = graph_index(engine)
            self._load_memory()
            if self._model is None:
                self._model = load_model(self.config.model, **self.config.model_options)
        except BaseException:
            stack.close()
            raise
        self._engine, self._stack = engine, stack
        return self

    def warm(self) -> int:
        """Bring the first turn's prompt prefix into the model now, so that turn skips it.

        The prefix is the strategy's attempt-1 context before the question: the
        system prompt with the schema and the few-shot examples
        (:meth:`~cypherturn.strategies.Strategy.initial_context`). An in-process
        GGUF model takes its evaluated state from memory or the disk prefix
        cache, or evaluates and stores it; other models have nothing to warm.
        ``cypherturn chat`` calls this in the background while the user types.

        Returns:
            Prompt tokens the model now holds evaluated (0: a model without a
            prefix cache).

        Raises:
            ConfigError: the session is not open.
            ModelError: the model cannot be loaded.
            CallAbandoned: the process is stopping.
        """
        engine, _, model = self._open()
        examples = schema_examples(self._schema) if self._schema is not None else []
        context = get_strategy(self.config.strategy).initial_context(
            engine, "?", self._schema_text, self.config.strategy_config(), examples
        )
        return warm_prefix(model, context)

    def close(self) -> None:
        """Close the engine (the transcript is already saved after every turn)."""
        if self._stack is not None:
            self._stack.close()
        self._stack = None
        self._engine = None
        self._index = None

    @property
    def turns(self) -> tuple[ChatTurn, ...]:
        """Every turn so far, restored ones first."""
        return tuple(self._turns)

    @property
    def last(self) -> ChatTurn | None:
        """The latest turn, or ``None`` before the first."""
        return self._turns[-1] if self._turns else None

    @property
    def model(self) -> ChatModel:
        """The model (the session must be open)."""
        return self._open()[2]

    @property
    def schema_text(self) -> str:
        """The graph's schema as the prompts show it (the session must be open)."""
        self._open()
        return self._schema_text

    def _open(self) -> tuple[GraphEngine, GraphIndex, ChatModel]:
        if self._engine is None or self._index is None or self._model is None:
            raise ConfigError("the chat session is not open: use it in a `with` block")
        return self._engine, self._index, self._model

    def ask(
        self,
        question: str,
        *,
        on_token: TokenCallback | None = None,
        on_answer_token: Callable[[str], None] | None = None,
    ) -> ChatTurn:
        """Answer one question of the conversation; the turn is recorded and the transcript saved.

        Args:
            question: the question as typed; a follow-up may refer to earlier turns.
            on_token: called with each piece of Cypher the model generates.
            on_answer_token: called with each piece of the answer in words.

        Returns:
            The turn: ``answered`` (the query that ran, its rows, the answer) or
            ``out_of_scope`` (the reason; the attempts when the strategy ran).

        Raises:
            ConfigError: the session is not open, or the question is empty.
            ModelError: the model failed while writing Cypher.
            EngineConnectionError: the engine became unreachable.
            CallAbandoned: the process is stopping (a signal; the turn is not recorded).
        """
        engine, index, model = self._open()
        require_question(question)
        started = time.perf_counter()
        history = chat_history(
            [t for t in self._turns if t.outcome == "answered"],
            keep=self.config.history_turns,
            rows=self.config.history_rows,
        )
        follows = refers_back(question)
        asked = contextual_question(question, history if follows else "")
        number = len(self._turns) + 1
        problem = scope_problem(question, index, follows=bool(history))
        if problem is not None:
            turn = ChatTurn(
                index=number,
                question=question,
                asked=asked,
                outcome="out_of_scope",
                reason=problem,
                seconds=time.perf_counter() - started,
            )
            return self._record(turn)
        strategy = self._strategy(question, index, follows and bool(history), on_token)
        examples = schema_examples(self._schema) if self._schema is not None else []
        recalled = recalled_examples(self._recall, question, self.config.recall)
        result = strategy.run(
            model,
            engine,
            asked,
            self._schema_text,
            self.config.strategy_config(),
            [*examples, *recalled],
        )
        ran = result.final_query if result.final_result is not None else None
        problem = result_problem(result)
        answer = None
        if problem is None and self.config.answer and result.final_result is not None:
            # the rest of the turn's time budget, or the template from the rows
            answer = answer_within_budget(
                model, question, result, on_token=on_answer_token, seed=self.config.seed
            )
        turn = ChatTurn(
            index=number,
            question=question,
            asked=asked,
            outcome="answered" if problem is None else "out_of_scope",
            reason=problem,
            query=ran,
            result=result.final_result,
            answer=answer,
            strategy=result,
            seconds=time.perf_counter() - started,
        )
        return self._record(turn)

    def remember(self, number: int | None = None) -> VerifiedPair:
        """Keep turn ``number``'s question and the query that ran in the graph's memory.

        The query is run again read-only before it is kept; later questions of
        this session, and of ``ask`` and ``chat`` on the graph, are shown the
        nearest remembered pairs as examples (:mod:`cypherturn.memory`).

        Args:
            number: the turn (1-based); ``None``: the last answered turn.

        Returns:
            The stored pair.

        Raises:
            ConfigError: the session is not open, there is no such turn, or no
                query ran for it.
            QueryError: the query no longer runs.
            DatasetError: the memory file cannot be written.
        """
        engine, _, _ = self._open()
        if number is None:
            answered = [t for t in self._turns if t.outcome == "answered"]
            if not answered:
                raise ConfigError("no answered question to remember yet")
            turn = answered[-1]
        elif 1 <= number <= len(self._turns):
            turn = self._turns[number - 1]
        else:
            raise ConfigError(f"no turn {number}: turns are 1 to {len(self._turns)}")
        if turn.query is None:
            raise ConfigError(f"no query ran for turn {turn.index}: nothing to remember")
        pair = verify_pair(engine, turn.question, turn.query, "user")
        graph_memory(self.config.graph, self.config.engine_url).add([pair])
        self._load_memory()
        return pair

    def _load_memory(self) -> None:
        pairs = graph_memory(self.config.graph, self.config.engine_url).pairs()
        self._recall = Recall(pairs) if pairs else None

    def _strategy(
        self, question: str, index: GraphIndex, follows: bool, on_token: TokenCallback | None
    ) -> Strategy:
        """The configured strategy; a grounded one is told what the question follows up.

        Args:
            question: the question as typed.
            index: the graph's index (to bind the previous result's names).
            follows: the question refers back to earlier answered turns shown in its context.
            on_token: called with each piece of Cypher the model generates.
        """
        strategy: Strategy = get_strategy(self.config.strategy, on_token=on_token)
        if isinstance(strategy, GroundedStrategy):
            shown = [t for t in self._turns if t.outcome == "answered"]
            shown = shown[-self.config.history_turns :] if follows else []
            follow_up = FollowUp(
                question=question.strip(),
                previous=self._previous_result(question, index) if shown else None,
                earlier=tuple(t.question for t in shown),
            )
            strategy = dataclasses.replace(strategy, follow_up=follow_up)
        return strategy

    def _previous_result(self, question: str, index: GraphIndex) -> PreviousResult | None:
        """The last answered turn's rows as names of one label, when ``question`` points at them."""
        answered = [t for t in self._turns if t.outcome == "answered" and t.result is not None]
        if not answered:
            return None
        result = answered[-1].result
        assert result is not None
        if result.truncated:
            return None
        previous = previous_names(result.columns, result.rows, index)
        if previous is None or not points_to_previous(question, previous.label, index.labels):
            return None
        return previous

    def _record(self, turn: ChatTurn) -> ChatTurn:
        self._turns.append(turn)
        if self.config.transcript is not None:
            self.save(self.config.transcript)
        return turn

    def transcript(self) -> Transcript:
        """The conversation as saved: graph, engine, model, strategy and every turn."""
        return Transcript(
            graph=self.config.graph,
            engine=self._engine.spec if self._engine is not None else "",
            model=self._model.spec if self._model is not None else self.config.model,
            strategy=f"{self.config.strategy}@{self.config.budget}",
            turns=list(self._turns),
        )

    def save(self, path: Path) -> Path:
        """Write the transcript to ``path`` (JSON; :meth:`resume` reads it back).

        Raises:
            ConfigError: the file cannot be written.
        """
        return write_transcript(self.transcript(), path)
