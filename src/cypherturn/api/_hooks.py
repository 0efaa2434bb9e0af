"""How an API verb reports progress to its caller without printing anything itself."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

__all__ = ["Status", "quiet"]

Status = Callable[[str], AbstractContextManager[object]]
"""Wraps one long phase of a verb (``with status("loading the graphs ..."):``).

The CLI passes ``console.status`` (a spinner); the default, :func:`quiet`, shows nothing.
"""


def quiet(message: str) -> AbstractContextManager[object]:
    """A :data:`Status` that shows nothing."""
    return nullcontext()
