"""Where a local answer's seconds go, and decoding set-ups side by side, on this machine.

Run: ``python benchmarks/bench_decoding.py {parts,lookup,threads} [options]``.

- ``parts``: ``api.ask`` with ``ras+`` on ``--questions`` development questions
  (default: Mind the Query ``dev-300``), one process; each llama.cpp ``eval`` is
  timed, so every answer splits into prompt-suffix evaluation (batches of more
  than one token) and decoding (one token each). The first question warms the
  prefix and is not printed.
- ``lookup``: the same questions with llama-cpp-python's
  ``LlamaPromptLookupDecoding`` as the loaded model's draft model, for each
  ``--drafts`` count (0: none), question by question side by side. Verifying
  drafts needs logits for every drafted position; ``Llama.eval`` asks for them
  only on generation batches (at most 16 tokens), never on the prompt.
- ``threads``: 60 greedy tokens in a fresh process per setting: idle, and beside
  two busy loops, with the model at niceness 0 or 10 and 1 or every thread
  (``CYPHERTURN_THREADS``). Shows how llama.cpp's per-layer thread barrier
  behaves when the cores are shared.

Results and their reading: ``docs/results/ask-latency/where-the-seconds-go.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT / "benchmarks" / "data" / "mind-the-query" / "dev-300.jsonl"
MODEL = "qwen2.5-coder-1.5b"

_PROBE = """
import sys, time
from cypherturn.models import ChatMessage, load_model
m = load_model(sys.argv[1])
msgs = [ChatMessage(role="user", content="Write a Cypher query listing every Person name "
        "with the number of crimes they are party to, ordered by that number. "
        "Then explain it at length.")]
m.chat(msgs, max_tokens=4, temperature=0.0, seed=1)
started = time.perf_counter()
m.chat(msgs, max_tokens=60, temperature=0.0, seed=1)
print(time.perf_counter() - started)
"""


def _questions(path: Path, count: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line, _ in zip(lines, range(count), strict=False)]


def _llama(model: Any) -> Any:
    """The ``Llama`` behind a GGUF model, loaded."""
    from cypherturn.models import GGUFChatModel

    if not isinstance(model, GGUFChatModel):
        raise SystemExit(f"{model.spec} is not an in-process GGUF model")
    return model.llama


def _parts(args: argparse.Namespace) -> None:
    from cypherturn import api
    from cypherturn.models import load_model

    questions = _questions(args.questions_file, args.questions + 1)
    model = load_model(MODEL)
    llama = _llama(model)
    api.ask(questions[0]["question"], graph=questions[0]["graph"], model=model, strategy="ras+")
    evaluate = llama.eval
    log: list[tuple[int, float]] = []

    def timed(tokens: Any) -> None:
        started = time.perf_counter()
        evaluate(tokens)
        log.append((len(tokens), time.perf_counter() - started))

    llama.eval = timed
    print("answer s | attempts | suffix evaluations (tokens, s) | decoded tokens, s, s/token")
    for q in questions[1:]:
        log.clear()
        started = time.perf_counter()
        answer = api.ask(q["question"], graph=q["graph"], model=model, strategy="ras+")
        seconds = time.perf_counter() - started
        suffixes = [(n, round(s, 2)) for n, s in log if n > 1]
        decoded = [s for n, s in log if n == 1]
        per = sum(decoded) / max(1, len(decoded))
        print(
            f"{seconds:6.2f} | {len(answer.attempts)} | {suffixes} | "
            f"{len(decoded)}, {sum(decoded):.2f}, {per:.3f}",
            flush=True,
        )


def _lookup(args: argparse.Namespace) -> None:
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    from cypherturn import api
    from cypherturn.models import load_model

    drafts = [int(d) for d in args.drafts.split(",")]
    questions = _questions(args.questions_file, args.questions + 1)
    model = load_model(MODEL)
    llama = _llama(model)
    api.ask(questions[0]["question"], graph=questions[0]["graph"], model=model, strategy="ras+")

    def evaluate(self: Any, tokens: Any) -> None:
        # Llama.eval, with every position's logits on the short batches that verify drafts
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        every = self.draft_model is not None and len(tokens) <= 16
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i : i + self.n_batch]
            self._batch.set_batch(batch=batch, n_past=self.n_tokens, logits_all=every)
            self._ctx.decode(self._batch)
            self.input_ids[self.n_tokens : self.n_tokens + len(batch)] = batch
            self.n_tokens += len(batch)
            self._requires_eval = False

    llama.eval = types.MethodType(evaluate, llama)
    totals = dict.fromkeys(drafts, 0.0)
    for q in questions[1:]:
        for count in drafts:
            llama.draft_model = LlamaPromptLookupDecoding(num_pred_tokens=count) if count else None
            answer = api.ask(q["question"], graph=q["graph"], model=model, strategy="ras+")
            first = answer.attempts[0]
            totals[count] += first.model_latency_s or 0.0
            print(
                f"drafts {count:2d}: first attempt {first.model_latency_s:6.2f} s, "
                f"{first.completion_tokens} tokens: {(first.raw_text or '')[:60]}",
                flush=True,
            )
    base = totals[drafts[0]]
    for count, total in totals.items():
        print(
            f"drafts {count:2d}: {total:7.1f} s in all, {base / total:.2f}x of drafts {drafts[0]}"
        )


def _probe(threads: int | None, nice: int) -> float:
    env = dict(os.environ)
    env.pop("CYPHERTURN_THREADS", None)
    if threads is not None:
        env["CYPHERTURN_THREADS"] = str(threads)
    command = ["nice", "-n", str(nice), sys.executable, "-c", _PROBE, MODEL]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _threads(args: argparse.Namespace) -> None:
    cores = os.cpu_count() or 1
    settings = [(0, None), (10, None), (0, 1), (10, 1)]
    print(f"{cores} cores; 60 greedy tokens; seconds (median of {args.repeat})")
    for busy in (False, True):
        loops = (
            [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
            if busy
            else []
        )
        try:
            for nice, threads in settings:
                seconds = statistics.median(_probe(threads, nice) for _ in range(args.repeat))
                print(
                    f"{'busy' if busy else 'idle'} | nice {nice:2d} | "
                    f"threads {threads or cores} | {seconds:7.2f}",
                    flush=True,
                )
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["parts", "lookup", "threads"])
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--questions-file", type=Path, default=DEV)
    parser.add_argument("--drafts", default="0,3,8")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    {"parts": _parts, "lookup": _lookup, "threads": _threads}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
