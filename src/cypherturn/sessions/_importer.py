"""Import of the official CypherTurn release (``data/scenarios/<graph>_sessions.json``).

Each official file is a JSON array of sessions with ``session_id``, ``graph``,
``persona`` and ``turns[]``; each turn has ``turn_id``, ``user_utterance``,
``phenomena``, ``gold_cypher``, ``gold_answer`` (a list of row objects),
``depends_on_result_of`` and ``chain_mode`` (``null`` on first turns), and
optionally ``ambiguity_info`` (with ``simulator_reply``) and
``reference_description``; every other field (skeletons, predictions, metrics)
is ignored. :func:`read_official` converts a file into :class:`Session` objects;
:func:`check_reproduction` runs the builder's audits on every gold, re-executes it on
our engine and labels each turn reproduced, non-deterministic gold (with the reason)
or differs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.cypher import parse_query
from cypherturn.errors import CypherParseError, DatasetError, QueryError
from cypherturn.graph import GraphEngine
from cypherturn.sessions._audit import AuditCode, AuditFinding
from cypherturn.sessions._compare import compare_results
from cypherturn.sessions._divergence import ANSWER_CHANGING, DivergenceAuditor
from cypherturn.sessions._format import (
    AmbiguityInfo,
    AmbiguityKind,
    GoldResult,
    ImportCheck,
    Session,
    Turn,
    canonical_rows,
)
from cypherturn.sessions._verify import verify_session
from cypherturn.sessions._vocab import ChainMode, Persona, Phenomenon

__all__ = ["FileReport", "TurnCheck", "check_reproduction", "compare_results", "read_official"]


class _OfficialTurn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn_id: int
    user_utterance: str
    phenomena: list[str] = Field(default_factory=list)
    gold_cypher: str
    gold_answer: list[dict[str, Any]] | None = None
    depends_on_result_of: int | None = None
    chain_mode: str | None = None
    reference_description: str | None = None
    ambiguity_info: dict[str, Any] | None = None


class _OfficialSession(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str
    graph: str
    persona: str
    turns: list[_OfficialTurn]


def _orders_output(gold: str) -> bool:
    try:
        parts = parse_query(gold).parts
    except CypherParseError:
        return False
    final = parts[-1].final_projection if parts else None
    return final is not None and bool(final.order_by)


def _gold_result(gold: str, answer: list[dict[str, Any]] | None) -> GoldResult:
    answer = answer or []
    columns: list[str] = list(answer[0]) if answer else []
    rows = [[row.get(c) for c in columns] for row in answer]
    ordered = _orders_output(gold)
    return GoldResult(
        columns=columns, rows=rows if ordered else canonical_rows(rows), ordered=ordered
    )


def _enum(kind: type[Any], value: str, where: str) -> Any:
    try:
        return kind(value)
    except ValueError as e:
        known = ", ".join(m.value for m in kind)
        raise DatasetError(f"{where}: unknown {kind.__name__} {value!r} (known: {known})") from e


def _convert_turn(raw: _OfficialTurn, where: str) -> Turn:
    phenomena = [_enum(Phenomenon, p.upper(), where) for p in raw.phenomena]
    mode = ChainMode.NONE if raw.chain_mode is None else _enum(ChainMode, raw.chain_mode, where)
    ambiguity = None
    info = raw.ambiguity_info
    if info and info.get("simulator_reply"):
        ambiguity = AmbiguityInfo(
            kind=AmbiguityKind.UNSPECIFIED,
            description=str(info.get("description") or info.get("ambiguity_type") or ""),
            simulator_reply=str(info["simulator_reply"]),
        )
    return Turn(
        turn_index=raw.turn_id,
        utterance=raw.user_utterance,
        phenomena=phenomena,
        chain_mode=mode,
        depends_on=raw.depends_on_result_of,
        gold_cypher=raw.gold_cypher,
        gold_result=_gold_result(raw.gold_cypher, raw.gold_answer),
        ambiguity_info=ambiguity,
        reference_description=raw.reference_description,
    )


def read_official(path: Path) -> list[Session]:
    """Convert one official ``<graph>_sessions.json`` file.

    Returns:
        The sessions with ``source="official"``; gold results are the official answers.

    Raises:
        DatasetError: unreadable file, not a JSON array of sessions, or an unknown
            phenomenon, chain mode or persona (the message names the session and turn).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DatasetError(f"cannot read official sessions from {path}: {e}") from e
    if not isinstance(raw, list):
        raise DatasetError(f"{path}: expected a JSON array of sessions, found {type(raw).__name__}")
    sessions: list[Session] = []
    for number, item in enumerate(raw):
        try:
            official = _OfficialSession.model_validate(item)
        except ValidationError as e:
            raise DatasetError(
                f"{path}: session #{number} is not in the official layout: {e}"
            ) from e
        where = f"{path.name} session {official.session_id}"
        turns = [_convert_turn(t, f"{where} turn {t.turn_id}") for t in official.turns]
        sessions.append(
            Session(
                session_id=official.session_id,
                world=official.graph,
                persona=_enum(Persona, official.persona, where),
                source="official",
                turns=turns,
            )
        )
    return sessions


class TurnCheck(BaseModel):
    """Re-execution and audit outcome of one imported turn (see :class:`ImportCheck`)."""

    session_id: str
    turn_index: int
    status: Literal["reproduced", "nondeterministic", "differs", "error"]
    reason: str = ""
    audits: list[str] = Field(default_factory=list)


class FileReport(BaseModel):
    """Reproduction summary of one imported file.

    Attributes:
        path: the official file.
        graphs: graphs its sessions run on.
        sessions / turns: what it holds.
        reproduced / nondeterministic / differs / errors: turns per label (see
            :class:`ImportCheck`); they add up to ``turns``.
        reasons: count per reason (first clause of each non-reproduced turn's reason).
        audits: count per audit code over all turns (the builder's audits, the
            engine-divergence classes included).
        checks: the turns not labelled ``reproduced``, with their full reasons.
    """

    path: str
    graphs: list[str]
    sessions: int
    turns: int
    reproduced: int = 0
    nondeterministic: int = 0
    differs: int = 0
    errors: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)
    audits: dict[str, int] = Field(default_factory=dict)
    checks: list[TurnCheck] = Field(default_factory=list)


# Findings that re-state what the label already says, or need a skeleton.
_NOT_NOTES = frozenset({AuditCode.RESULT_MISMATCH, AuditCode.EXECUTION_ERROR})


def _nondeterminism(findings: list[AuditFinding]) -> str | None:
    """Why the gold's answer depends on the engine, from its audit findings, or ``None``."""
    reasons = [
        f"ORDER BY ... LIMIT cuts through ties: {f.message.removesuffix('; add a deterministic tie-breaker')}"
        for f in findings
        if f.code is AuditCode.TIE_CUT and not f.message.startswith("cannot probe")
    ]
    reasons += [f"{f.code.value}: {f.message}" for f in findings if f.code in ANSWER_CHANGING]
    return "; ".join(reasons) if reasons else None


def _label(
    turn: Turn, findings: list[AuditFinding], engine: GraphEngine, timeout_s: float
) -> ImportCheck:
    audits = sorted({f.code.value for f in findings if f.code not in _NOT_NOTES})
    try:
        result = engine.execute(turn.gold_cypher, timeout_s=timeout_s)
    except QueryError as e:
        return ImportCheck(
            status="error", reason=f"{e.error_class.value}: {e.engine_message}", audits=audits
        )
    why = compare_results(turn.gold_result, result)
    engine_dependent = _nondeterminism(findings)
    if engine_dependent is not None:
        if why is not None:
            engine_dependent = f"{engine_dependent} (here: {why})"
        return ImportCheck(
            status="nondeterministic",
            reason=engine_dependent,
            official_reproduced=why is None,
            audits=audits,
        )
    if why is None:
        return ImportCheck(status="reproduced", official_reproduced=True, audits=audits)
    return ImportCheck(status="differs", reason=why, audits=audits)


def check_reproduction(
    path: Path,
    sessions: Iterable[Session],
    engine_for: Callable[[str], GraphEngine],
    *,
    timeout_s: float = 120.0,
) -> FileReport:
    """Re-execute and audit every gold query, label every turn, and summarise the file.

    Each session goes through :func:`~._verify.verify_session`, the builder's audits
    (ties at every ORDER BY ... LIMIT, the engine-divergence classes, sizes,
    aggregate labels, ...), and each gold is executed once more without a row cap
    and compared with the official answer. Every turn gets an :class:`ImportCheck`
    in ``turn.import_check`` (the sessions are updated in place).

    Args:
        path: the file the sessions came from (for the report).
        sessions: imported sessions.
        engine_for: graph name -> engine on that graph, loaded from the release.
        timeout_s: per-query limit (App. D.5: 120 s).

    Returns:
        The :class:`FileReport`.

    Raises:
        GraphError: the engine failed (not a query error: those label the turn).
    """
    sessions = list(sessions)
    report = FileReport(
        path=str(path),
        graphs=sorted({s.world for s in sessions}),
        sessions=len(sessions),
        turns=sum(len(s.turns) for s in sessions),
    )
    reasons: Counter[str] = Counter()
    audits: Counter[str] = Counter()
    auditors: dict[str, DivergenceAuditor] = {}
    for session in sessions:
        engine = engine_for(session.world)
        auditor = auditors.setdefault(session.world, DivergenceAuditor(engine, timeout_s))
        findings = verify_session(
            session, engine, timeout_s=timeout_s, perturb=False, divergence=auditor
        )
        for turn in session.turns:
            label = _label(
                turn, [f for f in findings if f.turn_index == turn.turn_index], engine, timeout_s
            )
            turn.import_check = label
            audits.update(label.audits)
            if label.status == "reproduced":
                report.reproduced += 1
                continue
            if label.status == "nondeterministic":
                report.nondeterministic += 1
            elif label.status == "differs":
                report.differs += 1
            else:
                report.errors += 1
            reasons[re.split(r"[:;(]", label.reason, maxsplit=1)[0].strip()] += 1
            report.checks.append(
                TurnCheck(
                    session_id=session.session_id,
                    turn_index=turn.turn_index,
                    status=label.status,
                    reason=label.reason,
                    audits=label.audits,
                )
            )
    report.reasons = dict(reasons.most_common())
    report.audits = dict(sorted(audits.items()))
    return report
