"""Make the frozen evaluation splits (issue 38): run once, on 2026-12-05; the outputs are committed.

The splits are chosen by fixed rules and seeds, before any system output on them
is seen, and are never used to tune. Rerunning this script rebuilds the same
files from the same inputs (the paraphrases only with the same model file and
llama.cpp build); it refuses to overwrite a split that exists, because a frozen
split is not chosen twice.

CypherTurn sessions (``benchmarks/data/cypherturn-test/``):

* ``sessions.jsonl``: 21 sessions, 3 per world, disjoint from ``--sessions
  stratified:3`` (the 21 development sessions every harness part was designed
  on). Rule: build the benchmark (``cypherturn bench build``, seed 0), remove the
  development subset, and apply the same stratified rule
  (:func:`cypherturn.runner.select_sessions` ``stratified:3``: personas as even as
  possible, then the least-seen phenomena) to the 700 sessions left. Every
  session is marked ``split: test``.
* ``sessions-paraphrased.jsonl``: the same sessions, each utterance rewritten by
  :func:`cypherturn.sessions.rewrite_sessions` (the paper's optional rewriting
  step, §2.5) with the local Qwen2.5-Coder-1.5B at temperature 0.7, seed 0; a
  rewrite that fails :func:`cypherturn.sessions.rewrite_problem` keeps the
  template's utterance. Of 233 utterances, the model rewrote 213 keeping every
  literal, and 43 pass the checks (29 of them differ from the template's words):
  the 1.5B model changes the question in most rewrites. The committed file was
  made before the checks beyond the literals existed and filtered with them
  afterwards, which is what this script now does while rewriting (a rejection
  does not change later prompts: the context holds the template's utterances).

Mind the Query (``benchmarks/data/mind-the-query/``; Apache-2.0, LICENSE beside it):

* ``dev-labelled.jsonl``: the development half (2,742 questions), each gold
  re-executed on the embedded engine and labelled kept, repaired or excluded
  (``cypherturn bench ask-import``); split ``development``.
* ``dev-300.jsonl``: a stratified sample (graph x category, seed 0) of 300 usable
  questions for iteration: development data.
* ``heldout-400.jsonl``: a stratified sample (seed 1) of 400 other usable
  questions, never looked at by hand, never used to tune: the held-out ask
  figures are made on it (split ``test``).

Usage:
    python benchmarks/make_splits.py --mtq ../shared/datasets/mind-the-query/dev.jsonl
        [--model qwen2.5-coder-1.5b] [--only mtq|sessions]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from cypherturn import api
from cypherturn.models import load_model
from cypherturn.records import DataSplit
from cypherturn.runner import select_sessions
from cypherturn.sessions import read_sessions, rewrite_sessions, write_sessions

DATA = Path(__file__).parent / "data"
SESSIONS_DIR = DATA / "cypherturn-test"
MTQ_DIR = DATA / "mind-the-query"


def make_sessions(model_spec: str) -> None:
    """The CypherTurn test sessions, plain and paraphrased."""
    plain, paraphrased = (
        SESSIONS_DIR / "sessions.jsonl",
        SESSIONS_DIR / "sessions-paraphrased.jsonl",
    )
    if plain.exists() or paraphrased.exists():
        sys.exit(f"{SESSIONS_DIR} holds a frozen split already; it is not chosen twice")
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "cypherturn.jsonl"
        api.build_benchmark(api.BenchBuildConfig(out=built))
        every = read_sessions(built)
    development = {s.session_id for s in select_sessions(every, "stratified:3")}
    pool = [s for s in every if s.session_id not in development]
    chosen = [
        s.model_copy(update={"split": DataSplit.TEST})
        for s in select_sessions(pool, "stratified:3")
    ]
    assert not development & {s.session_id for s in chosen}
    SESSIONS_DIR.mkdir(parents=True, exist_ok=True)
    write_sessions(plain, chosen)
    print(f"{plain}: {len(chosen)} sessions, {sum(len(s.turns) for s in chosen)} turns")
    model = load_model(model_spec)
    rewritten = rewrite_sessions(chosen, model, temperature=0.7, seed=0)
    write_sessions(paraphrased, rewritten)
    changed = sum(t.rewrite is not None for s in rewritten for t in s.turns)
    total = sum(len(s.turns) for s in rewritten)
    print(f"{paraphrased}: {changed} of {total} utterances rewritten")


def make_mtq(source: Path) -> None:
    """The Mind the Query labelled development half and its two frozen samples."""
    labelled = MTQ_DIR / "dev-labelled.jsonl"
    dev, heldout = MTQ_DIR / "dev-300.jsonl", MTQ_DIR / "heldout-400.jsonl"
    if dev.exists() or heldout.exists():
        sys.exit(f"{MTQ_DIR} holds frozen samples already; they are not chosen twice")
    MTQ_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copy(source.parent / "LICENSE", MTQ_DIR / "LICENSE")
    api.import_ask_set(
        api.AskImportConfig(
            source=str(source),
            out=labelled,
            split=DataSplit.DEVELOPMENT,
            sample=300,
            sample_out=dev,
            sample_seed=0,
            timeout_s=30.0,
        )
    )
    result = api.import_ask_set(
        api.AskImportConfig(
            source=str(labelled),
            out=Path(tempfile.mkdtemp()) / "relabelled.jsonl",
            sample=400,
            sample_out=heldout,
            sample_seed=1,
            sample_split=DataSplit.TEST,
            exclude=dev,
            timeout_s=30.0,
        )
    )
    print(f"{labelled}: {len(result.items)} questions; {dev}: 300; {heldout}: {len(result.sample)}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mtq", type=Path, help="Mind the Query's dev.jsonl")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="the paraphrasing model")
    parser.add_argument("--only", choices=("mtq", "sessions"))
    args = parser.parse_args()
    if args.only in (None, "mtq"):
        if args.mtq is None:
            sys.exit("--mtq is needed for the Mind the Query splits")
        make_mtq(args.mtq)
    if args.only in (None, "sessions"):
        make_sessions(args.model)


if __name__ == "__main__":
    main()
