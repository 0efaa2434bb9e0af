"""Run-directory helpers: what changed between a stored configuration and a requested one."""

from __future__ import annotations

from pydantic import BaseModel

from cypherturn.records import config_changes


class Sampling(BaseModel):
    temperature: float = 0.0
    seed: int | None = None


class Config(BaseModel):
    model: str = "a"
    sampling: Sampling = Sampling()
    tiers: list[str] = ["easy"]


def test_equal_configurations_have_no_changes() -> None:
    assert config_changes(Config(), Config()) == []


def test_nested_and_list_changes_are_named_by_dotted_key() -> None:
    stored = Config()
    requested = Config(model="b", sampling=Sampling(seed=3), tiers=["easy", "hard"])
    assert config_changes(stored, requested) == [
        "model 'a' -> 'b'",
        "sampling.seed None -> 3",
        "tiers ['easy'] -> ['easy', 'hard']",
    ]
