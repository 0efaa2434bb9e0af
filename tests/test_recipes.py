"""The recipes of docs/design/architecture.md ("Extension points"), each followed by a test.

Two recipes are exercised here, through the command line a user runs: a world
added from a data file (built, listed, loaded into the real engine, asked),
and a strategy added through the registry (``cypherturn ask --strategy``).
The metric, engine-scheme and protocol-variant recipes have their tests in
their packages; the last test checks that the doc's table names a test file
that exists for every recipe. Every registration is undone afterwards.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from cypherturn.cli import main
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import GraphData, GraphEngine, open_engine
from cypherturn.models import ChatModel
from cypherturn.strategies import (
    STRATEGIES,
    FewShotExample,
    Strategy,
    StrategyConfig,
    StrategyResult,
    TokenCallback,
    get_strategy,
    register_strategy,
    strategy_names,
)
from cypherturn.worlds import (
    SyntheticWorld,
    check_conformance,
    get_world,
    load_world_data,
    register_world,
    registered_world,
    spread,
    world_names,
)

ROOT = Path(__file__).parents[1]
TOY_SHOP = """\
info:
  name: toy_shop
  title: Toy Shop
  kind: synthetic
  description: Shelves of toys; every toy sits on one shelf, every shelf holds a toy.
  source: tests/test_recipes.py
vocabulary:
  toys: [Kite, Top, Yo-yo, Marble, Puppet]
labels:
  Shelf:
    count: 3
    properties:
      name: {type: STRING, draw: {kind: text, template: 'Shelf {roman:1:25}'}}
  Toy:
    count: 12
    minimum: 4
    properties:
      name: {type: STRING, draw: {kind: text, template: '{word:arcane} {pick:toys}'}}
      price: {type: FLOAT, draw: {kind: lognormal_float, median: 12, sigma: 0.5}}
      boxed: {type: BOOLEAN, draw: {kind: chance, probability: 0.5}, missing: 0.2}
relationships:
  (Toy)-[:ON]->(Shelf): {row: INTEGER}
"""


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run the console entry point in-process (so registrations apply); (exit code, stdout)."""
    old = sys.argv
    sys.argv = ["cypherturn", *args]
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    return code, out + err


def replay(tmp_path: Path, *responses: str) -> str:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(list(responses)), encoding="utf-8")
    return f"replay:{path}"


# ----------------------------------------------------------------------------- a world


def toy_shop_class(data_file: Path) -> type[SyntheticWorld]:
    """The recipe's generator: the declaration from the data file, the topology in code."""
    spec = load_world_data(data_file).spec

    class ToyShop(SyntheticWorld):
        SPEC = spec

        def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
            b = self.builder(rng, source, scale)
            shelves = [b.node("Shelf") for _ in range(b.count("Shelf"))]
            for shelf in spread(rng, shelves, b.count("Toy")):
                b.rel("ON", b.node("Toy"), shelf, row=rng.randint(1, 4))
            return b.finish(spec.info.name)

    return ToyShop


def test_a_world_added_from_a_data_file_is_built_listed_loaded_and_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the worlds table in full
    data_file = tmp_path / "toy_shop.yaml"
    data_file.write_text(TOY_SHOP, encoding="utf-8")
    graph = f"recipe_toy_shop_{tmp_path.name[-12:].lower()}"
    with registered_world("toy_shop", toy_shop_class(data_file)):
        world = get_world("Toy-Shop")
        assert isinstance(world, SyntheticWorld)
        first, again = world.build(seed=4), world.build(seed=4)
        check_conformance(first, world.SPEC)
        assert [(n.labels, n.properties) for n in first.nodes] == [
            (n.labels, n.properties) for n in again.nodes
        ]
        assert first.label_counts() == {"Shelf": 3, "Toy": 12}
        assert {rel.end for rel in first.relationships} == {0, 1, 2}  # every shelf holds a toy

        code, out = run_cli(capsys, "worlds", "list")
        assert code == 0 and "toy_shop" in out, out
        try:
            code, out = run_cli(capsys, "load", "toy_shop", "--graph", graph, "--seed", "4")
            assert code == 0, out
            assert "15" in out  # 3 shelves + 12 toys, counted back from the engine
            model = replay(tmp_path, "MATCH (t:Toy)-[:ON]->(s:Shelf) RETURN count(t) AS toys")
            code, out = run_cli(
                capsys, "ask", "How many toys?", "--graph", graph, "--model", model,
                "--strategy", "single", "--no-answer", "--json",
            )  # fmt: skip
            assert code == 0, out
            assert json.loads(out)["final_result"]["rows"] == [[12]]
        finally:
            engine = open_engine(None, graph)
            engine.drop()
            engine.close()
    assert "toy_shop" not in world_names()
    with pytest.raises(DatasetError, match="unknown graph 'toy_shop'"):
        get_world("toy_shop")


def test_a_world_name_must_be_canonical_and_free() -> None:
    with pytest.raises(ConfigError, match="lower-case"):
        register_world("Toy-Shop", "x:Y")
    with pytest.raises(ConfigError, match="already registered"):
        register_world("pole", "x:Y")
    assert "toy_shop" not in world_names()
    assert get_world("pole").info.kind == "dataset"  # the built-in entry is untouched


# ----------------------------------------------------------------------------- a strategy


@dataclass(frozen=True)
class FirstThatRuns:
    """The recipe's strategy: RAS, but stop at the first query that executes, whatever its rows."""

    name: str = "first_that_runs"

    def run(
        self,
        model: ChatModel,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> StrategyResult:
        result = get_strategy("ras").run(model, engine, question, schema_text, config, examples)
        return result.model_copy(update={"strategy": self.name})


def _first_that_runs(options: str | None, *, on_token: TokenCallback | None) -> Strategy:
    if options is not None:
        raise ConfigError(f"first_that_runs takes no options, not {options!r}")
    return FirstThatRuns()


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("recipe")
    engine.write("CREATE (:Person {name: 'Ada'}), (:Person {name: 'Alan'})")
    return engine


def test_a_strategy_added_through_the_registry_runs_under_cypherturn_ask(
    people: GraphEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, good = "MATCH (p:Person RETURN p", "MATCH (p:Person) RETURN count(p) AS n"
    register_strategy("first_that_runs", _first_that_runs)
    try:
        assert "first_that_runs" in strategy_names()
        model = replay(tmp_path, bad, good)
        code, out = run_cli(
            capsys,
            "ask",
            "How many people?",
            "--graph",
            people.graph,
            "--model",
            model,
            "--strategy",
            "first_that_runs",
            "--json",
        )
        assert code == 0, out
        record = json.loads(out)
        assert record["strategy"] == "first_that_runs"
        assert [a["outcome"] for a in record["attempts"]] == ["error", "ok"]
        assert record["final_result"]["rows"] == [[2]]
        code, out = run_cli(
            capsys, "ask", "q", "--graph", people.graph, "--model", model,
            "--strategy", "first_that_runs:x",
        )  # fmt: skip
        assert code == 1
    finally:
        STRATEGIES.unregister("first_that_runs")
    assert "first_that_runs" not in strategy_names()
    code, _ = run_cli(
        capsys, "ask", "q", "--graph", people.graph, "--model", model,
        "--strategy", "first_that_runs",
    )  # fmt: skip
    assert code != 0


# ----------------------------------------------------------------------------- the doc


def test_the_architecture_doc_names_an_existing_test_for_every_recipe() -> None:
    doc = (ROOT / "docs" / "design" / "architecture.md").read_text(encoding="utf-8")
    table = doc.split("| add a… |", 1)[1].split("\n\n", 1)[0]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}
    assert set(rows) == {"strategy", "engine URL scheme", "protocol variant", "metric", "world"}
    for recipe, line in rows.items():
        tests = re.findall(r"`(tests/[\w/]+\.py)", line)
        assert tests, recipe
        for test in tests:
            assert (ROOT / test).is_file(), (recipe, test)
