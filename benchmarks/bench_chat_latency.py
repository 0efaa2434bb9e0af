"""Seconds per ``chat`` turn with the default local model, split into Cypher and answer.

Run: ``python benchmarks/bench_chat_latency.py [--model SPEC] [--graphs pole,healthcare]
[--strategy ras+,ras+:+vote,ras+@warm] [--out docs/results/chat-latency/README.md]``.

A strategy written with ``@warm`` is played as ``cypherturn chat`` plays it: the
session's :meth:`~cypherturn.api.ChatSession.warm` brings the prompt prefix into
the model before the first question (the chat window does this while the user
types), and its seconds are printed apart, not counted in any turn.

Each graph gets one scripted conversation of follow-up questions (the second and
later turns refer to earlier results, as a user of ``cypherturn chat`` would
type them), played through :class:`cypherturn.api.ChatSession` with the
defaults of ``cypherturn chat``: ``ras+`` with budget 5 (or each ``--strategy`` in
turn, side by side in one process, each with its own fresh prefix cache), the answer in words,
the conversation so far as context, the model given by ``--model`` (default: the
strongest local model installed, as ``cypherturn chat`` picks it). The model is
loaded once, before the first turn, and that load is timed apart; the disk
prefix cache lives in a temporary ``CYPHERTURN_CACHE_DIR`` so every graph's
first turn pays for evaluating its prefix, as a first chat on a new graph does.

Per turn it reports: the turn's wall time (what the user waits from Enter to the
end of the answer), the seconds until the first Cypher token and until the first
token of the answer in words (streamed, so the user reads from then on), the
model's seconds writing Cypher (every attempt) and writing the answer, the
model calls, and the outcome. Summary rows give the median and the 90th
percentile over all turns, and over the follow-ups only; then each turn's query and answer.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CONVERSATIONS: dict[str, tuple[str, ...]] = {
    "pole": (
        "How many crimes are there of each type?",
        "Which of those types has the most crimes?",
        "Which officers investigated the most crimes?",
        "How many crimes did the first of them investigate?",
        "Which areas have the most crimes?",
    ),
    "healthcare": (
        "Which drugs are reported in the most cases?",
        "Which manufacturers make the first of those drugs?",
        "How many cases reported a death as the outcome?",
        "What are the ten most common reactions?",
    ),
}
"""Scripted conversations: the first question opens, the others follow up."""


@dataclass
class Turn:
    """One measured chat turn (seconds throughout)."""

    strategy: str
    graph: str
    index: int
    question: str
    outcome: str
    seconds: float
    first_cypher_s: float | None
    first_answer_s: float | None
    cypher_model_s: float
    answer_s: float
    calls: int
    answer_source: str
    query: str
    answer: str


class _FirstToken:
    """Records the seconds from ``start`` to the first streamed piece."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.at: float | None = None

    def __call__(self, piece: str) -> None:
        if self.at is None and piece:
            self.at = time.perf_counter() - self.start


WARM = "@warm"
"""Suffix of a ``--strategy`` entry: call ``ChatSession.warm`` before the first question."""


def _play(graph: str, questions: tuple[str, ...], model: object, strategy: str) -> list[Turn]:
    """Play one conversation on ``graph`` with the loaded ``model``; one :class:`Turn` per question."""
    from cypherturn import api

    turns: list[Turn] = []
    name = strategy.removesuffix(WARM)
    config = api.ChatConfig(graph=graph, seed=0, strategy=name)
    with api.ChatSession(config, model=model) as chat:  # type: ignore[arg-type]
        if strategy.endswith(WARM):
            started = time.perf_counter()
            tokens = chat.warm()
            print(
                f"{strategy} {graph} warm-up: {time.perf_counter() - started:5.1f} s, "
                f"{tokens} prompt tokens (before the first question, as while the user types)",
                file=sys.stderr,
                flush=True,
            )
        for question in questions:
            started = time.perf_counter()
            cypher, words = _FirstToken(started), _FirstToken(started)
            turn = chat.ask(question, on_token=cypher, on_answer_token=words)
            seconds = time.perf_counter() - started
            attempts = turn.strategy.attempts if turn.strategy is not None else []
            turns.append(
                Turn(
                    strategy=strategy,
                    graph=graph,
                    index=turn.index,
                    question=question,
                    outcome=turn.outcome,
                    seconds=seconds,
                    first_cypher_s=cypher.at,
                    first_answer_s=words.at,
                    cypher_model_s=sum(a.model_latency_s for a in attempts),
                    answer_s=turn.answer.seconds if turn.answer is not None else 0.0,
                    calls=len(attempts) + (1 if turn.answer and turn.answer.model_text else 0),
                    answer_source=turn.answer.source if turn.answer is not None else "-",
                    query=turn.query or "",
                    answer=turn.answer.text if turn.answer is not None else (turn.reason or ""),
                )
            )
            print(
                f"{strategy} {graph} turn {turn.index}: {seconds:5.1f} s ({turn.outcome}) {question}",
                file=sys.stderr,
                flush=True,
            )
    return turns


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _summary(name: str, turns: list[Turn]) -> str:
    """One Markdown row: median and 90th percentile of the turn seconds and their parts."""
    if not turns:
        return f"| {name} | 0 | - | - | - | - | - |"
    wall = [t.seconds for t in turns]
    first = [t.first_answer_s for t in turns if t.first_answer_s is not None]
    return (
        f"| {name} | {len(turns)} | {statistics.median(wall):.1f} | "
        f"{float(np.percentile(wall, 90)):.1f} | "
        f"{statistics.median([t.cypher_model_s for t in turns]):.1f} | "
        f"{statistics.median([t.answer_s for t in turns]):.1f} | "
        f"{_fmt(statistics.median(first) if first else None)} |"
    )


def _ratios(strategies: list[str], turns: list[Turn]) -> list[str]:
    """The first strategy's median turn against each other's, and which is how many times faster."""
    if len(strategies) < 2:
        return []
    lines = [""]
    first = strategies[0]
    for other in strategies[1:]:
        kinds = (
            ("all turns", lambda t: True),
            ("first turns of a graph", lambda t: t.index == 1),
            ("follow-ups", lambda t: t.index > 1),
        )
        for name, keep in kinds:
            mine = statistics.median(t.seconds for t in turns if t.strategy == first and keep(t))
            theirs = statistics.median(t.seconds for t in turns if t.strategy == other and keep(t))
            faster, ratio = (first, theirs / mine) if mine <= theirs else (other, mine / theirs)
            lines.append(
                f"Median {name}: `{first}` {mine:.1f} s, `{other}` {theirs:.1f} s: "
                f"`{faster}` {ratio:.2f}x faster, same run."
            )
    return lines


def main() -> None:
    """Play the conversations, print the per-turn and summary tables, optionally write them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None, help="Model spec (default: as `cypherturn chat`).")
    parser.add_argument("--graphs", default=",".join(CONVERSATIONS), help="Comma-separated graphs.")
    parser.add_argument(
        "--strategy", default="ras+", help="Comma-separated strategies, played side by side."
    )
    parser.add_argument("--out", type=Path, default=None, help="Also write the tables here.")
    args = parser.parse_args()
    strategies = [s for s in args.strategy.split(",") if s]
    graphs = [g for g in args.graphs.split(",") if g]
    unknown = [g for g in graphs if g not in CONVERSATIONS]
    if unknown:
        parser.error(
            f"no conversation for {', '.join(unknown)}; choose from {', '.join(CONVERSATIONS)}"
        )

    from cypherturn import api
    from cypherturn.models import CACHE_DIR_ENV, GGUFChatModel, load_model

    spec = args.model or api.ChatConfig().model
    load_average = os.getloadavg()
    turns: list[Turn] = []
    with tempfile.TemporaryDirectory() as caches:
        os.environ[CACHE_DIR_ENV] = str(Path(caches) / "load")
        model = load_model(spec)
        started = time.perf_counter()
        load = getattr(model, "load", None)
        if callable(load):
            load()
        load_s = time.perf_counter() - started
        for strategy in strategies:
            # Each strategy's first turn on a graph evaluates its prefix, as a new chat
            # does: an empty disk cache, a model object that has not opened one yet, and
            # a context that holds no earlier prompt.
            os.environ[CACHE_DIR_ENV] = str(
                Path(caches) / strategy.replace(":", "_").replace("@", "_")
            )
            model = load_model(spec)
            if isinstance(model, GGUFChatModel):
                model.llama.reset()
            turns += [t for g in graphs for t in _play(g, CONVERSATIONS[g], model, strategy)]

    lines = [
        f"Model `{model.spec}` (loaded in {load_s:.1f} s, not counted), strategies "
        f"{', '.join(f'{s}@5' for s in strategies)} played one after the other in one process, "
        f"{os.cpu_count()} cores, {platform.machine()}, load average before "
        f"{' '.join(f'{x:.1f}' for x in load_average)}.",
        "",
        "| strategy | graph | turn | question | outcome | turn s | first Cypher token s | "
        "first answer token s | Cypher model s | answer s | model calls | answer |",
        "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {t.strategy} | {t.graph} | {t.index} | {t.question} | {t.outcome} | {t.seconds:.1f} | "
        f"{_fmt(t.first_cypher_s)} | {_fmt(t.first_answer_s)} | {t.cypher_model_s:.1f} | "
        f"{t.answer_s:.1f} | {t.calls} | {t.answer_source} |"
        for t in turns
    ]
    lines += [
        "",
        "| strategy, turns | n | median turn s | p90 turn s | median Cypher model s | "
        "median answer s | median first answer token s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for strategy in strategies:
        played = [t for t in turns if t.strategy == strategy]
        lines += [
            _summary(f"{strategy}, all", played),
            _summary(f"{strategy}, first of a graph", [t for t in played if t.index == 1]),
            _summary(f"{strategy}, follow-ups", [t for t in played if t.index > 1]),
        ]
    lines += _ratios(strategies, turns)
    lines += ["", "What each turn ran and answered:", ""]
    lines += [
        f"- {t.strategy} {t.graph} {t.index}: `{' '.join(t.query.split())}` -> "
        f"{' '.join(t.answer.split())[:300]}"
        for t in turns
    ]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        command = "python benchmarks/bench_chat_latency.py " + " ".join(sys.argv[1:])
        args.out.write_text(
            f"# Chat latency per turn\n\nCommand: `{command.strip()}`\n\n{text}\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
