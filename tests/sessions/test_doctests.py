"""The runnable examples in the session modules' docstrings hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "cypherturn.sessions._vocab",
    "cypherturn.sessions._compose",
    "cypherturn.sessions._format",
    "cypherturn.sessions._hints",
    "cypherturn.sessions._audit",
    "cypherturn.sessions._divergence",
    "cypherturn.sessions._stats",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
