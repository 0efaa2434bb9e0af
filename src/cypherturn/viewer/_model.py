"""What a run page shows, as data: run → groups (systems) → items (sessions) → turns → steps.

One shape serves the three kinds of run directory the viewer reads:

* ``bench`` (``cypherturn bench run`` / ``score_run``): groups are systems
  (model, protocol, budget, variant), items are sessions, turns are turns with
  their scores, steps are the logged actions (``sessions/<id>.jsonl``);
* ``qer`` (``cypherturn qer run``): groups are (model, strategy, dataset, tier),
  items are questions, turns are runs of a question, steps are attempts;
* ``ask`` (``cypherturn bench ask``, and runs of the retired ask-accuracy script): groups are (model, strategy),
  items are questions, one turn each, steps are the strategy's attempts.

Every string here is untrusted (model output, engine messages); the template
escapes all of it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from cypherturn.reports import Table

__all__ = ["GroupView", "ItemView", "ResultView", "RunKind", "RunPage", "StepView", "TurnView"]

RunKind = str
"""``bench``, ``qer`` or ``ask``."""


class StepView(BaseModel):
    """One action (bench) or attempt (qer, ask).

    Attributes:
        index: 1-based position in its turn.
        action: the action name (``EXECUTE_CYPHER``, ``SUBMIT_ANSWER``...) or ``attempt``.
        query: the Cypher or the action's argument.
        observation: what came back (bench), or the engine message (qer, ask).
        ok: the action or attempt succeeded.
        error_class: its failure class.
        rows: rows returned.
        notes: repairs, findings, verdict, tokens, latency: one short line each.
        reply: the model's raw reply, when kept.
    """

    index: int
    action: str
    query: str = ""
    observation: str = ""
    ok: bool = True
    error_class: str | None = None
    rows: int | None = None
    notes: list[str] = Field(default_factory=list)
    reply: str = ""


class ResultView(BaseModel):
    """A query result as shown: the column names and the first rows, as text.

    Attributes:
        columns: column names in RETURN order.
        rows: the first rows (each value as its JSON text).
        total: how many rows the result has (``rows`` may hold fewer).
    """

    columns: list[str]
    rows: list[list[str]]
    total: int


class TurnView(BaseModel):
    """One scored turn (bench), run of a question (qer) or answered question (ask).

    Attributes:
        number: turn number, run index or 1.
        title: the question or the turn's phenomenon.
        question: the user's utterance (bench, when the benchmark file is given).
        phenomenon: the turn's phenomenon (a filter facet; ``""`` when none).
        failed: the turn is not correct (EX 0, or no executable query).
        scores: metric name -> shown value (``EX``, ``rEX``, ``PSJS``...).
        gold: the gold query (bench).
        gold_result: the gold query's stored rows (bench, when the benchmark file is given).
        predicted: the predicted or final query.
        error: the prediction's error message.
        facts: other one-line facts (status, rows, end reason, tokens).
        steps: the actions or attempts, in order.
    """

    number: int
    title: str = ""
    question: str = ""
    phenomenon: str = ""
    failed: bool
    scores: dict[str, str] = Field(default_factory=dict)
    gold: str = ""
    gold_result: ResultView | None = None
    predicted: str = ""
    error: str = ""
    facts: list[str] = Field(default_factory=list)
    steps: list[StepView] = Field(default_factory=list)


class ItemView(BaseModel):
    """One session (bench) or question (qer, ask).

    Attributes:
        key: its id (session id, question id).
        world: the world or dataset (a filter facet).
        persona: the session persona (a filter facet; ``""`` for qer and ask).
        outcome: ``correct``, ``partial`` or ``failed`` over its turns (a filter facet).
        summary: one line: turns correct, mean scores.
        scores: session-level metric name -> shown value (bench: EX, SEM, CER), one
            column each in the sessions table (the page's ``item_columns``).
        turns: its turns.
    """

    key: str
    world: str = ""
    persona: str = ""
    outcome: str
    summary: str = ""
    scores: dict[str, str] = Field(default_factory=dict)
    turns: list[TurnView]

    @property
    def phenomena(self) -> str:
        """Its turns' phenomena as ``|A|B|`` (the page's phenomenon filter matches ``|A|``)."""
        found = sorted({t.phenomenon for t in self.turns if t.phenomenon})
        return "|" + "|".join(found) + "|" if found else ""

    @property
    def failed_phenomena(self) -> str:
        """The phenomena of its failed turns, as :attr:`phenomena` (phenomenon + failed-only)."""
        found = sorted({t.phenomenon for t in self.turns if t.phenomenon and t.failed})
        return "|" + "|".join(found) + "|" if found else ""

    @property
    def failed_turns(self) -> int:
        """How many of its turns failed."""
        return sum(t.failed for t in self.turns)


class GroupView(BaseModel):
    """One system (bench) or configuration (qer, ask) and its items."""

    label: str
    summary: str = ""
    items: list[ItemView]


class RunPage(BaseModel):
    """Everything one run's page shows.

    Attributes:
        title: the run directory's path.
        kind: ``bench``, ``qer`` or ``ask``.
        meta: ``(name, value)`` lines: run id, models, engines, configuration.
        tables: the summary tables (``cypherturn report``'s, main table first).
        groups: the systems or configurations.
        item_columns: the session-level score names shown as sessions-table columns.
        notes: what the page could not show (missing logs, unscored turns).
    """

    title: str
    kind: RunKind
    meta: list[tuple[str, str]] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    groups: list[GroupView] = Field(default_factory=list)
    item_columns: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def facet_values(self, facet: str) -> list[str]:
        """The distinct non-empty values of an item facet (``world``, ``persona``,
        ``outcome``) or of the turn facet ``phenomenon``, sorted."""
        values: set[str] = set()
        for group in self.groups:
            for item in group.items:
                if facet == "phenomenon":
                    values |= {t.phenomenon for t in item.turns}
                else:
                    values.add(str(getattr(item, facet)))
        return sorted(v for v in values if v)
