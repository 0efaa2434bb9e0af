"""Reference decisions measured without a model: does a question build on an earlier result?

Run: ``python benchmarks/bench_references.py --sessions cypherturn.jsonl [--out FILE.json]``
(``cypherturn bench build --out cypherturn.jsonl`` makes the sessions).

Three decisions are scored:

- ``refers_back`` (chat): the question needs the conversation as context;
- ``refers_to_previous`` (grounding): the question builds on the whole previous
  result, read from the question alone;
- ``points_to_previous`` (grounding, what ``bind_reference`` decides on): the
  same, where the previous result lists the names of one label and nothing in
  the question points the reference at another label. In sessions the label is
  read from the previous gold (``RETURN [DISTINCT] v.name`` with ``(v:Label``),
  the graph's labels from the world's golds; a previous result that lists no
  names binds nothing. A single question has no previous result: its column is
  ``refers_to_previous``'s, an upper bound.

Data and labels:

- **single questions must bind nothing**: the Mind the Query development half,
  less its ``heldout-400`` test sample. Every question is standalone, so every
  firing is a false one.
- **built sessions** (``--sessions``), less the frozen test sessions: turns 2+.
  A turn *follows* when its chain mode is not ``topic_shift`` (its gold query
  builds on an earlier one); it *binds* when its gold query names every name
  the previous turn's gold result listed (1 to 50 strings in one column).
  Reported: the rate each decision fires on following and binding turns
  (recall), and on topic shifts (false firings).

Prints an 80-column table; the numbers in docs/results/references/.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

from cypherturn.chat import refers_back
from cypherturn.grounding import points_to_previous, refers_to_previous

ROOT = Path(__file__).resolve().parent.parent
MTQ = ROOT / "benchmarks" / "data" / "mind-the-query"
TEST_SESSIONS = ROOT / "benchmarks" / "data" / "cypherturn-test" / "sessions.jsonl"


def _rate(flags: list[bool]) -> str:
    return f"{sum(flags) / len(flags):.3f} ({sum(flags)}/{len(flags)})" if flags else "-"


def _binds(turn: dict[str, Any], previous: dict[str, Any]) -> bool:
    rows = previous.get("gold_result") or {}
    rows = rows.get("rows", []) if isinstance(rows, dict) else []
    names = [r[0] for r in rows if len(r) == 1 and isinstance(r[0], str)]
    if not names or len(names) != len(rows) or len(names) > 50:
        return False
    return all(f"'{n}'" in turn["gold_cypher"] or f'"{n}"' in turn["gold_cypher"] for n in names)


_NAMES = re.compile(r"RETURN\s+(?:DISTINCT\s+)?(\w+)\.name\b")
_LABELS = re.compile(r"\(\w*:(\w+)")


def _listed_label(gold: str) -> str | None:
    """The label whose names a gold query returns (``RETURN v.name`` with ``(v:Label``)."""
    returned = _NAMES.search(gold)
    if returned is None:
        return None
    found = re.search(rf"\({re.escape(returned.group(1))}:(\w+)", gold)
    return found.group(1) if found else None


def _world_labels(lines: list[str]) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = {}
    for line in lines:
        session = json.loads(line)
        found = labels.setdefault(session["world"], set())
        for turn in session["turns"]:
            found.update(_LABELS.findall(turn["gold_cypher"]))
    return labels


def _sessions_rates(
    lines: list[str], skip: set[str], rewritten_only: bool
) -> dict[str, dict[str, list[bool]]]:
    """Each decision's firings on following, binding and topic-shift turns (turns 2+)."""
    rates: dict[str, dict[str, list[bool]]] = {
        group: {"back": [], "prev": [], "bind": []}
        for group in ("following", "binding", "topic_shift")
    }
    world_labels = _world_labels(lines)
    for line in lines:
        session = json.loads(line)
        if session["session_id"] in skip:
            continue
        labels = world_labels[session["world"]]
        for previous, turn in itertools.pairwise(session["turns"]):
            if rewritten_only and not turn.get("rewrite"):
                continue
            text = turn["utterance"]
            listed = _listed_label(previous["gold_cypher"])
            flags = {
                "back": refers_back(text),
                "prev": refers_to_previous(text),
                "bind": listed is not None and points_to_previous(text, listed, labels),
            }
            group = "topic_shift" if turn["chain_mode"] == "topic_shift" else "following"
            for k, v in flags.items():
                rates[group][k].append(v)
                if _binds(turn, previous):
                    rates["binding"][k].append(v)
    return rates


def _print(title: str, single: list[str], sessions: dict[str, dict[str, list[bool]]]) -> None:
    row = "{:<22} {:<18} {:<18} {:<18}"
    print(f"fires on ({title})")
    print(row.format("", "refers_back", "refers_to_previous", "points_to_prev."))
    prev = _rate([refers_to_previous(q) for q in single])
    print(row.format("MtQ singles (false)", _rate([refers_back(q) for q in single]), prev, prev))
    for group, name in (
        ("following", "follow-ups (recall)"),
        ("binding", "binding (recall)"),
        ("topic_shift", "topic shifts (false)"),
    ):
        flags = sessions[group]
        print(row.format(name, *(_rate(flags[k]) for k in ("back", "prev", "bind"))))


def _summary(single: list[str], sessions: dict[str, dict[str, list[bool]]]) -> dict[str, Any]:
    return {
        "single_questions": {
            "n": len(single),
            "refers_back": sum(map(refers_back, single)),
            "refers_to_previous": sum(map(refers_to_previous, single)),
        },
        "sessions": {
            group: {k: [sum(v), len(v)] for k, v in flags.items()}
            for group, flags in sessions.items()
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path)
    parser.add_argument(
        "--test",
        action="store_true",
        help="score the frozen test splits instead (MtQ heldout-400, the CypherTurn test "
        "sessions as built and their paraphrased turns); log the look in test-looks.md",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not args.test and args.sessions is None:
        parser.error("--sessions FILE (development) or --test")
    held_lines = (MTQ / "heldout-400.jsonl").read_text().splitlines()
    test_lines = [x for x in TEST_SESSIONS.read_text().splitlines() if x]
    result: dict[str, Any] = {}
    if args.test:
        single = [json.loads(x)["question"] for x in held_lines if x]
        plain = _sessions_rates(test_lines, set(), rewritten_only=False)
        _print("test data", single, plain)
        result["test"] = _summary(single, plain)
        para_file = TEST_SESSIONS.with_name("sessions-paraphrased.jsonl")
        para_lines = [x for x in para_file.read_text().splitlines() if x]
        para = _sessions_rates(para_lines, set(), rewritten_only=True)
        print()
        _print("test, paraphrased turns", [], para)
        result["test_paraphrased"] = _summary([], para)
    else:
        held = {json.loads(x)["id"] for x in held_lines if x}
        single = [
            r["question"]
            for r in map(json.loads, (MTQ / "dev-labelled.jsonl").read_text().splitlines())
            if r["id"] not in held and r["check"]["status"] != "excluded"
        ]
        test_ids = {json.loads(x)["session_id"] for x in test_lines}
        sessions = _sessions_rates(args.sessions.read_text().splitlines(), test_ids, False)
        _print("development data", single, sessions)
        result["development"] = _summary(single, sessions)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
