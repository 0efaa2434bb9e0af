"""Value linking measured without a model: which stored values a question's words find.

Run: ``python benchmarks/bench_linking.py [--set FILE] [--exclude FILE] [--out FILE.json]``.

For each usable question of a labelled ask set (default: the Mind the Query
development half, less its ``heldout-400`` test sample), the gold query's string
literals are the values the question names. :func:`cypherturn.grounding.link_values`
is run on the question alone and scored:

- **recall**: gold literals that some link's value equals (ignoring case), over
  all gold literals that are stored values of the graph (a literal the graph does
  not hold cannot be linked);
- **precision**: links whose value is a gold literal, over all links;
- **questions with a false link**: a link whose value no gold literal equals
  is shown to the model as a value the question names, which misleads it.

Each word-form rule of the linker is also switched off in turn
(:class:`~cypherturn.grounding.LinkRules`) to see what it contributes on questions it was not
written from. Development data; no model; prints one 80-column table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from cypherturn import api
from cypherturn.grounding import LinkRules, graph_index, link_values

ROOT = Path(__file__).resolve().parent.parent
MTQ = ROOT / "benchmarks" / "data" / "mind-the-query"

_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def _literals(cypher: str) -> set[str]:
    return {(a or b).lower() for a, b in _LITERAL.findall(cypher) if (a or b).strip()}


def _items(path: Path, exclude: Path | None) -> list[dict[str, Any]]:
    skip = set()
    if exclude is not None:
        skip = {json.loads(x)["id"] for x in exclude.read_text().splitlines() if x.strip()}
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in rows if r["id"] not in skip and r["check"]["status"] != "excluded"]


RULES = {
    "none": LinkRules(),
    "no_adverb": LinkRules(adverb=False),
    "no_plural": LinkRules(plural=False),
    "no_prefix": LinkRules(prefix=False),
}
"""The linker as shipped, and with each word-form rule switched off in turn."""


def _score(
    items: list[dict[str, Any]], indexes: dict[str, Any], rules: LinkRules
) -> dict[str, float]:
    gold_n = found_n = links_n = right_links = false_q = 0
    for item in items:
        index = indexes[item["graph"]]
        stored = index_values(index)
        gold = {v for v in _literals(item["check"]["gold"]) if v in stored}
        links = link_values(item["question"], index, rules=rules)
        values = {link.value.lower() for link in links}
        gold_n += len(gold)
        found_n += len(gold & values)
        links_n += len(links)
        right = sum(link.value.lower() in gold for link in links)
        right_links += right
        false_q += right < len(links)
    return {
        "questions": len(items),
        "gold_values": gold_n,
        "recall": found_n / gold_n if gold_n else 0.0,
        "links": links_n,
        "precision": right_links / links_n if links_n else 0.0,
        "false_link_questions": false_q / len(items) if items else 0.0,
    }


_VALUES: dict[int, set[str]] = {}


def index_values(index: Any) -> set[str]:
    """Every listed string value of the graph, lower case (what a literal can be linked to)."""
    key = id(index)
    if key not in _VALUES:
        values: set[str] = set()
        for (owner, prop), listed in index.values.items():
            values |= {v.lower() for v in listed.values if isinstance(v, str)}
            if not listed.complete and index.engine is not None:
                match = f"(x:`{owner}`)" if owner in index.label_keys else f"()-[x:`{owner}`]->()"
                rows = index.engine.execute(
                    f"MATCH {match} RETURN DISTINCT x.`{prop}` LIMIT 100000"
                ).rows
                values |= {r[0].lower() for r in rows if isinstance(r[0], str)}
        _VALUES[key] = values
    return _VALUES[key]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=MTQ / "dev-labelled.jsonl")
    parser.add_argument("--exclude", type=Path, default=MTQ / "heldout-400.jsonl")
    parser.add_argument("--variants", default="none,no_adverb,no_plural,no_prefix")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    items = _items(args.set, args.exclude)
    graphs = sorted({item["graph"] for item in items})
    results: dict[str, Any] = {"set": str(args.set.name), "questions": len(items), "rows": {}}
    with contextlib.ExitStack() as stack:
        engines = {g: stack.enter_context(api.connect(g)) for g in graphs}
        indexes = {g: graph_index(e) for g, e in engines.items()}
        print(f"{len(items)} questions of {args.set.name} (development), graphs {graphs}")
        print(
            f"{'variant':<12} {'recall':>8} {'precision':>10} {'false-link q':>13} {'links':>7} {'s':>6}"
        )
        for name in args.variants.split(","):
            started = time.perf_counter()
            row = _score(items, indexes, RULES[name])
            row["seconds"] = time.perf_counter() - started
            results["rows"][name] = row
            print(
                f"{name:<12} {row['recall']:>8.3f} {row['precision']:>10.3f} "
                f"{row['false_link_questions']:>13.3f} {row['links']:>7} {row['seconds']:>6.1f}"
            )
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
