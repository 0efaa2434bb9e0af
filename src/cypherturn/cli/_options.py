"""Options shared by several commands, declared once."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cypherturn.errors import ConfigError

__all__ = ["EngineOpt", "ModelOptions", "model_options"]

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

ModelOptions = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        envvar="CYPHERTURN_MODEL",
        help="default (bundled SmolLM2-135M GGUF) | gguf:PATH | openai:NAME | replay:FILE.",
    ),
]


def model_options(model: str, base_url: str | None) -> dict[str, Any]:
    """Keyword options for ``load_model`` from the command-line flags that apply to ``model``.

    Raises:
        ConfigError: ``--base-url`` given for a model that is not ``openai:``.
    """
    if base_url is None:
        return {}
    if not model.startswith("openai:"):
        raise ConfigError(f"--base-url applies to openai: models only, not to {model!r}")
    return {"base_url": base_url}
