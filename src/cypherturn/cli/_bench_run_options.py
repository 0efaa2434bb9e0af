"""The options of `cypherturn bench run`, declared once, and the run configuration they make.

Each option is an ``Annotated`` alias named after it; the command's parameter
of the same name as a :class:`~cypherturn.api.BenchRunConfig` field becomes
that field (:func:`bench_run_config` reads the parsed parameters, so adding a
harness option is an alias here, a parameter line in the command and the
config's field).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from cypherturn import api
from cypherturn.cli._options import model_options

__all__ = [
    "ActionFormatOpt",
    "ActionGrammarOpt",
    "BudgetMultiplierOpt",
    "ChainNoteOpt",
    "ConcurrencyOpt",
    "DecodingGuardsOpt",
    "FramingOpt",
    "GroundingOpt",
    "LastActionNoteOpt",
    "MaxTokensOpt",
    "OutputNoteOpt",
    "ProtocolOpt",
    "QueryMemoryOpt",
    "ReleaseOpt",
    "RepeatGuardOpt",
    "RunTemperatureOpt",
    "SchemaFirstOpt",
    "ScoreOpt",
    "SeedOpt",
    "SessionsOpt",
    "SimModelOpt",
    "VariantOpt",
    "bench_run_config",
]

ProtocolOpt = Annotated[
    str, typer.Option("--protocol", "-p", help="guided | agentic (CypherTurn §3.1).")
]

BudgetMultiplierOpt = Annotated[
    int | None,
    typer.Option("--budget", "-b", min=1, help="Agentic budget multiplier m: 3, 5 or 10."),
]

VariantOpt = Annotated[
    str,
    typer.Option(
        "--variant",
        help="base | persistent_schema | disclosed_horizon | budget_encouraging (agentic).",
    ),
]

SimModelOpt = Annotated[
    str | None,
    typer.Option(
        "--sim-model",
        help=(
            "User simulator model (agentic; default: the evaluated model). Agentic runs "
            "you compare should name one fixed simulator: otherwise a difference in EX "
            "may come from the simulator (cypherturn report flags such pairs)."
        ),
    ),
]

SessionsOpt = Annotated[
    str | None,
    typer.Option(
        "--sessions",
        help=(
            "Comma-separated patterns over session ids and worlds; a term stratified:K "
            "keeps K sessions per world, personas and phenomena balanced."
        ),
    ),
]

ConcurrencyOpt = Annotated[
    int, typer.Option("--concurrency", "-c", min=1, help="Sessions played at once.")
]

RunTemperatureOpt = Annotated[
    float, typer.Option("--temperature", "-t", min=0.0, help="Sampling temperature.")
]

SeedOpt = Annotated[int | None, typer.Option("--seed", help="Sampling seed.")]

MaxTokensOpt = Annotated[
    int, typer.Option("--max-tokens", min=1, help="Completion cap per action, tokens.")
]

ScoreOpt = Annotated[
    bool, typer.Option("--score/--no-score", help="Score the run when it is done.")
]

ReleaseOpt = Annotated[
    Path | None,
    typer.Option(
        "--release",
        help="Official release root (holds data/graphs/), for imported official sessions.",
    ),
]

ActionFormatOpt = Annotated[
    str,
    typer.Option(
        "--action-format",
        help="text (one JSON action per reply) | tools (native tool calling; "
        "grammar-constrained on GGUF models).",
    ),
]

GroundingOpt = Annotated[
    str,
    typer.Option(
        "--grounding",
        help="Grounding of EXECUTE_CYPHER/SUBMIT_ANSWER as in ras+: any of check,repair,values "
        "(the query alone), question (checked against the turn's question), reference (a "
        "follow-up bound to the previous result's names), comma-separated; all, or none "
        "(default: the paper's agent).",
    ),
]

FramingOpt = Annotated[
    str,
    typer.Option(
        "--framing",
        help="paper | explicit (observations headed 'Observation from the database "
        "(not written by you):').",
    ),
]

DecodingGuardsOpt = Annotated[
    bool,
    typer.Option(
        "--decoding-guards/--no-decoding-guards",
        help="GGUF models stop at the observation headers and at runaway repetition.",
    ),
]

OutputNoteOpt = Annotated[
    bool,
    typer.Option(
        "--output-note/--no-output-note",
        help="End the system prompt with the benchmark's column naming (name, count, "
        "avg_price); EX compares column names. Off: the paper's prompt.",
    ),
]

ChainNoteOpt = Annotated[
    bool,
    typer.Option(
        "--chain-note/--no-chain-note",
        help="End the system prompt with how a follow-up builds on an earlier result: "
        "from the names it lists (WHERE n.name IN [...]) when it shows them all, else by "
        "restating the earlier conditions. Off: the paper's prompt.",
    ),
]

RepeatGuardOpt = Annotated[
    bool,
    typer.Option(
        "--repeat-guard/--no-repeat-guard",
        help="An action that repeats an earlier one of the turn word for word is still run "
        "and charged, its observation says so, and the next call samples (temperature 0.7).",
    ),
]

QueryMemoryOpt = Annotated[
    bool,
    typer.Option(
        "--query-memory/--no-query-memory",
        help="Guided only: the history shows the query the model submitted for each earlier "
        "turn, so a follow-up can edit it. Off: the paper's history (gold results only).",
    ),
]

SchemaFirstOpt = Annotated[
    bool,
    typer.Option(
        "--schema-first/--no-schema-first",
        help="Agentic only: the session's first action is an INSPECT_SCHEMA the harness "
        "takes for the model (one budget unit); with --variant persistent_schema every "
        "turn's prompt holds the schema. Off: the model decides, as the paper.",
    ),
]

LastActionNoteOpt = Annotated[
    bool,
    typer.Option(
        "--last-action-note/--no-last-action-note",
        help="Guided only: the footer before a turn's last action says that only a query "
        "can answer now (SUBMIT_ANSWER or EXECUTE_CYPHER). Off: the paper's footer.",
    ),
]

ActionGrammarOpt = Annotated[
    bool,
    typer.Option(
        "--action-grammar/--no-action-grammar",
        help="Text format, local (GGUF) models: decode every reply under a grammar of "
        "the five action objects, so each reply is one action with its input. Off: "
        "free text, as the paper.",
    ),
]

_RENAMED = {"out": "out_dir", "engine": "engine_url", "release": "release_root"}
"""Options whose :class:`~cypherturn.api.BenchRunConfig` field has another name."""

_MODEL_OPTIONS = ("base_url", "n_ctx")
"""Options that go into the config's ``model_options`` (:func:`~cypherturn.cli._options.model_options`)."""


def bench_run_config(params: Mapping[str, Any]) -> api.BenchRunConfig:
    """The configuration of a run from the parsed parameters of `bench run`.

    Args:
        params: the command's parameters by name, as parsed (``typer.Context.params``).

    Returns:
        The config: each parameter is the field of its name (or of its
        :data:`_RENAMED` name), and ``--base-url`` and ``--n-ctx`` make ``model_options``.

    Raises:
        pydantic.ValidationError: a parameter the config does not know (the
            config forbids extra fields).
    """
    fields = {_RENAMED.get(k, k): v for k, v in params.items() if k not in _MODEL_OPTIONS}
    fields["model_options"] = model_options(params["model"], params["base_url"], params["n_ctx"])
    return api.BenchRunConfig(**fields)
