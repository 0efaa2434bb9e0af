"""`cypherturn worlds list` and `cypherturn worlds build` through Typer's test runner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cypherturn.cli._worlds import worlds_app
from cypherturn.worlds import get_world, read_graph_jsonl, world_names

runner = CliRunner()


def test_list_shows_every_registered_world() -> None:
    result = runner.invoke(worlds_app, ["list"], terminal_width=220)
    assert result.exit_code == 0, result.output
    for name in world_names():
        assert name in result.output
    for name in (
        "ancient_empire",
        "magic_academy",
        "ocean_kingdom",
        "stellar_colony",
        "arcane_archive",
        "celestial_court",
        "merchant_harbor",
        "fraud",
    ):
        assert name in world_names()
    assert "4,173" in result.output and "synthetic" in result.output


def test_build_writes_identical_bytes_for_the_same_seed(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for path, seed in ((first, "5"), (second, "5"), (other, "6")):
        result = runner.invoke(
            worlds_app, ["build", "stellar_colony", "--seed", seed, "--out", str(path)]
        )
        assert result.exit_code == 0, result.output
    assert first.read_bytes() == second.read_bytes() != other.read_bytes()
    assert len(read_graph_jsonl(first).nodes) == 430


def test_build_to_standard_output_with_scale() -> None:
    result = runner.invoke(worlds_app, ["build", "celestial_court", "--scale", "0.5"])
    assert result.exit_code == 0
    header = json.loads(result.stdout.splitlines()[0])
    spec = get_world("celestial_court").SPEC  # type: ignore[attr-defined]
    assert header["name"] == "celestial_court"
    assert header["nodes"] == sum(spec.count(decl.label, 0.5) for decl in spec.labels) < 450
    assert len(result.stdout.splitlines()) == 1 + header["nodes"] + header["relationships"]


def test_unknown_world_and_bad_scale_are_refused() -> None:
    result = runner.invoke(worlds_app, ["build", "atlantis"])
    assert result.exit_code != 0 and "unknown graph" in str(result.exception)
    result = runner.invoke(worlds_app, ["build", "fraud", "--scale", "0"])
    assert result.exit_code != 0 and "scale" in str(result.exception)
