"""Every ``>>>`` example in ``src/cypherturn`` runs and holds.

An example that cannot run here (it needs a model or a loaded graph) is written as
a plain code block, not as ``>>>`` with ``+SKIP``, so a reader can trust every
``>>>`` line to be what the code does.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import cypherturn

PACKAGE = Path(cypherturn.__file__).parent


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_package_has_examples_to_run() -> None:
    assert len(_modules_with_examples()) >= 10


@pytest.mark.parametrize("name", _modules_with_examples())
def test_the_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder().find(module)
    skipped = [t.name for t in tests for e in t.examples if e.options.get(doctest.SKIP)]
    assert not skipped, f"examples marked +SKIP in {skipped}: write them as plain code"
    # ELLIPSIS, as pytest's own doctest runner uses by default
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    # a `>>>` the finder does not see (outside a docstring) would be an example never run
    assert runner.tries > 0, f"{name} holds '>>>' outside any docstring example"
    assert runner.failures == 0, "".join(report)
