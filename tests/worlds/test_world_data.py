"""World data files: the packaged ones load and match their generators; bad files are one clear error."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from world_graphs import SEVEN

from cypherturn.errors import DatasetError
from cypherturn.worlds import load_world_data
from cypherturn.worlds._names import pick, roman, word
from cypherturn.worlds._world_data import Template

TOY = """\
info: {name: toy_shop, title: Toy Shop, kind: synthetic, description: Shelves of toys., source: test}
vocabulary:
  toys: [Kite, Top, Yo-yo]
labels:
  Shelf:
    count: 3
    properties:
      name: {type: STRING, draw: {kind: text, template: 'Shelf {int:1:9}'}}
  Toy:
    count: 10
    properties:
      name: {type: STRING, draw: {kind: text, template: '{word:arcane} {pick:toys}'}}
      price: {type: FLOAT, draw: {kind: lognormal_float, median: 12, sigma: 0.5}}
relationships:
  (Toy)-[:ON]->(Shelf): {row: INTEGER}
"""


@pytest.mark.parametrize("name", SEVEN)
def test_each_packaged_world_file_declares_every_label_and_pattern_of_its_world(name: str) -> None:
    data = load_world_data(name)
    assert data.spec.info.name == name
    assert data.spec.labels and data.spec.relationships
    assert all(p.type.value for decl in data.spec.labels for p in decl.properties)


def test_a_template_draws_its_placeholders_left_to_right() -> None:
    words = {"forms": ("Codex", "Folio")}.__getitem__
    template = Template.parse("{pick:forms} of {word:arcane} {roman:1:25}|{int:1:4}", words)
    drawn = template.bind()(random.Random(5))
    rng = random.Random(5)
    expected = (
        f"{pick(rng, ('Codex', 'Folio'))} of {word(rng, 'arcane')} {roman(rng.randint(1, 25))}"
    )
    assert drawn == f"{expected}|{rng.randint(1, 4)}"


def test_a_template_parameter_is_supplied_by_the_generator() -> None:
    data = load_world_data("ancient_empire")
    draw = data.text("resource", goods="Tin")
    assert draw(random.Random(0)).endswith(" Tin")
    with pytest.raises(DatasetError, match="needs \\['goods'\\]"):
        data.text("resource")


def test_a_file_outside_the_package_loads_by_path(tmp_path: Path) -> None:
    path = tmp_path / "toy_shop.yaml"
    path.write_text(TOY, encoding="utf-8")
    data = load_world_data(path)
    assert [d.label for d in data.spec.labels] == ["Shelf", "Toy"]
    assert data.words("toys") == ("Kite", "Top", "Yo-yo")
    toy = data.spec.label("Toy")
    assert toy.properties[0].draw is not None
    assert toy.properties[0].draw(random.Random(1)).split()[-1] in ("Kite", "Top", "Yo-yo")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("{pick:toys}", "{pick:games}"), "Toy: no vocabulary list 'games'"),
        (("{word:arcane}", "{word:gothic}"), "unknown name style 'gothic'"),
        (("{int:1:9}", "{dice:6}"), "unknown placeholder kind 'dice'"),
        (("{int:1:9}", "{int:1:9"), "unmatched brace"),
        (("(Toy)-[:ON]->(Shelf)", "(Toy)-[:ON]->(Box)"), "undeclared label 'Box'"),
        (("(Toy)-[:ON]->(Shelf)", "Toy ON Shelf"), "is not \\(Source\\)-\\[:TYPE\\]->\\(Target\\)"),
        (("kind: lognormal_float", "kind: lognormal"), "is malformed"),
        (("{row: INTEGER}", "{row: NUMBER}"), "is malformed"),
        (("toys: [Kite, Top, Yo-yo]", "common_given: [Kite]"), "shadows the shared lists"),
        (("count: 3", "count: [3"), "is malformed"),
    ],
)
def test_a_bad_world_file_is_one_error_naming_the_file(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = tmp_path / "toy_shop.yaml"
    assert change[0] in TOY
    path.write_text(TOY.replace(change[0], change[1]), encoding="utf-8")
    with pytest.raises(DatasetError, match=message) as caught:
        load_world_data(path)
    assert str(path) in str(caught.value)


def test_a_missing_world_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_world_data(tmp_path / "absent.yaml")
    with pytest.raises(DatasetError, match="no such file"):
        load_world_data("atlantis")
