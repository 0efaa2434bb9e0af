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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    held = {json.loads(x)["id"] for x in (MTQ / "heldout-400.jsonl").read_text().splitlines() if x}
    single = [
        r["question"]
        for r in map(json.loads, (MTQ / "dev-labelled.jsonl").read_text().splitlines())
        if r["id"] not in held and r["check"]["status"] != "excluded"
    ]
    test_ids = {json.loads(x)["session_id"] for x in TEST_SESSIONS.read_text().splitlines() if x}
    follows: dict[str, list[bool]] = {"back": [], "prev": []}
    binds: dict[str, list[bool]] = {"back": [], "prev": []}
    shifts: dict[str, list[bool]] = {"back": [], "prev": []}
    for line in args.sessions.read_text().splitlines():
        session = json.loads(line)
        if session["session_id"] in test_ids:
            continue
        turns = session["turns"]
        for previous, turn in itertools.pairwise(turns):
            text = turn["utterance"]
            flags = {"back": refers_back(text), "prev": refers_to_previous(text)}
            target = shifts if turn["chain_mode"] == "topic_shift" else follows
            for k, v in flags.items():
                target[k].append(v)
                if _binds(turn, previous):
                    binds[k].append(v)
    result = {
        "single_questions": {
            "n": len(single),
            "refers_back": sum(map(refers_back, single)),
            "refers_to_previous": sum(map(refers_to_previous, single)),
        },
        "sessions": {
            "following": {k: [sum(v), len(v)] for k, v in follows.items()},
            "binding": {k: [sum(v), len(v)] for k, v in binds.items()},
            "topic_shift": {k: [sum(v), len(v)] for k, v in shifts.items()},
        },
    }
    print("fires on (development data)        refers_back          refers_to_previous")
    row = "{:<34} {:<20} {:<20}"
    print(
        row.format(
            "MtQ single questions (false)",
            _rate([refers_back(q) for q in single]),
            _rate([refers_to_previous(q) for q in single]),
        )
    )
    print(row.format("session follow-ups (recall)", _rate(follows["back"]), _rate(follows["prev"])))
    print(row.format("turns binding names (recall)", _rate(binds["back"]), _rate(binds["prev"])))
    print(row.format("topic shifts (false)", _rate(shifts["back"]), _rate(shifts["prev"])))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
