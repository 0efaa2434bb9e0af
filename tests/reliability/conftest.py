"""Fixtures of the reliability tests: a small built benchmark, and the faults module on the path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cypherturn.graph import EmbeddedFalkorDB

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "agent"))

from protocol_world import heroes

__all__ = ["heroes"]


@pytest.fixture(scope="module")
def built_bench(
    embedded_server: EmbeddedFalkorDB, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A 3-session magic_academy benchmark (25 turns) built by ``bench build``."""
    import typer

    from cypherturn.cli._bench import bench_app

    app = typer.Typer()
    app.add_typer(bench_app)
    bench = tmp_path_factory.mktemp("bench") / "bench.jsonl"
    built = CliRunner().invoke(
        app, ["bench", "build", "--worlds", "magic_academy", "-n", "3", "--out", str(bench)]
    )
    assert built.exit_code == 0, built.output
    return bench
