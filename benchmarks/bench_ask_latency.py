"""Seconds per ``ask`` with each local GGUF model: cold process, disk prefix cache, warm process.

Run: ``python benchmarks/bench_ask_latency.py [--questions 5] [--models SPEC,SPEC]
[--strategy single] [--budget 1] [--temperature 0] [--out docs/results/ask-latency/README.md]``.

Every ``ask`` is ``api.ask`` on POLE, by default with strategy ``single`` at
temperature 0 (one generation and one execution; prompt v2: system prompt with
the schema, three few-shot examples, the question); ``--strategy ras+ --budget 5
--temperature 0.9`` times what ``cypherturn ask`` does by default (the grounded
schema text and examples, every model call of the attempts, the checks). For
each model three settings are timed, each over the same questions:

- **cold, no prefix cache**: a fresh ``python -c`` process per question, with an
  empty prefix cache: the whole prompt is evaluated (and the prefix stored).
- **cold, disk prefix**: a fresh process per question once the disk prefix
  cache holds the graph's prefix: only the question's tokens are evaluated.
- **warm process**: one process asks every question in turn; the first
  question is not counted, the later ones reuse the prefix in memory.

The seconds are the wall time of ``api.ask`` in the child (model call plus
query execution); loading the model is timed apart (``GGUFChatModel.load``
before the first ask), and so is the whole process (interpreter start,
imports, load, ask). The embedded FalkorDB is kept running by this process,
so no child pays for starting it. The prefix cache lives in a temporary
``CYPHERTURN_CACHE_DIR``, so the user's cache is neither read nor changed.

The cores may be shared with other jobs, and llama.cpp's threads slow down
badly when they are. So each child starts only once the machine has been
nearly idle for a second (``--idle-wait``), it can run at a raised scheduling
priority (``--nice -15``, root only; the child gets a scheduling group of
its own) so that jobs at the default priority yield the cores to it, and the CPU time other processes used while it ran
(system busy time from ``/proc/stat`` minus the child's own CPU time) is
reported as *other load*: figures taken at a high other load overstate the
latency.
Default models: the bundled SmolLM2-135M and the two Qwen2.5-Coder GGUFs in
the model cache (``~/.cache/cypherturn/models``), as ``gguf:PATH`` specs;
missing files are skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cypherturn import api
from cypherturn.models import CACHE_DIR_ENV, cache_root, default_model_path

QUESTIONS = [
    "How many crimes happened on Piccadilly?",
    "Which officers investigated the most crimes?",
    "List the make and model of vehicles involved in crimes.",
    "How many people know someone who is party to a crime?",
    "What are the ten most common crime types?",
    "Which areas have the most crimes?",
    "List the phone numbers of people with the surname Hamilton.",
]

QWEN_FILES = (
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
)

CHILD = """
import json, sys, time
from cypherturn import api
from cypherturn.models import load_model


class Recording:
    def __init__(self, model):
        self.model = model
        self.responses = []

    @property
    def spec(self):
        return self.model.spec

    @property
    def supports_grammar(self):
        return self.model.supports_grammar

    def chat(self, messages, **options):
        response = self.model.chat(messages, **options)
        self.responses.append(response)
        return response


spec, questions = sys.argv[1], json.loads(sys.argv[2])
strategy, budget, temperature = sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
inner = load_model(spec)
started = time.perf_counter()
inner.load()
load_s = time.perf_counter() - started
model = Recording(inner)
asks = []
for question in questions:
    before = len(model.responses)
    started = time.perf_counter()
    result = api.ask(question, graph="pole", strategy=strategy, budget=budget, model=model,
                     temperature=temperature, seed=0)
    seconds = time.perf_counter() - started
    calls = model.responses[before:]
    first = calls[0]
    asks.append({
        "seconds": seconds,
        "model_s": sum(r.latency_s for r in calls),
        "calls": len(calls),
        "prompt_tokens": first.prompt_tokens,
        "completion_tokens": sum(r.completion_tokens for r in calls),
        "cached_prompt_tokens": first.cached_prompt_tokens,
        "prompt_cache": first.prompt_cache,
        "executed": result.success,
    })
print(json.dumps({"load_s": load_s, "asks": asks}))
"""


_IDLE_BUSY = 0.25
"""Share of all cores that may be busy before a child starts (the gate of ``--idle-wait``)."""


def _busy_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (``/proc/stat``)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wait_until_idle(limit_s: float) -> None:
    """Wait (at most ``limit_s``) until the cores were less than 25 % busy over one second."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = _busy_seconds()
        time.sleep(1.0)
        if (_busy_seconds() - before) / (os.cpu_count() or 1) < _IDLE_BUSY:
            return


def _prioritised(nice: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` that runs the child at ``nice`` in a scheduling group of its own.

    With the kernel's autogroup scheduling a process's niceness only weighs
    against its own session, so the child starts a session (a new autogroup)
    and gives the group the niceness too.
    """
    if nice == 0:
        return None

    def apply() -> None:
        os.setsid()
        with contextlib.suppress(OSError):
            Path("/proc/self/autogroup").write_text(str(nice))
        os.setpriority(os.PRIO_PROCESS, 0, nice)

    return apply


@dataclass(frozen=True)
class Settings:
    """How children are run: the idle gate (seconds) and their niceness (``nice -n``)."""

    idle_wait_s: float
    nice: int
    strategy: str = "single"
    budget: int = 1
    temperature: float = 0.0


def _child(spec: str, questions: list[str], cache: Path, settings: Settings) -> dict[str, Any]:
    """Run the questions in one fresh process; its record, wall time and the others' load."""
    _wait_until_idle(settings.idle_wait_s)
    busy, own = _busy_seconds(), _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            spec,
            json.dumps(questions),
            settings.strategy,
            str(settings.budget),
            str(settings.temperature),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, CACHE_DIR_ENV: str(cache)},
        check=False,
        preexec_fn=_prioritised(settings.nice),
    )
    wall = time.perf_counter() - started
    others = (_busy_seconds() - busy) - (_children_cpu() - own)
    if done.returncode != 0:
        raise SystemExit(f"child for {spec} failed:\n{done.stderr[-3000:]}")
    record: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    record["process_s"] = wall
    record["other_load"] = max(0.0, others) / (wall * (os.cpu_count() or 1))
    return record


def _clear(cache: Path) -> None:
    for entry in (cache / "prefix").glob("*/*"):
        entry.unlink()


def _stats(values: list[float]) -> str:
    """``median / p90`` in seconds (p90 by linear interpolation)."""
    return f"{statistics.median(values):.2f} / {float(np.percentile(values, 90)):.2f}"


def _measure(spec: str, questions: list[str], cache: Path, settings: Settings) -> dict[str, Any]:
    cold: list[dict[str, Any]] = []
    for question in questions:
        _clear(cache)
        cold.append(_child(spec, [question], cache, settings))
    disk = [_child(spec, [question], cache, settings) for question in questions]
    warm = _child(spec, questions, cache, settings)
    return {"cold": cold, "disk": disk, "warm": warm}


def _rows(name: str, run: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The model's row of the ``ask`` table and of the model-call table."""
    cold = [r["asks"][0] for r in run["cold"]]
    disk = [r["asks"][0] for r in run["disk"]]
    warm = run["warm"]["asks"][1:]
    hits = sum(a["prompt_cache"] == "disk" for a in disk)

    def saved(key: str) -> str:
        cold_s = statistics.median(a[key] for a in cold)
        return f"{cold_s - statistics.median(a[key] for a in disk):.2f}"

    ask = {
        "model": name,
        "prompt tokens": f"{statistics.median(a['prompt_tokens'] for a in cold):.0f}",
        "completion tokens": f"{statistics.median(a['completion_tokens'] for a in cold):.0f}",
        "load s": f"{statistics.median(r['load_s'] for r in run['cold']):.2f}",
        "cold, no prefix cache": _stats([a["seconds"] for a in cold]),
        "cold, disk prefix": _stats([a["seconds"] for a in disk]),
        "warm process": _stats([a["seconds"] for a in warm]),
        "disk saves (s)": saved("seconds"),
        "disk hits": f"{hits}/{len(disk)}",
        "reused tokens (disk)": f"{statistics.median(a['cached_prompt_tokens'] for a in disk):.0f}",
    }
    model = {
        "model": name,
        "cold, no prefix cache": _stats([a["model_s"] for a in cold]),
        "cold, disk prefix": _stats([a["model_s"] for a in disk]),
        "warm process": _stats([a["model_s"] for a in warm]),
        "disk saves (s)": saved("model_s"),
        "process s (cold / disk)": (
            f"{statistics.median(r['process_s'] for r in run['cold']):.1f} / "
            f"{statistics.median(r['process_s'] for r in run['disk']):.1f}"
        ),
        "other load": (
            f"{100 * max(r['other_load'] for r in [*run['cold'], *run['disk'], run['warm']]):.0f} %"
        ),
    }
    return ask, model


def _table(rows: list[dict[str, str]]) -> list[str]:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row[h] for h in header) + " |" for row in rows]


def _markdown(
    rows: list[tuple[dict[str, str], dict[str, str]]],
    questions: int,
    command: str,
    load: str,
    settings: Settings,
) -> str:
    lines = [
        "# `ask` latency with local GGUF models",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {os.cpu_count()} CPU cores, {platform.machine()}, Python "
        f"{platform.python_version()}; load average at the start {load} "
        f"(other jobs shared the cores); children ran at niceness {settings.nice}.",
        "",
        f"POLE, strategy `{settings.strategy}`, budget {settings.budget}, temperature "
        f"{settings.temperature:g}, seed 0, prompt v2; {questions} questions. "
        "*Cold*: a fresh process per question, with an empty prefix cache or with the "
        "graph's prefix already on disk. *Warm process*: later questions in one process "
        "(prefix in memory). *Disk saves*: cold median minus disk-prefix median.",
        "",
        "Seconds per `api.ask` (`median / p90`: connecting to the engine, reading the "
        "schema, the model call, executing the query; model load apart, in *load s*):",
        "",
        *_table([ask for ask, _ in rows]),
        "",
        "Seconds of the model call alone (`ChatResponse.latency_s`, prefix-cache work "
        "included). *Process s*: median wall time of the whole child process "
        "(interpreter, imports, model load, ask). *Other load*: the highest share of the "
        "cores that other processes used during one of the model's child processes.",
        "",
        *_table([model for _, model in rows]),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Time the three settings for every model and print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument(
        "--models", default="", help="Comma-separated model specs (default: see the docstring)."
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="Write the tables as Markdown here (and every measurement to raw.json beside it).",
    )
    parser.add_argument(
        "--idle-wait",
        type=float,
        default=300.0,
        help="Most seconds to wait for idle cores before each child process.",
    )
    parser.add_argument(
        "--nice", type=int, default=0, help="Niceness of the child processes (negative: root only)."
    )
    parser.add_argument("--strategy", default="single", help="The ask strategy (default single).")
    parser.add_argument("--budget", type=int, default=1, help="The budget n (default 1).")
    parser.add_argument("--temperature", type=float, default=0.0)
    args = parser.parse_args()
    if not 2 <= args.questions <= len(QUESTIONS):
        parser.error(f"--questions must be between 2 and {len(QUESTIONS)}")
    specs = [s for s in args.models.split(",") if s]
    if not specs:
        specs = [f"gguf:{default_model_path()}"]
        specs += [
            f"gguf:{path}"
            for path in (cache_root() / "models" / name for name in QWEN_FILES)
            if path.is_file()
        ]
    questions = QUESTIONS[: args.questions]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    rows: list[tuple[dict[str, str], dict[str, str]]] = []
    raw: dict[str, Any] = {}
    started = time.perf_counter()
    settings = Settings(
        idle_wait_s=args.idle_wait,
        nice=args.nice,
        strategy=args.strategy,
        budget=args.budget,
        temperature=args.temperature,
    )
    with api.connect("pole"), tempfile.TemporaryDirectory() as folder:
        cache = Path(folder)
        for spec in specs:
            name = Path(spec.removeprefix("gguf:")).name.removesuffix(".gguf")
            begun = time.perf_counter()
            raw[name] = _measure(spec, questions, cache, settings)
            rows.append(_rows(name, raw[name]))
            print(f"{name}: {time.perf_counter() - begun:.0f} s", file=sys.stderr)
    command = "python benchmarks/bench_ask_latency.py " + " ".join(sys.argv[1:])
    table = _markdown(rows, len(questions), command.strip(), load, settings)
    print(table)
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table, encoding="utf-8")
        (args.out.parent / "raw.json").write_text(json.dumps(raw, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
