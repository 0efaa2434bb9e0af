"""Kill -9 in the middle of `bench run` and `qer run`: the rerun loses and duplicates nothing (issue 15).

Each run is a real ``cypherturn`` child process with its own ``CYPHERTURN_HOME``
(its own embedded FalkorDB), answered by a deterministic local OpenAI-compatible
endpoint through the real ``openai`` client; the child is SIGKILLed once its
files hold records, rerun with the same command, and compared with a run that
was never killed.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from faults import kill_resume

STOP_BOUND_S = 10.0
"""Far below the in-flight model call's minutes, so a stop that waits for it fails; the 2 s
target is measured by ``benchmarks/bench_serving.py``, not by timed tests."""


def test_bench_run_killed_mid_run_resumes_without_loss_or_duplicates(
    built_bench: Path, tmp_path: Path
) -> None:
    figures = kill_resume("bench", tmp_path, bench=built_bench, kill_at=6)
    assert figures.expected == 25
    assert figures.killed_rc == -9 and 6 <= figures.at_kill < figures.expected
    assert figures.resumed_rc == 0 and not figures.traceback
    assert (figures.lost, figures.duplicated, figures.different) == (0, 0, 0)
    assert figures.servers_left == 0


def test_qer_run_killed_mid_run_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    figures = kill_resume("qer", tmp_path, kill_at=4)
    assert figures.expected == 12
    assert figures.killed_rc == -9 and 4 <= figures.at_kill < figures.expected
    assert figures.resumed_rc == 0 and not figures.traceback
    assert (figures.lost, figures.duplicated, figures.different) == (0, 0, 0)
    assert figures.servers_left == 0


@pytest.mark.parametrize(
    ("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 128 + signal.SIGTERM)]
)
def test_bench_run_stops_promptly_on_ctrl_c_or_sigterm_with_a_model_call_in_flight(
    built_bench: Path, tmp_path: Path, signum: int, exit_code: int
) -> None:
    # the endpoint answers six calls, then leaves the seventh unanswered for minutes: the
    # signal comes while that model call is in flight, and the run must not wait for it
    figures = kill_resume(
        "bench", tmp_path, bench=built_bench, kill_at=6, signum=signum, in_flight=True
    )
    assert figures.killed_rc == exit_code and not figures.killed_traceback
    assert figures.seconds_to_exit < STOP_BOUND_S, figures.seconds_to_exit
    assert 6 <= figures.at_kill < figures.expected == 25
    assert figures.resumed_rc == 0 and not figures.traceback
    assert (figures.lost, figures.duplicated, figures.different) == (0, 0, 0)
    assert figures.servers_left == 0


def test_qer_run_stops_promptly_on_sigterm_with_a_model_call_in_flight(tmp_path: Path) -> None:
    figures = kill_resume("qer", tmp_path, kill_at=4, signum=signal.SIGTERM, in_flight=True)
    assert figures.killed_rc == 128 + signal.SIGTERM and not figures.killed_traceback
    assert figures.seconds_to_exit < STOP_BOUND_S, figures.seconds_to_exit
    assert 1 <= figures.at_kill < figures.expected == 12
    assert figures.resumed_rc == 0 and not figures.traceback
    assert (figures.lost, figures.duplicated, figures.different) == (0, 0, 0)
    assert figures.servers_left == 0
