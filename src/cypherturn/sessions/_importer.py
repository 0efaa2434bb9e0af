"""Import of the official CypherTurn release (``data/scenarios/<graph>_sessions.json``).

Each official file is a JSON array of sessions with ``session_id``, ``graph``,
``persona`` and ``turns[]``; each turn has ``turn_id``, ``user_utterance``,
``phenomena``, ``gold_cypher``, ``gold_answer`` (a list of row objects),
``depends_on_result_of`` and ``chain_mode`` (``null`` on first turns), and
optionally ``ambiguity_info`` (with ``simulator_reply``) and
``reference_description``; every other field (skeletons, predictions, metrics)
is ignored. :func:`read_official` converts a file into :class:`Session` objects;
:func:`check_reproduction` re-executes every gold on our engine and says, per
turn, whether the official answer is reproduced and if not, why.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.cypher import parse_query
from cypherturn.errors import CypherParseError, DatasetError, QueryError
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.sessions._audit import probe_ties
from cypherturn.sessions._format import (
    AmbiguityInfo,
    AmbiguityKind,
    GoldResult,
    Session,
    Turn,
    canonical_rows,
)
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


def _normalize(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(f"{float(value):.9g}") if math.isfinite(float(value)) else str(value)
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in sorted(value.items())}
    return repr(value)


def _row_key(row: list[Any]) -> str:
    return json.dumps([_normalize(v) for v in row], sort_keys=True)


def compare_results(stored: GoldResult, result: QueryResult) -> str | None:
    """Why ``result`` does not reproduce ``stored``, or ``None`` when it does.

    Numbers compare by value to nine significant digits (so an integer sum read
    back as ``24.0`` reproduces ``24``); rows compare as multisets unless the
    stored result is ordered.
    """
    if not stored.rows and not result.rows:
        return None
    if stored.columns != list(result.columns) and stored.rows:
        if sorted(stored.columns) == sorted(result.columns):
            return f"column order differs: {stored.columns} vs {list(result.columns)}"
        return f"columns differ: {stored.columns} vs {list(result.columns)}"
    if len(stored.rows) != len(result.rows):
        return f"row count differs: official {len(stored.rows)}, engine {len(result.rows)}"
    mine = [_row_key(r) for r in stored.rows]
    theirs = [_row_key(r) for r in result.rows]
    if Counter(mine) != Counter(theirs):
        return "values differ"
    if stored.ordered and mine != theirs:
        return "order differs"
    return None


class TurnCheck(BaseModel):
    """Re-execution outcome of one imported turn."""

    session_id: str
    turn_index: int
    status: Literal["reproduced", "differs", "error"]
    reason: str = ""


class FileReport(BaseModel):
    """Reproduction summary of one imported file.

    Attributes:
        path: the official file.
        graphs: graphs its sessions run on.
        sessions / turns: what it holds.
        reproduced / differs / errors: turns whose gold answer the engine reproduced,
            did not reproduce, or could not execute.
        reasons: count per reason (first clause of each non-reproduced turn's reason).
        checks: the non-reproduced turns, with their full reasons.
    """

    path: str
    graphs: list[str]
    sessions: int
    turns: int
    reproduced: int = 0
    differs: int = 0
    errors: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)
    checks: list[TurnCheck] = Field(default_factory=list)


def _explain_difference(gold: str, engine: GraphEngine, reason: str, timeout_s: float) -> str:
    try:
        probes = probe_ties(gold, engine, timeout_s=timeout_s)
    except QueryError:
        return reason
    tied = [p for p in probes if p.tied]
    if tied:
        return f"{reason}; tie at the cut of {tied[0].clause!r} (which rows survive is engine-dependent)"
    return reason


def check_reproduction(
    path: Path,
    sessions: Iterable[Session],
    engine_for: Callable[[str], GraphEngine],
    *,
    timeout_s: float = 120.0,
) -> FileReport:
    """Re-execute every gold query and compare with the official answers.

    Args:
        path: the file the sessions came from (for the report).
        sessions: imported sessions.
        engine_for: graph name -> engine on that graph, loaded from the release.
        timeout_s: per-query limit (App. D.5: 120 s).

    Returns:
        The :class:`FileReport`.
    """
    sessions = list(sessions)
    report = FileReport(
        path=str(path),
        graphs=sorted({s.world for s in sessions}),
        sessions=len(sessions),
        turns=sum(len(s.turns) for s in sessions),
    )
    reasons: Counter[str] = Counter()
    for session in sessions:
        engine = engine_for(session.world)
        for turn in session.turns:
            try:
                result = engine.execute(turn.gold_cypher, timeout_s=timeout_s)
            except QueryError as e:
                check = TurnCheck(
                    session_id=session.session_id,
                    turn_index=turn.turn_index,
                    status="error",
                    reason=f"{e.error_class.value}: {e.engine_message}",
                )
                report.errors += 1
            else:
                why = compare_results(turn.gold_result, result)
                if why is None:
                    report.reproduced += 1
                    continue
                check = TurnCheck(
                    session_id=session.session_id,
                    turn_index=turn.turn_index,
                    status="differs",
                    reason=_explain_difference(turn.gold_cypher, engine, why, timeout_s),
                )
                report.differs += 1
            reasons[re.split(r"[:;]", check.reason, maxsplit=1)[0]] += 1
            report.checks.append(check)
    report.reasons = dict(reasons.most_common())
    return report
