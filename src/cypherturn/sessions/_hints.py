"""Per-world semantic hints: nouns, display properties and relationship phrases, kept as data.

The generator is driven by a world's schema and the values its loaded graph
actually holds; hints only add what cannot be read from data: how to *say*
things ("students", "the courses those students are enrolled in") and, where
inference would guess wrong, which property names a node or counts as a
category. A world without a hints file still gets sessions, with phrases made
from its label and relationship type names.

Hint files live in ``cypherturn/sessions/data/worlds/<world>.yaml``.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.errors import DatasetError

__all__ = [
    "LabelHints",
    "RelationshipHints",
    "WorldHints",
    "humanize",
    "load_hints",
    "pluralize",
]


class LabelHints(BaseModel):
    """How to talk about one node label.

    Attributes:
        noun: singular noun ("student"); default: the label split into words.
        plural: plural noun; default: :func:`pluralize` of ``noun``.
        display: property that names a node in answers; default: ``name``,
            ``title`` or the first string property without gaps, unique if possible.
        categorical: properties usable as categories; default: strings and booleans
            with at most 12 distinct values.
        numeric: properties usable as numbers; default: integer and float properties.
        exclude: properties never used in questions (identifiers, free text).
        properties: property key -> noun phrase ("talent_score" -> "talent score").
        flags: boolean property key -> predicate used as "that are {flag}"
            ("is_frontier" -> "frontier provinces").
    """

    model_config = ConfigDict(extra="forbid")

    noun: str | None = None
    plural: str | None = None
    display: str | None = None
    categorical: list[str] | None = None
    numeric: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    properties: dict[str, str] = Field(default_factory=dict)
    flags: dict[str, str] = Field(default_factory=dict)


class RelationshipHints(BaseModel):
    """How to say one hop along a relationship type.

    Phrases name the nodes reached, with ``{tgt}`` for their plural noun and
    ``{src}`` for the noun phrase of the set the hop starts from:

    * ``out`` — hop along the arrow, ``(src)-[:TYPE]->(tgt)``: for ``TEACHES``
      from professors, ``"{tgt} that {src} teach"``;
    * ``in`` — hop against it, ``(src)<-[:TYPE]-(tgt)``: ``"{tgt} who teach {src}"``.

    Attributes:
        out: phrase for the forward hop.
        in_: phrase for the backward hop (key ``in`` in the file).
        properties: relationship property key -> noun phrase.
        numeric: relationship properties usable in numeric filters; default: all
            integer and float properties of the type.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    out: str | None = None
    in_: str | None = Field(default=None, alias="in")
    properties: dict[str, str] = Field(default_factory=dict)
    numeric: list[str] | None = None


class WorldHints(BaseModel):
    """All hints of one world (possibly empty)."""

    model_config = ConfigDict(extra="forbid")

    world: str
    labels: dict[str, LabelHints] = Field(default_factory=dict)
    relationships: dict[str, RelationshipHints] = Field(default_factory=dict)

    def label(self, label: str) -> LabelHints:
        """Hints of ``label`` (empty when the file says nothing about it)."""
        return self.labels.get(label) or LabelHints()

    def relationship(self, rel_type: str) -> RelationshipHints:
        """Hints of ``rel_type`` (empty when the file says nothing about it)."""
        return self.relationships.get(rel_type) or RelationshipHints()


def humanize(name: str) -> str:
    """Words of an identifier in lower case.

    Example:
        >>> humanize("talent_score"), humanize("StarSystem"), humanize("HEADS_HOUSE")
        ('talent score', 'star system', 'heads house')
    """
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return " ".join(spaced.lower().split())


_IRREGULAR = {
    "person": "people",
    "child": "children",
    "man": "men",
    "woman": "women",
    "staff": "staff",
}


def pluralize(noun: str) -> str:
    """English plural of the last word of ``noun`` (regular rules plus a few irregulars).

    Example:
        >>> pluralize("colony"), pluralize("class"), pluralize("tome"), pluralize("star system")
        ('colonies', 'classes', 'tomes', 'star systems')
    """
    head, _, last = noun.rpartition(" ")
    lower = last.lower()
    if lower in _IRREGULAR:
        plural = _IRREGULAR[lower]
    elif re.search(r"[^aeiou]y$", lower):
        plural = last[:-1] + "ies"
    elif re.search(r"(s|x|z|ch|sh)$", lower):
        plural = last + "es"
    else:
        plural = last + "s"
    return f"{head} {plural}" if head else plural


@functools.cache
def load_hints(world: str) -> WorldHints:
    """Load the hints file of ``world`` (empty hints when there is none).

    Raises:
        DatasetError: the file exists but is not valid YAML for :class:`WorldHints`.
    """
    resource = resources.files("cypherturn.sessions").joinpath("data", "worlds", f"{world}.yaml")
    if not resource.is_file():
        return WorldHints(world=world)
    try:
        raw: Any = yaml.safe_load(resource.read_text(encoding="utf-8"))
        return WorldHints.model_validate(raw)
    except (yaml.YAMLError, ValidationError) as e:
        raise DatasetError(f"hints for world {world!r} are malformed: {e}") from e
