"""The seven worlds' hint files agree with their declared schemas."""

from __future__ import annotations

import pytest

from cypherturn.sessions import DEFAULT_WORLDS, load_hints
from cypherturn.sessions._hints import humanize, pluralize
from cypherturn.worlds import get_world


@pytest.mark.parametrize("world", DEFAULT_WORLDS)
def test_hints_name_only_what_the_world_declares(world: str) -> None:
    hints = load_hints(world)
    assert hints.world == world
    schema = get_world(world).declared_schema()
    labels = {label.label: label.properties for label in schema.labels}
    types = {t.type: t.properties for t in schema.relationship_types}
    assert hints.labels and hints.relationships
    for label, hint in hints.labels.items():
        assert label in labels, label
        named = [
            *hint.properties,
            *hint.flags,
            *hint.exclude,
            *(hint.categorical or []),
            *(hint.numeric or []),
        ]
        assert set(named) <= set(labels[label]), (label, set(named) - set(labels[label]))
        assert all(labels[label][flag] == "BOOLEAN" for flag in hint.flags)
    for rel_type, hint in hints.relationships.items():
        assert rel_type in types, rel_type
        assert set(hint.properties) <= set(types[rel_type])
        for phrase in (hint.out, hint.in_):
            assert phrase is not None and "{tgt}" in phrase and "{src}" in phrase, (
                rel_type,
                phrase,
            )
    assert set(hints.relationships) == set(types), "every relationship type has phrases"


def test_world_without_hints_gets_empty_hints() -> None:
    hints = load_hints("no_such_world")
    assert hints.labels == {} and hints.relationships == {}


def test_words() -> None:
    assert pluralize("territory") == "territories"
    assert pluralize("person") == "people"
    assert pluralize("bus") == "buses"
    assert humanize("jade_salary") == "jade salary"
