"""Malformed inputs through the command line: one clear line naming the input, exit 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from faults import cli_env, malformed_cases, run_cli, servers_under


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[str], str]]:
    return malformed_cases(tmp_path_factory.mktemp("malformed"))


def test_each_malformed_input_is_one_clear_line(
    cases: dict[str, tuple[list[str], str]], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    failed = {}
    for name, (args, named) in cases.items():
        outcome = run_cli(args, cli_env(home))
        line = outcome.stderr_lines[-1] if outcome.stderr_lines else ""
        if (
            outcome.exit != 1
            or outcome.traceback
            or len(outcome.stderr_lines) != 1
            or not line.startswith("error: ")
            or named not in line
        ):
            failed[name] = (outcome.exit, outcome.stderr_lines)
    assert failed == {}
    assert servers_under(home) == []
