"""Options shared by several commands, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cypherturn.errors import ConfigError, ModelUnavailableError
from cypherturn.models import MODEL_PACKS, ensure_model_file, resolve_model_spec

__all__ = [
    "BaseUrlOpt",
    "BudgetOpt",
    "ContextOpt",
    "DataPathOpt",
    "EngineOpt",
    "MaxSecondsOpt",
    "ModelOptions",
    "RecallOpt",
    "RowCapOpt",
    "TemperatureOpt",
    "TimeoutOpt",
    "max_seconds",
    "model_options",
]

EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        "-e",
        envvar="CYPHERTURN_ENGINE",
        help="Graph engine: omit for the embedded FalkorDB, or falkordb://[:PASSWORD@]HOST:PORT, "
        "bolt://USER:PASSWORD@HOST:PORT (Neo4j).",
    ),
]

BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Base URL of an OpenAI-compatible endpoint (openai: models)."),
]

ContextOpt = Annotated[
    int | None,
    typer.Option(
        "--n-ctx",
        min=256,
        help="Context window of a local (GGUF) model, tokens (default 4096; capped at the "
        "model's training context).",
    ),
]

BudgetOpt = Annotated[
    int, typer.Option("-n", "--budget", min=1, help="Budget T: the most attempts.")
]

TemperatureOpt = Annotated[
    float | None,
    typer.Option("--temperature", "-t", min=0.0, help="Sampling temperature (default 0.9)."),
]

TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=0.001, help="Per-query timeout, seconds (default 120)."),
]

RowCapOpt = Annotated[int | None, typer.Option("--row-cap", min=1, help="Rows kept per query.")]

RecallOpt = Annotated[
    int,
    typer.Option(
        "--recall",
        min=0,
        max=20,
        help="Remembered questions of this graph shown to the model as examples, the nearest "
        "first (cypherturn learn, chat's /remember); 0: none.",
    ),
]

MaxSecondsOpt = Annotated[
    float,
    typer.Option(
        "--max-seconds",
        min=0.0,
        help="Wall-clock budget of one answer, seconds: then the best verified query so far "
        "is returned, or none (0: no budget).",
    ),
]


def max_seconds(value: float) -> float | None:
    """The budget of ``--max-seconds`` (``0`` turns it off: ``None``)."""
    return value or None


DataPathOpt = Annotated[
    Path | None,
    typer.Option(
        "--path", help="Dataset files to load from on first use instead of the packaged copy."
    ),
]


def _prepared_model(spec: str) -> str:
    """Resolve ``default`` to its model pack and assemble a pack's file before the command runs.

    Running this while options are parsed keeps the assembly's progress bar
    (first use only) from competing with a command's own status spinner or
    progress display. When ``default`` has nothing to resolve to, the spec is
    returned unchanged, and ``load_model`` raises the same error if the command
    uses the model.

    Raises:
        ModelUnavailableError: a named pack's packages are missing.
        ModelIntegrityError: a pack's bytes do not match their pins.
    """
    try:
        name = resolve_model_spec(spec)
    except ModelUnavailableError:
        return spec
    pack = MODEL_PACKS.get(name)
    if pack is not None:
        ensure_model_file(pack)
    return name


ModelOptions = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        envvar="CYPHERTURN_MODEL",
        help="default (the strongest local model installed) | qwen2.5-coder-1.5b | "
        "qwen2.5-coder-0.5b | smollm2-135m (see `cypherturn models`) | gguf:PATH | "
        "openai:NAME | replay:FILE.",
        callback=_prepared_model,
    ),
]


def model_options(model: str, base_url: str | None, n_ctx: int | None = None) -> dict[str, Any]:
    """Keyword options for ``load_model`` from the command-line flags that apply to ``model``.

    Args:
        model: the model spec.
        base_url: ``--base-url`` (``openai:`` models).
        n_ctx: ``--n-ctx``, tokens (local models: packs, ``default``, ``gguf:``).

    Raises:
        ConfigError: ``--base-url`` given for a model that is not ``openai:``, or
            ``--n-ctx`` for one that is not local.
    """
    options: dict[str, Any] = {}
    if base_url is not None:
        if not model.startswith("openai:"):
            raise ConfigError(f"--base-url applies to openai: models only, not to {model!r}")
        options["base_url"] = base_url
    if n_ctx is not None:
        if model.startswith(("openai:", "replay:")):
            raise ConfigError(f"--n-ctx applies to local (GGUF) models only, not to {model!r}")
        options["n_ctx"] = n_ctx
    return options
