"""What a player of a session may see: the session without its golds.

Why: docs/design/protocols.md, "What players see: the session view".

The players are the evaluated model's protocols (:mod:`cypherturn.protocols`) and
the user simulator (:class:`cypherturn.agent.UserSimulator`). They get a
:class:`SessionView`; the runner keeps the :class:`~cypherturn.sessions.Session`,
whose turns carry ``gold_cypher`` and ``gold_result``, for itself and the scorer,
as inspect_ai keeps a sample's ``target`` away from its solvers.

The view lives here, beside :class:`~cypherturn.sessions.Turn`, rather than in
``protocols``: which field of a turn is the gold and which is the user's is a
fact about the benchmark format, so the one place that projects a turn onto what
a player sees sits next to the fields it chooses from. A field added to
:class:`~cypherturn.sessions.Turn` stays hidden until it is added here on purpose.

Guarantee: no gold query is reachable from a view, and a gold result only through
:meth:`SessionView.earlier_result`, for a turn before the one being played and only
under oracle history (the guided protocol, CypherTurn §3.1 and App. D.5). The
results are a private attribute, left out of the view's fields, dumps, repr and
copies by value; Python hides nothing from code that reads private attributes on
purpose, so the guarantee is that no protocol reads a gold by accident.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, PrivateAttr

from cypherturn.errors import DatasetError, GoldWithheldError
from cypherturn.sessions._format import GoldResult, Session, Turn
from cypherturn.sessions._vocab import ChainMode, Persona, Phenomenon

__all__ = ["PlayerTurn", "SessionView"]


class PlayerTurn(BaseModel):
    """One turn as a player sees it: the user's words and the turn's annotation, no gold.

    Left out of :class:`~cypherturn.sessions.Turn`: ``gold_cypher`` and
    ``gold_result`` (the answer), ``reference_description`` (which element a
    positional reference means), ``skeleton`` (the gold's structure), ``rewrite``
    (the utterance before a model rewrote it), ``import_check`` and the ambiguity's
    ``description`` (written for annotators: it may name the reading the gold took).

    Attributes:
        turn_index: 1-based position in the session.
        utterance: what the user says.
        phenomena: the turn's conversational phenomena (the guided protocol notes a
            FIRST turn's dependency, App. D.5).
        chain_mode: how the turn builds on an earlier one (the guided history shows
            the result before a CONTRAST turn untruncated, App. D.5).
        depends_on: the turn whose result this turn builds on (``None``: none).
        simulator_reply: the pre-authored reply to a clarifying question when the
            utterance is ambiguous (``AmbiguityInfo.simulator_reply``: it resolves
            the ambiguity without naming schema elements or the answer); ``None``
            when the turn is not ambiguous.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn_index: int
    utterance: str
    phenomena: tuple[Phenomenon, ...] = ()
    chain_mode: ChainMode
    depends_on: int | None = None
    simulator_reply: str | None = None

    @classmethod
    def of(cls, turn: Turn) -> PlayerTurn:
        """The player's view of ``turn``."""
        return cls(
            turn_index=turn.turn_index,
            utterance=turn.utterance,
            phenomena=tuple(turn.phenomena),
            chain_mode=turn.chain_mode,
            depends_on=turn.depends_on,
            simulator_reply=turn.ambiguity_info.simulator_reply if turn.ambiguity_info else None,
        )


class SessionView(BaseModel):
    """A session as a player sees it: its turns without golds, and maybe earlier results.

    Build it with :meth:`of`. Under oracle history the view hands out the gold result
    of each turn before the one being played, as the guided protocol's history shows
    them (CypherTurn §3.1, App. D.5); without it (the agentic protocol, whose history
    is the model's own) it hands out none.

    Attributes:
        session_id: the session's identifier.
        world: the graph the session runs on.
        persona: the persona whose register the utterances follow (the simulator speaks in it).
        turns: the turns in order, as :class:`PlayerTurn`.
        oracle_history: :meth:`earlier_result` gives earlier turns' gold results.

    Example:
        >>> from cypherturn.sessions import ChainMode, GoldResult, Persona, Session, Turn
        >>> turns = [
        ...     Turn(turn_index=i, utterance=f"q{i}", chain_mode=ChainMode.NONE,
        ...          gold_cypher="RETURN 1 AS n", gold_result=GoldResult(columns=["n"], rows=[[i]]))
        ...     for i in (1, 2)
        ... ]
        >>> session = Session(session_id="s", world="w", persona=Persona.STUDENT, turns=turns)
        >>> view = SessionView.of(session, oracle_history=True)
        >>> view.earlier_result(1, current=2).rows
        [[1]]
        >>> hasattr(view.turns[1], "gold_result")
        False
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str
    world: str
    persona: Persona
    turns: tuple[PlayerTurn, ...]
    oracle_history: bool = False
    _results: tuple[GoldResult, ...] = PrivateAttr(default=())

    @classmethod
    def of(cls, session: Session, *, oracle_history: bool = False) -> SessionView:
        """The player's view of ``session``.

        Args:
            session: the session, golds included (the runner's).
            oracle_history: keep the turns' gold results for :meth:`earlier_result`
                (the guided protocol); otherwise the view holds none.

        Returns:
            The view.

        Raises:
            DatasetError: the turns are not numbered 1, 2, ... in order (every player
                finds a turn by its index).
        """
        numbers = [turn.turn_index for turn in session.turns]
        if numbers != list(range(1, len(numbers) + 1)):
            raise DatasetError(
                f"session {session.session_id}: turns are numbered {numbers}, not 1, 2, ... in order"
            )
        view = cls(
            session_id=session.session_id,
            world=session.world,
            persona=session.persona,
            turns=tuple(PlayerTurn.of(turn) for turn in session.turns),
            oracle_history=oracle_history,
        )
        if oracle_history:
            view._results = tuple(turn.gold_result for turn in session.turns)
        return view

    def earlier_result(self, turn_index: int, *, current: int) -> GoldResult:
        """The gold result of an earlier turn, while turn ``current`` is being played.

        Args:
            turn_index: the earlier turn (1-based).
            current: the turn being played (1-based).

        Returns:
            The gold result of ``turn_index``.

        Raises:
            GoldWithheldError: the view has no oracle history, ``current`` is not a
                turn of the session, or ``turn_index`` is not before it (the current
                turn's own result and later ones are never given).
        """
        if not self.oracle_history:
            raise GoldWithheldError(
                f"session {self.session_id}: this view has no oracle history "
                "(the agentic protocol's history is the model's own)"
            )
        if not 1 <= current <= len(self.turns):
            raise GoldWithheldError(
                f"session {self.session_id}: turn {current} is not one of its "
                f"{len(self.turns)} turns"
            )
        if not 1 <= turn_index < current:
            raise GoldWithheldError(
                f"session {self.session_id}: the result of turn {turn_index} is withheld "
                f"while turn {current} is played (only earlier turns' results are shown)"
            )
        return self._results[turn_index - 1]
