"""Endpoint faults through the real openai client against a local stub (issue 15).

A transient fault (500, 429 with Retry-After, a read timeout, a connection
reset in the middle of the body) is retried and the session completes; a fault
that never stops leaves the session unscored and listed as an infrastructure
failure. A malformed tool call is the model's fault: it is not retried and the
turn is scored. A reset in the middle of a stream whose tokens were already
shown is not retried either.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faults import play_fault, stream_reset

from cypherturn.graph import GraphEngine

TRANSIENT = ["500", "429", "timeout", "reset"]


@pytest.mark.parametrize("fault", TRANSIENT)
def test_a_transient_fault_is_retried_and_the_session_completes(
    heroes: GraphEngine, tmp_path: Path, fault: str
) -> None:
    figures = play_fault(heroes, tmp_path / "run", fault, persistent=False)
    assert figures.injected == 2
    assert figures.calls == 2 + 4  # two failed calls, then the 4 guided turns
    assert (figures.completed, figures.infra_failures, figures.scored_turns) == (1, 0, 4)
    if fault == "429":
        assert figures.seconds >= 2.0  # Retry-After: 1 honoured before each retry


@pytest.mark.parametrize("fault", TRANSIENT)
def test_a_persistent_fault_leaves_the_session_unscored_and_listed(
    heroes: GraphEngine, tmp_path: Path, fault: str
) -> None:
    figures = play_fault(heroes, tmp_path / "run", fault, persistent=True)
    assert figures.calls == 4  # one call, three retries, then given up
    assert (figures.completed, figures.infra_failures, figures.scored_turns) == (0, 1, 0)
    assert "gave up after 3 retries" in figures.error


def test_a_malformed_tool_call_is_scored_not_retried(heroes: GraphEngine, tmp_path: Path) -> None:
    figures = play_fault(heroes, tmp_path / "run", "malformed_tool_call", persistent=True)
    assert figures.infra_failures == 0 and figures.completed == 1
    assert figures.scored_turns == 4


def test_a_reset_mid_stream_after_tokens_is_not_retried() -> None:
    calls, error = stream_reset()
    assert calls == 1
    assert "in the middle of a stream" in error
