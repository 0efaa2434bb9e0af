"""Question sets of the ask benchmark: any JSONL of question, gold Cypher and graph, or a packaged set.

``cypherturn bench ask SET`` reads ``SET`` as one of:

* a packaged ask set by name: ``ask-dev`` (the 36 questions the system was
  developed on, :func:`~cypherturn.experiments.load_ask_set`) or ``ask-test`` (36
  questions written from the schemas and data alone and frozen before any system
  output on them was seen; never used to tune);
* an ask-set YAML file (the layout of :mod:`._askset`);
* a JSON Lines file, one question an object. Field names of the common
  Text2Cypher data sets are accepted::

      id        | question_id | unique_id        (default: "line-<N>")
      question  | utterance   | nl
      gold      | cypher      | gold_cypher | query
      graph     | database                      (or --graph for every line)
      category  | tier                          (optional: a breakdown of the report)
      phenomena                                 (optional list)
      split                                     (optional: development | test)
      manual    {"result": "0"|"1", "logical": "0"|"1", ...}   (Mind the Query's labels)
      check     a GoldCheck (files written by ``cypherturn bench ask-import``)

A set's data split is the split its questions declare; a set that declares none
is development data (a figure is never called a test figure unless its data says
so). Any other field is ignored.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments._askset import load_ask_set, read_ask_file
from cypherturn.records import DataSplit, GoldCheck

__all__ = [
    "PACKAGED_ASK_SETS",
    "AskItem",
    "AskSet",
    "read_ask_items",
    "write_ask_items",
]

PACKAGED_ASK_SETS: dict[str, DataSplit] = {
    "ask-dev": DataSplit.DEVELOPMENT,
    "ask-test": DataSplit.TEST,
}
"""The packaged ask sets by name, with their data split."""

_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "unique_id"),
    "question": ("question", "utterance", "nl"),
    "gold": ("gold", "cypher", "gold_cypher", "query"),
    "graph": ("graph", "database"),
    "category": ("category", "tier"),
}


class AskItem(BaseModel):
    """One question of an ask benchmark.

    Attributes:
        id: unique within the set.
        graph: the graph the gold runs on (a known world or a graph on ``--engine``).
        question: the question as a user would type it.
        gold: the gold query as the data set wrote it.
        category: a breakdown key (Mind the Query's category, the ask set's tier).
        phenomena: what the question exercises (the packaged sets' tags).
        split: the data split it belongs to (``None``: undeclared, read as development).
        manual_rows: the data set's own check that the gold returned rows on its
            source database (``None``: not checked by hand).
        manual_logical: the data set's hand judgement that the gold answers the
            question (``None``: not judged).
        check: the gold's label on our engine, when the file was written by the importer.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    graph: str = Field(min_length=1)
    question: str = Field(min_length=1)
    gold: str = Field(min_length=1)
    category: str = ""
    phenomena: tuple[str, ...] = ()
    split: DataSplit | None = None
    manual_rows: bool | None = None
    manual_logical: bool | None = None
    check: GoldCheck | None = None


class AskSet(BaseModel):
    """A named question set with its data split and digest.

    Attributes:
        name: the packaged set's name, or the file's stem.
        source: where it was read from (the name or the path).
        split: the split of its questions (development when none is declared).
        items: the questions, in file order.
    """

    name: str
    source: str
    split: DataSplit
    items: list[AskItem]

    @property
    def digest(self) -> str:
        """SHA-256 of the questions and golds as read (a run is bound to it)."""
        payload = json.dumps(
            [item.model_dump(mode="json", exclude={"check"}) for item in self.items],
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _flag(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    return str(value).strip() in ("1", "true", "True", "yes")


def _pick(raw: dict[str, Any], field: str) -> Any:
    return next((raw[key] for key in _ALIASES[field] if raw.get(key) not in (None, "")), None)


def _item(raw: Any, number: int, graph: str | None) -> AskItem:
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    found = raw.get("manual")
    manual: dict[str, Any] = found if isinstance(found, dict) else {}
    fields: dict[str, Any] = {
        "id": str(_pick(raw, "id") or f"line-{number}"),
        "graph": _pick(raw, "graph") or graph,
        "question": _pick(raw, "question"),
        "gold": _pick(raw, "gold"),
        "category": str(_pick(raw, "category") or ""),
        "phenomena": tuple(raw.get("phenomena") or ()),
        "split": raw.get("split"),
        "manual_rows": _flag(manual.get("result")),
        "manual_logical": _flag(manual.get("logical")),
        "check": raw.get("check"),
    }
    missing = [name for name in ("graph", "question", "gold") if not fields[name]]
    if missing:
        hint = " (or pass --graph)" if missing == ["graph"] else ""
        raise ValueError(f"no {', '.join(missing)}{hint}")
    return AskItem.model_validate(fields)


def _read_jsonl(path: Path, graph: str | None) -> list[AskItem]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise DatasetError(f"cannot read {path}: {e}") from e
    items: list[AskItem] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            items.append(_item(json.loads(line), number, graph))
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}:{number}: not JSON: {e.msg}") from e
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise DatasetError(f"{path}:{number}: {where}: {first['msg']}") from e
        except ValueError as e:
            raise DatasetError(f"{path}:{number}: {e}") from e
    return items


def _from_ask_set(questions: Sequence[Any], split: DataSplit | None) -> list[AskItem]:
    return [
        AskItem(
            id=q.id,
            graph=q.graph,
            question=q.question,
            gold=q.gold,
            category=q.tier,
            phenomena=tuple(q.phenomena),
            split=split,
        )
        for q in questions
    ]


def _split_of(items: Sequence[AskItem], where: str) -> DataSplit:
    declared = {item.split for item in items}
    if len(declared) > 1:
        raise DatasetError(
            f"{where} mixes data splits ({', '.join(sorted(str(s) for s in declared))}): "
            "a figure over it could not say which it is; split the file"
        )
    found = declared.pop() if declared else None
    return found if found is not None else DataSplit.DEVELOPMENT


def read_ask_items(source: str | Path, *, graph: str | None = None) -> AskSet:
    """Read a question set: a packaged set's name, an ask-set YAML file or a JSONL file.

    Args:
        source: ``ask-dev``, ``ask-test`` or a path (see the module docstring).
        graph: the graph of lines that name none.

    Returns:
        The :class:`AskSet`.

    Raises:
        ConfigError: an unknown set name that is no file either.
        DatasetError: an unreadable or malformed file (path and line named), an
            empty set, repeated ids, or mixed splits.
    """
    text = str(source)
    if text in PACKAGED_ASK_SETS:
        split = PACKAGED_ASK_SETS[text]
        items = _from_ask_set(load_ask_set(split=str(split)), split)
        return AskSet(name=text, source=text, split=split, items=items)
    path = Path(source)
    if not path.is_file():
        known = ", ".join(PACKAGED_ASK_SETS)
        raise ConfigError(f"{text}: no such file, and not a packaged ask set ({known})")
    if path.suffix in (".yaml", ".yml"):
        items = _from_ask_set(read_ask_file(path), None)
    else:
        items = _read_jsonl(path, graph)
    if not items:
        raise DatasetError(f"{path} holds no question")
    repeated = sorted(i for i, n in Counter(item.id for item in items).items() if n > 1)
    if repeated:
        raise DatasetError(f"{path}: repeated question ids: {', '.join(repeated[:5])}")
    return AskSet(name=path.stem, source=str(path), split=_split_of(items, str(path)), items=items)


def write_ask_items(path: Path, items: Sequence[AskItem]) -> None:
    """Write questions as JSONL in the layout :func:`read_ask_items` reads (manual labels kept).

    Raises:
        OSError: the file cannot be written.
    """
    lines = []
    for item in items:
        raw = item.model_dump(
            mode="json", exclude_none=True, exclude={"manual_rows", "manual_logical"}
        )
        if not raw.get("phenomena"):
            raw.pop("phenomena", None)
        manual = {
            key: "1" if value else "0"
            for key, value in (("result", item.manual_rows), ("logical", item.manual_logical))
            if value is not None
        }
        if manual:
            raw["manual"] = manual
        lines.append(json.dumps(raw, ensure_ascii=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
