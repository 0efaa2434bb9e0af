"""Load time and token throughput of the default GGUF model (SmolLM2-135M-Instruct) on this machine.

Run: ``python benchmarks/bench_default_model.py [--runs N] [--max-tokens N]``.
Prints load time (fresh process, first load), prompt-processing speed and
generation speed. Throughput is wall time around ``GGUFChatModel.chat``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from cypherturn.models import GGUFChatModel, load_model
from cypherturn.strategies import load_prompts

SCHEMA = """Node properties:
Person {name: STRING, surname: STRING, age: INTEGER, nhs_no: STRING}
Crime {id: STRING, type: STRING, date: DATE, last_outcome: STRING}
Location {address: STRING, postcode: STRING, latitude: FLOAT, longitude: FLOAT}
Officer {name: STRING, surname: STRING, badge_no: STRING, rank: STRING}
Relationship properties:

The relationships:
(:Person)-[:PARTY_TO]->(:Crime)
(:Crime)-[:OCCURRED_AT]->(:Location)
(:Crime)-[:INVESTIGATED_BY]->(:Officer)
(:Person)-[:KNOWS]->(:Person)"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()

    model = load_model("smollm2-135m")
    assert isinstance(model, GGUFChatModel)
    load_s = model.load()
    prompts = load_prompts()
    prefill: list[float] = []
    decode: list[float] = []
    overall: list[float] = []
    prompt_tokens = 0
    for run in range(args.runs):
        # A distinct question per run keeps llama.cpp's prefix cache from skipping the prompt.
        context = prompts.initial_context(
            f"Which crimes did person number {run} take part in?", SCHEMA
        )
        started = time.perf_counter()
        first = model.chat(context, max_tokens=1, seed=run)
        prefill_s = time.perf_counter() - started
        prompt_tokens = first.prompt_tokens
        prefill.append(first.prompt_tokens / prefill_s)
        schema = f"Graph number {run + args.runs}.\n{SCHEMA}"
        context = prompts.initial_context("Which officers investigated this crime?", schema)
        response = model.chat(context, max_tokens=args.max_tokens, seed=run)
        overall.append(response.completion_tokens / response.latency_s)
        decode_s = response.latency_s - response.prompt_tokens / prefill[-1]
        if response.completion_tokens > 1 and decode_s > 0:
            decode.append((response.completion_tokens - 1) / decode_s)
    print(
        f"model: {model.path.name} ({model.path.stat().st_size / 2**20:.1f} MiB), threads: {os.cpu_count()}"
    )
    print(f"load time: {load_s:.2f} s")
    print(
        f"prompt processing: {statistics.median(prefill):.0f} tokens/s (prompt of {prompt_tokens} tokens)"
    )
    if decode:
        print(
            f"generation: {statistics.median(decode):.0f} tokens/s (median of {len(decode)} runs)"
        )
    print(
        f"end to end: {statistics.median(overall):.0f} completion tokens/s including prompt processing"
    )


if __name__ == "__main__":
    main()
