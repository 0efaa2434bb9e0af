"""`cli._background.in_background`: best-effort work that the command's stop or its own stop ends."""

from __future__ import annotations

import threading

import pytest

from cypherturn.cli._background import in_background
from cypherturn.errors import CallAbandoned, ModelUnavailableError
from cypherturn.models import call_limits, current_limits, stop_calls


def _until_stopped(seen: list[BaseException]) -> None:
    """Work that runs until a stop of its call limits ends it."""
    try:
        while True:
            current_limits().check("work")
            threading.Event().wait(0.01)
    except CallAbandoned as e:
        seen.append(e)
        raise


def test_its_own_stop_ends_the_work_and_the_thread() -> None:
    seen: list[BaseException] = []
    work = in_background(lambda: _until_stopped(seen), "test work")
    assert work.thread.is_alive()
    work.stop()
    assert not work.thread.is_alive() and len(seen) == 1


def test_the_callers_stop_ends_it_too() -> None:
    seen: list[BaseException] = []
    command = threading.Event()
    with call_limits(stop=command):
        work = in_background(lambda: _until_stopped(seen), "test work")
    stop_calls(command)  # a signal's stop of the command
    work.thread.join(timeout=10)
    assert not work.thread.is_alive() and len(seen) == 1


def test_a_failure_is_left_to_the_command(caplog: pytest.LogCaptureFixture) -> None:
    def fails() -> None:
        raise ModelUnavailableError("no model file")

    caplog.set_level("DEBUG", logger="cypherturn.cli._background")
    work = in_background(fails, "test work")
    work.thread.join(timeout=10)
    assert not work.thread.is_alive()
    assert "test work failed: no model file" in caplog.text
