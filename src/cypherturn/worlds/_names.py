"""Fictional names for the synthetic worlds, built from syllables with a seeded ``random.Random``.

Every world draws its names here so that no real person, place or company
appears in a generated graph (CypherTurn §2.1: "synthetic worlds, ensuring
every correct answer must be derived from the graph itself"). Each *style* is a
small syllable inventory with the phonology of its world (imperial, arcane,
marine, stellar, harbour); names are an onset, an optional middle and a coda,
so a few dozen syllables give thousands of distinct words. The inventories and
the shared lists (court names, common given names and surname parts) are data:
``cypherturn/worlds/data/names.yaml``. Uniqueness of identifying names is
enforced by the graph builder, not here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from cypherturn.errors import DatasetError

__all__ = [
    "LISTS",
    "PERSON_STYLES",
    "STYLES",
    "Style",
    "compound",
    "person",
    "pick",
    "roman",
    "word",
]


@dataclass(frozen=True, slots=True)
class Style:
    """A syllable inventory: ``onsets`` + optional ``middles`` + ``codas``."""

    onsets: tuple[str, ...]
    middles: tuple[str, ...]
    codas: tuple[str, ...]
    middle_rate: float = 0.35


class _NamesFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    styles: dict[str, dict[str, list[str]]]
    lists: dict[str, list[str]]


def _read() -> _NamesFile:
    text = resources.files("cypherturn.worlds").joinpath("data", "names.yaml").read_text("utf-8")
    try:
        return _NamesFile.model_validate(yaml.safe_load(text))
    except (yaml.YAMLError, ValidationError) as e:
        raise DatasetError(f"world data names.yaml is malformed: {e}") from e


_FILE = _read()
STYLES: dict[str, Style] = {
    name: Style(tuple(s["onsets"]), tuple(s["middles"]), tuple(s["codas"]))
    for name, s in _FILE.styles.items()
}
"""Style name -> syllable inventory, for :func:`word` and :func:`person`."""
LISTS: dict[str, tuple[str, ...]] = {name: tuple(words) for name, words in _FILE.lists.items()}
"""Shared word lists (``{pick:NAME}`` in any world's templates)."""
PERSON_STYLES = ("common", "celestial")
"""The styles :func:`person` knows beside :data:`STYLES`."""
_CELESTIAL_GIVEN = LISTS["celestial_given"]
_CELESTIAL_SECOND = LISTS["celestial_second"]
_COMMON_GIVEN = LISTS["common_given"]
_COMMON_SURNAME_PARTS = (LISTS["common_surname_first"], LISTS["common_surname_second"])
_NUMERALS = ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"))


def pick(rng: random.Random, options: tuple[str, ...]) -> str:
    """One element of ``options``, uniformly."""
    return options[rng.randrange(len(options))]


def word(rng: random.Random, style: str) -> str:
    """A capitalised fictional word in ``style`` (``imperial``, ``arcane``, ``marine``, ...).

    Args:
        rng: the world's seeded generator.
        style: a key of the style table.

    Returns:
        e.g. ``"Corenthas"`` for ``arcane``.

    Raises:
        KeyError: unknown style (a programming error, not user input).
    """
    inventory = STYLES[style]
    middle = pick(rng, inventory.middles) if rng.random() < inventory.middle_rate else ""
    return (pick(rng, inventory.onsets) + middle + pick(rng, inventory.codas)).capitalize()


def compound(rng: random.Random, first: tuple[str, ...], second: tuple[str, ...]) -> str:
    """A two-part compound word such as ``"Thornwick"`` from two syllable lists."""
    return pick(rng, first) + pick(rng, second)


def person(rng: random.Random, style: str) -> str:
    """A fictional person's full name in ``style``.

    ``common`` mixes a given name with an invented English-looking surname (Fraud
    clients); ``celestial`` gives two-syllable court names; the others combine two
    words of the style.
    """
    if style == "common":
        return f"{pick(rng, _COMMON_GIVEN)} {compound(rng, *_COMMON_SURNAME_PARTS)}"
    if style == "celestial":
        return pick(rng, _CELESTIAL_GIVEN) + pick(rng, _CELESTIAL_SECOND)
    return f"{word(rng, style)} {word(rng, style)}"


def roman(number: int) -> str:
    """Roman numeral for 1..25 (legion and tome volume numbers); larger numbers stay Arabic."""
    if not 1 <= number <= 25:
        return str(number)
    digits = []
    for value, numeral in _NUMERALS:
        count, number = divmod(number, value)
        digits.append(numeral * count)
    return "".join(digits)
