"""Answer accuracy of `cypherturn ask` on the ask set: EX and relaxed EX per model x strategy (issue 11).

Runs :func:`cypherturn.api.ask` on every question of the packaged ask set
(:func:`cypherturn.experiments.load_ask_set`: plain-language questions with gold
Cypher over POLE, Healthcare and Fraud) for each model and strategy, with budget
n, and scores the final result against the gold's rows with the project's EX and
relaxed EX (:func:`cypherturn.metrics.ex_scores`; rows are compared in order when
the gold's final RETURN has ORDER BY, :func:`cypherturn.cypher.output_order`).
A question whose final query did not execute scores 0.

Every (model, strategy, question) appends one JSON line to ``OUT/records.jsonl``
as soon as it is done (flushed): executable, EX, relaxed EX, attempts, tokens,
seconds, the final query and the whole :class:`~cypherturn.strategies.StrategyResult`
(every attempt with its grounding findings and repairs). Rerunning the same
command skips the lines already there, so a killed run resumes; ``OUT/config.json``
holds budget, temperature, seed and the ask set's digest, and a rerun with other
values is refused, naming them. At the end the table (rows = model x strategy:
executable rate, EX, relaxed EX, mean attempts, median seconds per question), a
per-dataset and a per-phenomenon (relaxed EX) breakdown are printed and written to
``OUT/summary.md``, computed over the questions, models and strategies of this
command.

Strategies are passed through to ``api.ask``: ``single``, ``is``, ``ras``, and the
grounded ``ras+`` / ``ras+:<part>[,<part>...]`` (quote or separate such names with
``;`` when they hold commas: ``--strategies 'ras;ras+:check,values'``). Models are
any ``--model`` spec (``smollm2-135m``, ``qwen2.5-coder-1.5b``, ``default``,
``gguf:PATH``, ``openai:NAME``); records name the model that really ran
(``default`` resolves to the strongest installed model).

Usage:
    python benchmarks/bench_ask_accuracy.py [--models smollm2-135m] [--strategies single,is,ras]
        [--datasets healthcare,crime,fraud] [--budget 5] [--temperature 0.9] [--seed 0]
        [--out runs/ask-accuracy] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from rich.console import Console
from rich.table import Table

from cypherturn import api
from cypherturn.cypher import output_order
from cypherturn.errors import (
    ConfigError,
    CypherTurnError,
    DatasetError,
    EngineConnectionError,
    ModelUnavailableError,
)
from cypherturn.experiments import AskQuestion, episode_seed, load_ask_set
from cypherturn.graph import QueryResult
from cypherturn.metrics import ex_scores
from cypherturn.models import ChatModel, load_model
from cypherturn.records import config_changes
from cypherturn.strategies import GROUNDING_PARTS, GroundingParts, get_strategy

CONFIG_FILE = "config.json"
RECORDS_FILE = "records.jsonl"
SUMMARY_FILE = "summary.md"


class BenchConfig(BaseModel):
    """The settings a run directory is bound to (models, strategies and questions may vary)."""

    budget: int = Field(ge=1)
    temperature: float = Field(ge=0)
    seed: int
    ask_set: str


class AskRecord(BaseModel):
    """One (model, strategy, question) outcome: one line of ``records.jsonl``.

    Attributes:
        model: the spec of the model that ran (a resolved name for ``default``).
        strategy: the strategy string passed to ``api.ask``.
        question_id / dataset / tier / phenomena: the question (see AskQuestion).
        executable: the final query executed.
        ex / ex_relaxed: strict and relaxed EX against the gold (0 or 1).
        attempts: attempts used; tokens: prompt plus completion tokens over them.
        seconds: wall time of the ``api.ask`` call.
        final_query: the final query (empty when none was extracted or ask failed).
        error: the error that ended the question before a result (``None`` otherwise).
        result: the whole StrategyResult as JSON (``None`` when ask raised).
    """

    model: str
    strategy: str
    question_id: str
    dataset: str
    tier: str
    phenomena: list[str]
    executable: bool
    ex: int
    ex_relaxed: int
    attempts: int
    tokens: int
    seconds: float
    final_query: str
    error: str | None = None
    result: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """(model, strategy, question id): what a resumed run skips."""
        return (self.model, self.strategy, self.question_id)


class Aborted(Exception):
    """The run cannot go on (a message for the user, exit status 1)."""


def _names(text: str) -> list[str]:
    separator = ";" if ";" in text else ","
    names = [n.strip() for n in text.split(separator) if n.strip()]
    if not names:
        raise ConfigError(f"empty list {text!r}")
    return list(dict.fromkeys(names))


def _strategies(text: str) -> list[str]:
    """Strategy names; ``ras+:a,b`` keeps its commas (parts follow the colon)."""
    if ";" in text or ":" not in text:
        return _names(text)
    names: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if names and ":" in names[-1] and piece and ":" not in piece and not _is_strategy(piece):
            names[-1] = f"{names[-1]},{piece}"
        elif piece:
            names.append(piece)
    return list(dict.fromkeys(names))


def _is_strategy(name: str) -> bool:
    try:
        get_strategy(name)
    except ConfigError:
        return False
    return True


def ask_set_digest(questions: Iterable[AskQuestion]) -> str:
    """SHA-256 of the questions' canonical JSON (what ``config.json`` binds a run to)."""
    payload = json.dumps([q.model_dump(mode="json") for q in questions], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def bind_config(out: Path, config: BenchConfig) -> None:
    """Write ``config.json`` in a new run directory, or check it against an existing one.

    Raises:
        Aborted: the directory was started with other settings (they are named).
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / CONFIG_FILE
    if path.exists():
        try:
            stored = BenchConfig.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as e:
            raise Aborted(f"{path} is not a configuration of this benchmark: {e}") from e
        changes = config_changes(stored, config)
        if changes:
            raise Aborted(
                f"{out} was run with other settings ({'; '.join(changes)}); "
                "use another --out or the same settings"
            )
        return
    path.write_text(config.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_records(path: Path) -> list[AskRecord]:
    """The records already written; a torn last line (a killed write) is dropped from the file.

    Raises:
        Aborted: a line other than the last one is not a record.
    """
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    records: list[AskRecord] = []
    for number, line in enumerate(lines, 1):
        try:
            records.append(AskRecord.model_validate_json(line))
        except ValidationError as e:
            if number < len(lines):
                raise Aborted(f"{path}:{number} is not a record: {e.errors()[0]['msg']}") from e
            kept = "".join(f"{text}\n" for text in lines[:-1])
            temporary = path.with_suffix(".tmp")
            temporary.write_text(kept, encoding="utf-8")
            os.replace(temporary, path)
    return records


def gold_results(questions: Sequence[AskQuestion]) -> dict[str, QueryResult]:
    """Each question's gold result on its graph (loaded into the engine on first use).

    Raises:
        Aborted: a gold fails or returns no rows (the set and the graph disagree).
    """
    results: dict[str, QueryResult] = {}
    for graph in dict.fromkeys(q.graph for q in questions):
        with api.connect(graph) as engine:
            for question in (q for q in questions if q.graph == graph):
                try:
                    result = engine.execute(question.gold)
                except CypherTurnError as e:
                    raise Aborted(f"gold of {question.id} fails on graph {graph}: {e}") from e
                if not result.rows:
                    raise Aborted(f"gold of {question.id} returns no rows on graph {graph}")
                results[question.id] = result
    return results


def score(
    question: AskQuestion, gold: QueryResult, model: ChatModel, strategy: str, config: BenchConfig
) -> AskRecord:
    """Ask one question and score the final result against the gold.

    The sampling seed is the question's episode seed (the same for every strategy).

    Raises:
        Aborted: the model or the engine is unavailable (nothing could be scored).
    """
    started = time.perf_counter()
    common: dict[str, Any] = {
        "model": model.spec,
        "strategy": strategy,
        "question_id": question.id,
        "dataset": question.dataset,
        "tier": question.tier,
        "phenomena": list(question.phenomena),
    }
    try:
        result = api.ask(
            question.question,
            graph=question.graph,
            strategy=strategy,
            budget=config.budget,
            model=model,
            seed=episode_seed(config.seed, question.dataset, question.id, 0),
            temperature=config.temperature,
        )
    except (ModelUnavailableError, EngineConnectionError, ConfigError) as e:
        raise Aborted(str(e)) from e
    except CypherTurnError as e:
        return AskRecord(
            **common,
            executable=False,
            ex=0,
            ex_relaxed=0,
            attempts=0,
            tokens=0,
            seconds=time.perf_counter() - started,
            final_query="",
            error=f"{type(e).__name__}: {e}",
        )
    seconds = time.perf_counter() - started
    pred = result.final_result if result.success else None
    ex, relaxed = ex_scores(gold, pred, output_order(question.gold)) if pred else (0, 0)
    return AskRecord(
        **common,
        executable=pred is not None,
        ex=ex,
        ex_relaxed=relaxed,
        attempts=result.attempts_used,
        tokens=result.total_tokens,
        seconds=seconds,
        final_query=result.final_query,
        result=result.model_dump(mode="json"),
    )


HEADERS = ["questions", "executable", "EX", "relaxed EX", "mean attempts", "median s"]
TEXT_COLUMNS = frozenset({"model", "strategy", "dataset", "phenomenon"})


def _figures(records: Sequence[AskRecord]) -> list[str]:
    n = len(records)
    return [
        str(n),
        f"{sum(r.executable for r in records) / n:.2f}",
        f"{sum(r.ex for r in records) / n:.2f}",
        f"{sum(r.ex_relaxed for r in records) / n:.2f}",
        f"{statistics.fmean(r.attempts for r in records):.1f}",
        f"{statistics.median(r.seconds for r in records):.1f}",
    ]


def _groups(
    records: Sequence[AskRecord], key: Callable[[AskRecord], tuple[str, ...]]
) -> dict[tuple[str, ...], list[AskRecord]]:
    grouped: dict[tuple[str, ...], list[AskRecord]] = {}
    for record in records:
        grouped.setdefault(key(record), []).append(record)
    return grouped


def summary_tables(
    records: Sequence[AskRecord], runs: Sequence[tuple[str, str]]
) -> list[tuple[str, list[str], list[list[str]]]]:
    """The summary as (title, headers, rows): overall, per dataset, and relaxed EX per phenomenon."""
    by_run = _groups(records, lambda r: (r.model, r.strategy))
    overall = [[m, s, *_figures(by_run[(m, s)])] for m, s in runs if (m, s) in by_run]
    by_dataset = _groups(records, lambda r: (r.model, r.strategy, r.dataset))
    datasets = list(dict.fromkeys(r.dataset for r in records))
    per_dataset = [
        [m, s, d, *_figures(by_dataset[(m, s, d)])]
        for m, s in runs
        for d in datasets
        if (m, s, d) in by_dataset
    ]
    phenomena = sorted({p for r in records for p in r.phenomena})
    present = [run for run in runs if run in by_run]
    per_phenomenon = []
    for phenomenon in phenomena:
        row = [phenomenon, str(sum(1 for r in by_run[present[0]] if phenomenon in r.phenomena))]
        for run in present:
            hits = [r.ex_relaxed for r in by_run[run] if phenomenon in r.phenomena]
            row.append(f"{sum(hits) / len(hits):.2f}")
        per_phenomenon.append(row)
    tables = [
        ("Answer accuracy per model x strategy", ["model", "strategy", *HEADERS], overall),
        ("Per dataset", ["model", "strategy", "dataset", *HEADERS], per_dataset),
        (
            "Relaxed EX per phenomenon (strict EX needs the gold's aliases)",
            ["phenomenon", "questions", *(f"{m} {s}" for m, s in present)],
            per_phenomenon,
        ),
    ]
    ablation = ablation_rows(by_run, runs)
    if ablation:
        tables.insert(
            1,
            (
                "ras+ ablation: each row drops the parts named (n = questions, same seeds)",
                ["model", "ras+ without", "questions", "relaxed EX", "change", "mean attempts",
                 "median s"],
                ablation,
            ),
        )  # fmt: skip
    return tables


def ablation_rows(
    by_run: dict[tuple[str, ...], list[AskRecord]], runs: Sequence[tuple[str, str]]
) -> list[list[str]]:
    """One row per ``ras+:<parts>`` run beside a full ``ras+`` run of the same model.

    Returns:
        ``[model, dropped parts, questions, relaxed EX, change from ras+, mean attempts,
        median s]`` rows, the full ``ras+`` first (dropped: ``-``); empty when no model
        has both.
    """
    rows: list[list[str]] = []
    for model in dict.fromkeys(m for m, _ in runs):
        full = by_run.get((model, "ras+"))
        variants = [s for m, s in runs if m == model and s.startswith("ras+:") and (m, s) in by_run]
        if not full or not variants:
            continue
        base = sum(r.ex_relaxed for r in full) / len(full)
        rows.append([model, "-", *_ablation_figures(full, None)])
        for strategy in variants:
            kept = set(GroundingParts.parse(strategy.partition(":")[2]).enabled())
            dropped = [p for p in GROUNDING_PARTS if p not in kept]
            records = by_run[(model, strategy)]
            rows.append([model, ", ".join(dropped) or "nothing", *_ablation_figures(records, base)])
    return rows


def _ablation_figures(records: Sequence[AskRecord], base: float | None) -> list[str]:
    ex = sum(r.ex_relaxed for r in records) / len(records)
    return [
        str(len(records)),
        f"{ex:.2f}",
        "" if base is None else f"{ex - base:+.2f}",
        f"{statistics.fmean(r.attempts for r in records):.1f}",
        f"{statistics.median(r.seconds for r in records):.1f}",
    ]


def markdown(tables: Sequence[tuple[str, list[str], list[list[str]]]], command: str) -> str:
    """The tables as a Markdown document headed by the command that produced them."""
    lines = ["# ask accuracy", "", "```", command, "```", ""]
    for title, headers, rows in tables:
        lines += [f"## {title}", "", "| " + " | ".join(headers) + " |"]
        lines.append("|" + "|".join("---" if h in TEXT_COLUMNS else "---:" for h in headers) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines)


def _select(args: argparse.Namespace) -> tuple[list[AskQuestion], list[str], list[str]]:
    questions = load_ask_set(_names(args.datasets))
    if args.limit is not None:
        questions = questions[: args.limit]
    strategies = _strategies(args.strategies)
    for strategy in strategies:
        get_strategy(strategy)
    return questions, strategies, _names(args.models)


def run(args: argparse.Namespace, console: Console) -> None:
    """Play the grid, appending records as it goes, then print and write the summary.

    Raises:
        ConfigError / DatasetError: bad options (exit 2).
        Aborted: the run cannot go on (exit 1).
    """
    if args.budget < 1 or args.temperature < 0 or (args.limit is not None and args.limit < 1):
        raise ConfigError("--budget and --limit must be at least 1, --temperature at least 0")
    questions, strategies, specs = _select(args)
    config = BenchConfig(
        budget=args.budget,
        temperature=args.temperature,
        seed=args.seed,
        ask_set=ask_set_digest(load_ask_set()),
    )
    bind_config(args.out, config)
    path = args.out / RECORDS_FILE
    done = {r.key: r for r in read_records(path)}
    golds = gold_results(questions)
    models = [load_model(spec) for spec in specs]
    runs = [(m.spec, s) for m in models for s in strategies]
    total = len(runs) * len(questions)
    step = 0
    with path.open("a", encoding="utf-8") as log:
        for model in models:
            for strategy in strategies:
                for question in questions:
                    step += 1
                    key = (model.spec, strategy, question.id)
                    if key in done:
                        continue
                    record = score(question, golds[question.id], model, strategy, config)
                    log.write(record.model_dump_json() + "\n")
                    log.flush()
                    done[key] = record
                    console.print(
                        f"[dim][{step}/{total}] {model.spec} {strategy} {question.id}: "
                        f"executable={int(record.executable)} EX={record.ex} "
                        f"relaxed={record.ex_relaxed} attempts={record.attempts} "
                        f"{record.seconds:.1f}s{' ' + record.error if record.error else ''}[/]"
                    )
    chosen = [done[(m, s, q.id)] for m, s in runs for q in questions]
    tables = summary_tables(chosen, runs)
    for title, headers, rows in tables:
        table = Table(title=title)
        for header in headers:
            table.add_column(header, justify="left" if header in TEXT_COLUMNS else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    command = "python benchmarks/bench_ask_accuracy.py " + " ".join(
        f"'{a}'" if any(c in a for c in " ;") else a for a in sys.argv[1:]
    )
    (args.out / SUMMARY_FILE).write_text(markdown(tables, command.strip()), encoding="utf-8")
    console.print(f"records: {path}; summary: {args.out / SUMMARY_FILE}")


def main() -> None:
    """Parse the options and run; bad input is one message and a non-zero exit status."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="smollm2-135m", help="comma-separated model specs")
    parser.add_argument("--strategies", default="single,is,ras", help="comma-separated")
    parser.add_argument("--datasets", default="healthcare,crime,fraud", help="comma-separated")
    parser.add_argument("--budget", type=int, default=5, help="attempts per question (n)")
    parser.add_argument("--temperature", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0, help="base sampling seed")
    parser.add_argument("--out", type=Path, default=Path("runs/ask-accuracy"))
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    args = parser.parse_args()
    errors = Console(stderr=True)
    try:
        run(args, Console())
    except (ConfigError, DatasetError) as e:
        errors.print(f"[red]error:[/] {e}")
        sys.exit(2)
    except (Aborted, CypherTurnError) as e:
        errors.print(f"[red]error:[/] {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
