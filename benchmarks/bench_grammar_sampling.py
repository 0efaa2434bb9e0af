"""Seconds per grammar-constrained completion: llama-cpp-python's full masking against rejection first.

Run: ``python benchmarks/bench_grammar_sampling.py [--models SPEC,SPEC] [--repeats 3]``.

For each GGUF model (default: the bundled SmolLM2-135M and the Qwen2.5-Coder files in
the model cache), the same POLE question is completed under the POLE schema grammar
(``schema_grammar`` with stored values, as ``ras+`` decodes) by three samplers on
one loaded model file: no grammar, llama-cpp-python's ``Llama`` (the grammar masks
the whole vocabulary at every token) and cypherturn's ``RejectionLlama`` (the drawn
token is checked first; ``models/_grammar_sampling.py``). The prompt is evaluated
once before timing, so every timed call reuses it and the figure is generation
only. Printed per model and sampler: median seconds per call, tokens, seconds per
token, and whether the greedy text equals full masking's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from llama_cpp import Llama, LlamaGrammar
from rich.console import Console
from rich.table import Table

from cypherturn import api
from cypherturn.grounding import graph_index, schema_grammar
from cypherturn.models import RejectionLlama, default_model_path, model_cache_dir

QUESTION = "Which officers investigated the most crimes? Return their names and counts."


def _prompt(schema_text: str) -> str:
    return (
        "<|im_start|>system\nWrite one Cypher query for this graph. Schema:\n"
        f"{schema_text}<|im_end|>\n<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n"
    )


def _time(llama: Llama, prompt: str, grammar: str | None, repeats: int) -> tuple[float, int, str]:
    seconds, tokens, text = [], 0, ""
    for _ in range(repeats + 1):  # the first call evaluates the prompt and is not counted
        compiled = LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
        started = time.perf_counter()
        out = llama.create_completion(prompt, grammar=compiled, temperature=0.0, max_tokens=64)
        seconds.append(time.perf_counter() - started)
        tokens = int(out["usage"]["completion_tokens"])  # type: ignore[index]
        text = str(out["choices"][0]["text"])  # type: ignore[index]
    return statistics.median(seconds[1:]), tokens, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="", help="comma-separated GGUF paths")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    paths = [Path(p) for p in args.models.split(",") if p] or [
        default_model_path(),
        *sorted(model_cache_dir().glob("qwen2.5-coder-*.gguf")),
    ]
    with api.connect("pole") as engine:
        index = graph_index(engine)
        grammar = schema_grammar(index.complete_schema(), values=index.categorical_values())
        prompt = _prompt(index.schema_text(values=True))
    table = Table(title=f"Greedy completion under the POLE schema grammar ({os.cpu_count()} cores)")
    for column in ("model", "sampler", "median s", "tokens", "ms / token", "same text"):
        table.add_column(column)
    for path in paths:
        figures = {}
        for name, cls, constrained in (
            ("no grammar", Llama, False),
            ("full masking", Llama, True),
            ("rejection first", RejectionLlama, True),
        ):
            llama = cls(model_path=str(path), n_ctx=4096, n_threads=os.cpu_count(), verbose=False)
            figures[name] = _time(llama, prompt, grammar if constrained else None, args.repeats)
            llama.close()
        for name, (seconds, tokens, text) in figures.items():
            same = "-" if name == "no grammar" else str(text == figures["full masking"][2])
            table.add_row(
                path.name,
                name,
                f"{seconds:.2f}",
                str(tokens),
                f"{1000 * seconds / max(tokens, 1):.1f}",
                same,
            )
    Console().print(table)


if __name__ == "__main__":
    main()
