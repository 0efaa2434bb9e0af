"""When should ``ras+`` stop sampling? Stopping rules replayed on recorded ask runs, without a model.

Run: ``python benchmarks/bench_stopping.py RUN_DIR... [--out FILE.json]`` on run
directories of ``cypherturn bench ask`` that hold ``ras+`` answers.

``ras+`` with the ``vote`` part keeps sampling after a candidate is verified
(verdict ``answer``) until two verified candidates agree, the budget is spent,
or a greedy, unrepaired first candidate is confident. After the first verified
candidate the context no longer changes (no notes are added), and every
attempt's seed is fixed by its index, so every attempt up to the first verified
one is the same under any rule that stops there or later. Each rule below is
therefore replayed exactly from the recorded attempts: its chosen query is
re-executed on the embedded engine and scored against the gold with the
benchmark's scorer; its seconds are the recorded seconds less the model and
execution time of the attempts it would not have made.

Rules:

- ``vote``: the recorded rule (the replay must give the recorded scores);
- ``first``: stop at the first verified candidate (``ras+``'s default since
  2026-12-06, decided on these figures: docs/results/stopping).

A rule on the candidate's own sequence probability (``exp(logprob)`` at least
0.5, 0.7 or 0.9, at any attempt) was tried and never fired on the development
runs: a whole query's probability under the raw logits is far below 0.5.

Prints an 80-column table per run set: rEX and EX with Wilson 95% intervals,
median and p90 seconds, mean attempts, and the paired rEX difference against
``vote`` (bootstrap 95%). Which data a run holds (development or test) is
printed from its ``ask.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cypherturn.api import connect
from cypherturn.cypher import output_order
from cypherturn.errors import CypherTurnError
from cypherturn.graph import QueryResult
from cypherturn.metrics import ProportionInterval, ex_scores, wilson_interval


@dataclass(frozen=True)
class _Attempt:
    index: int
    verdict: str
    query: str
    seconds: float


@dataclass(frozen=True)
class _Question:
    run: str
    qid: str
    graph: str
    gold: str
    seconds: float
    ex: int
    rex: int
    attempts: list[_Attempt]
    selected: int | None


@dataclass(frozen=True)
class _Outcome:
    ex: int
    rex: int
    seconds: float
    attempts: int


Rule = Callable[[_Question], int | None]
"""A rule: the index of the attempt it ends on (inclusive), ``None`` for the recorded end."""


def _read(run_dir: Path) -> tuple[dict[str, Any], list[_Question]]:
    config = json.loads((run_dir / "ask.json").read_text(encoding="utf-8"))
    golds = {}
    for line in (run_dir / "golds.jsonl").read_text(encoding="utf-8").splitlines():
        check = json.loads(line)
        golds[check["question_id"]] = check["gold"]
    questions = []
    for line in (run_dir / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        result = answer.get("result")
        if not answer["strategy"].startswith("ras+") or not result:
            continue
        attempts = [
            _Attempt(
                index=a["index"],
                verdict=a.get("verdict") or "error",
                query=a.get("query") or "",
                seconds=(a.get("model_latency_s") or 0.0) + (a.get("execution_latency_s") or 0.0),
            )
            for a in result["attempts"]
        ]
        questions.append(
            _Question(
                run=run_dir.name,
                qid=answer["question_id"],
                graph=answer["graph"],
                gold=golds[answer["question_id"]],
                seconds=answer["seconds"],
                ex=answer["ex"],
                rex=answer["ex_relaxed"],
                attempts=attempts,
                selected=result.get("selected_attempt"),
            )
        )
    return config, questions


def _first_verified(question: _Question) -> int | None:
    return next((a.index for a in question.attempts if a.verdict == "answer"), None)


_RULES: dict[str, Rule] = {"vote": lambda q: None, "first": _first_verified}


class _Scorer:
    """Re-executes a chosen query on its graph and scores it against the gold (cached)."""

    def __init__(self, engines: dict[str, Any]) -> None:
        self._engines = engines
        self._golds: dict[str, QueryResult] = {}
        self._scores: dict[tuple[str, str], tuple[int, int]] = {}

    def score(self, question: _Question, query: str) -> tuple[int, int]:
        key = (question.gold, query)
        if key not in self._scores:
            engine = self._engines[question.graph]
            if question.gold not in self._golds:
                self._golds[question.gold] = engine.execute(question.gold, timeout_s=120)
            try:
                predicted = engine.execute(query, timeout_s=30, row_cap=10_000)
            except CypherTurnError:
                self._scores[key] = (0, 0)
            else:
                gold = self._golds[question.gold]
                self._scores[key] = ex_scores(gold, predicted, output_order(question.gold))
        return self._scores[key]


def _outcome(question: _Question, end: int | None, scorer: _Scorer) -> _Outcome:
    if end is None:
        return _Outcome(question.ex, question.rex, question.seconds, len(question.attempts))
    dropped = sum(a.seconds for a in question.attempts if a.index > end)
    chosen = question.attempts[end - 1]
    ex, rex = scorer.score(question, chosen.query)
    return _Outcome(ex, rex, question.seconds - dropped, end)


def _paired(a: Sequence[int], b: Sequence[int], seed: int = 0) -> tuple[float, float, float]:
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = rng.choice(diff, size=(10_000, len(diff)), replace=True).mean(axis=1)
    return float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def _bounds(interval: ProportionInterval) -> tuple[float, float]:
    return interval.low, interval.high


def _table(questions: list[_Question], scorer: _Scorer) -> list[dict[str, Any]]:
    rows = []
    outcomes = {
        name: [_outcome(q, rule(q), scorer) for q in questions] for name, rule in _RULES.items()
    }
    base = [o.rex for o in outcomes["vote"]]
    for name, found in outcomes.items():
        n = len(found)
        rex = sum(o.rex for o in found)
        ex = sum(o.ex for o in found)
        seconds = sorted(o.seconds for o in found)
        diff = _paired([o.rex for o in found], base)
        rows.append(
            {
                "rule": name,
                "n": n,
                "rex": rex / n,
                "rex_ci": _bounds(wilson_interval(rex, n)),
                "ex": ex / n,
                "ex_ci": _bounds(wilson_interval(ex, n)),
                "median_s": statistics.median(seconds),
                "p90_s": float(np.quantile(seconds, 0.9)),
                "attempts": sum(o.attempts for o in found) / n,
                "rex_minus_vote": diff,
                "gained": sum(o.rex > b for o, b in zip(found, base, strict=True)),
                "lost": sum(o.rex < b for o, b in zip(found, base, strict=True)),
            }
        )
    return rows


def _print(title: str, rows: list[dict[str, Any]]) -> None:
    print(title)
    print(f"{'rule':<15}{'rEX [95% CI]':<23}{'EX':>6}{'med s':>7}{'p90 s':>7}{'att.':>6}"
          f"{'rEX - vote':>16}")  # fmt: skip
    for r in rows:
        low, high = r["rex_ci"]
        d, dl, dh = r["rex_minus_vote"]
        print(
            f"{r['rule']:<15}{r['rex']:.3f} [{low:.3f}, {high:.3f}]  {r['ex']:>6.3f}"
            f"{r['median_s']:>7.1f}{r['p90_s']:>7.1f}{r['attempts']:>6.2f}"
            f" {d:+.3f} [{dl:+.2f},{dh:+.2f}]"
        )
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    sets = []
    graphs: set[str] = set()
    for run_dir in args.runs:
        config, questions = _read(run_dir)
        if not questions:
            print(f"{run_dir}: no ras+ answers", file=sys.stderr)
            return 1
        sets.append((run_dir, config, questions))
        graphs |= {q.graph for q in questions}
    results: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        scorer = _Scorer({g: stack.enter_context(connect(g)) for g in sorted(graphs)})
        pooled: list[_Question] = []
        for run_dir, config, questions in sets:
            title = f"{run_dir} ({config['ask_set']}, {config['split']} data, n={len(questions)})"
            results[str(run_dir)] = _table(questions, scorer)
            _print(title, results[str(run_dir)])
            pooled += questions
        if len(sets) > 1:
            rows = _table(pooled, scorer)
            _print(f"pooled (n={len(pooled)})", rows)
            results["pooled"] = rows
        # the replay's own check: the recorded choice, re-executed, scores as recorded
        differ = [
            f"{q.run}/{q.qid}"
            for q in pooled
            if q.selected is not None
            and scorer.score(q, q.attempts[q.selected - 1].query)[1] != q.rex
        ]
        print(f"recorded choices re-scored differently: {len(differ)} of {len(pooled)}", differ[:5])
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
