"""Session-wide fixtures: one real embedded FalkorDB, and fresh graphs on it.

``CYPHERTURN_HOME`` points at a temporary directory for the whole session, so
code under test that opens the default embedded engine (``open_engine(None,
...)``, the CLI) reuses the session's server instead of touching the user's
``~/.cache/cypherturn``.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cypherturn.graph import (
    EmbeddedFalkorDB,
    FalkorDBEngine,
    GraphEngine,
    default_data_dir,
)
from cypherturn.models import THREADS_ENV


def pytest_configure(config: pytest.Config) -> None:
    """Parallel workers (``pytest -n N``) share the cores: each model decodes on its share.

    llama.cpp on every core in each of two workers runs several times slower than
    on one core each (``cypherturn.models.model_threads``).
    """
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and THREADS_ENV not in os.environ:
        os.environ[THREADS_ENV] = str(max(1, (os.cpu_count() or 1) // int(workers)))


@pytest.fixture(scope="session", autouse=True)
def cypherturn_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private ``CYPHERTURN_HOME`` for the test session."""
    home = tmp_path_factory.mktemp("cypherturn-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CYPHERTURN_HOME", str(home))
        yield home


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``cli(*args) -> (exit code, stdout, stderr)``: the console entry point run in-process."""
    from cypherturn.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "argv", ["cypherturn", *args])
            try:
                main()
                code = 0
            except SystemExit as e:
                code = int(e.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture(scope="session")
def embedded_server(cypherturn_home: Path) -> Iterator[EmbeddedFalkorDB]:
    """The one real embedded FalkorDB of the test session (default data dir of the session home)."""
    server = EmbeddedFalkorDB(default_data_dir()).start()
    yield server
    server.stop()


@pytest.fixture
def make_engine(embedded_server: EmbeddedFalkorDB) -> Iterator[Callable[..., GraphEngine]]:
    """Factory ``make_engine(name=None) -> GraphEngine`` on fresh, empty, uniquely named graphs.

    The graph exists (read queries work) but holds nothing; every graph made
    is dropped at teardown.
    """
    engines: list[FalkorDBEngine] = []

    def make(name: str | None = None) -> GraphEngine:
        graph = f"{name or 'test'}_{uuid.uuid4().hex[:10]}"
        engine = FalkorDBEngine(
            embedded_server.client(), graph, spec=f"embedded:{embedded_server.data_dir}#{graph}"
        )
        engine.ensure_graph()
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.drop()
        engine.close()
