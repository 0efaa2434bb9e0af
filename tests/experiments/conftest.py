"""Loaded dataset graphs on the session's real engine, and a tiny replay-driven QER run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.experiments import (
    QerRunConfig,
    QuestionSet,
    dataset_graph,
    load_question_set,
    question_set_digest,
    run_qer_experiment,
)
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.worlds import get_world, load_world

# An unparsable query, then one that executes on the Fraud graph: each episode with budget 2
# fails at attempt 1 and succeeds at attempt 2, so QER@1 = 1 and QER@2 = 0 under both strategies.
BAD = "```cypher\nMATCH (c:Client RETURN c.name\n```"
GOOD = "```cypher\nMATCH (c:Client) RETURN c.name LIMIT 3\n```"


@pytest.fixture
def dataset_engine(make_engine: Callable[..., GraphEngine]) -> Callable[[str], GraphEngine]:
    """Factory: a fresh graph with the dataset's world loaded into it."""

    def make(dataset: str) -> GraphEngine:
        engine = make_engine(dataset)
        load_world(engine, get_world(dataset_graph(dataset)))
        return engine

    return make


@pytest.fixture
def fraud_engine(dataset_engine: Callable[[str], GraphEngine]) -> GraphEngine:
    """The Fraud world loaded on a fresh graph."""
    return dataset_engine("fraud")


@pytest.fixture
def fraud_set() -> QuestionSet:
    """The packaged Fraud question set."""
    return load_question_set("fraud")


@pytest.fixture
def make_config(fraud_set: QuestionSet) -> Callable[..., QerRunConfig]:
    """Factory ``make_config(**changes)``: one easy Fraud question, IS and RAS, 2 runs, budget 2."""

    def make(**changes: object) -> QerRunConfig:
        settings: dict[str, object] = {
            "datasets": ["fraud"],
            "tiers": ["easy"],
            "strategies": ["is", "ras"],
            "model": "replay:<memory>",
            "budget": 2,
            "runs": 2,
            "temperature": 0.9,
            "max_tokens": 64,
            "questions_per_tier": 1,
            "question_sets": {"fraud": question_set_digest(fraud_set)},
        }
        settings.update(changes)
        return QerRunConfig.model_validate(settings)

    return make


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Where a test's run directory goes."""
    return tmp_path / "run"


@pytest.fixture
def replies() -> Callable[[int], list[str]]:
    """Factory ``replies(episodes)``: a failing then an executing completion per episode."""
    return lambda episodes: [BAD, GOOD] * episodes


@pytest.fixture
def tiny_run(
    make_config: Callable[..., QerRunConfig],
    fraud_engine: GraphEngine,
    fraud_set: QuestionSet,
    run_dir: Path,
    replies: Callable[[int], list[str]],
) -> Path:
    """The tiny experiment played to the end with the replay model: 4 episodes, 8 attempts."""
    run_qer_experiment(
        make_config(),
        ReplayChatModel(replies(4)),
        {"fraud": fraud_engine},
        {"fraud": fraud_set},
        run_dir,
    )
    return run_dir
