"""Reference decisions measured without a model: does a question build on an earlier result?

Run: ``python benchmarks/bench_references.py --sessions cypherturn.jsonl [--out FILE.json]``
(``cypherturn bench build --out cypherturn.jsonl`` makes the sessions).

Two decisions are scored, on development data only:

- ``refers_back`` (chat): the question needs the conversation as context;
- ``refers_to_previous`` (grounding): the question builds on the whole previous
  result, so ``ras+`` may restrict its query to the names that result listed.

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
import sys
from pathlib import Path
from typing import Any

from cypherturn.chat import refers_back
from cypherturn.grounding import refers_to_previous

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


def _sessions_rates(
    lines: list[str], skip: set[str], rewritten_only: bool
) -> dict[str, dict[str, list[bool]]]:
    """Each decision's firings on following, binding and topic-shift turns (turns 2+)."""
    rates: dict[str, dict[str, list[bool]]] = {
        group: {"back": [], "prev": []} for group in ("following", "binding", "topic_shift")
    }
    for line in lines:
        session = json.loads(line)
        if session["session_id"] in skip:
            continue
        for previous, turn in itertools.pairwise(session["turns"]):
            if rewritten_only and not turn.get("rewrite"):
                continue
            text = turn["utterance"]
            flags = {"back": refers_back(text), "prev": refers_to_previous(text)}
            group = "topic_shift" if turn["chain_mode"] == "topic_shift" else "following"
            for k, v in flags.items():
                rates[group][k].append(v)
                if _binds(turn, previous):
                    rates["binding"][k].append(v)
    return rates


def _print(title: str, single: list[str], sessions: dict[str, dict[str, list[bool]]]) -> None:
    row = "{:<34} {:<20} {:<20}"
    print(row.format(f"fires on ({title})", "refers_back", "refers_to_previous"))
    print(
        row.format(
            "MtQ single questions (false)",
            _rate([refers_back(q) for q in single]),
            _rate([refers_to_previous(q) for q in single]),
        )
    )
    for group, name in (
        ("following", "session follow-ups (recall)"),
        ("binding", "turns binding names (recall)"),
        ("topic_shift", "topic shifts (false)"),
    ):
        print(row.format(name, _rate(sessions[group]["back"]), _rate(sessions[group]["prev"])))


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
