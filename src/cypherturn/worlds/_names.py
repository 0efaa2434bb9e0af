"""Fictional names for the synthetic worlds, built from syllables with a seeded ``random.Random``.

Every world draws its names here so that no real person, place or company
appears in a generated graph (CypherTurn §2.1: "synthetic worlds, ensuring
every correct answer must be derived from the graph itself"). Each *style* is a
small syllable inventory with the phonology of its world (imperial, arcane,
marine, stellar, celestial, harbour); names are an onset, an optional middle
and a coda, so a few dozen syllables give thousands of distinct words.
Uniqueness of identifying names is enforced by the graph builder, not here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["ROMAN", "Style", "compound", "person", "pick", "roman", "word"]


@dataclass(frozen=True, slots=True)
class Style:
    """A syllable inventory: ``onsets`` + optional ``middles`` + ``codas``."""

    onsets: tuple[str, ...]
    middles: tuple[str, ...]
    codas: tuple[str, ...]
    middle_rate: float = 0.35


IMPERIAL = Style(
    onsets=(
        "Aur",
        "Val",
        "Cass",
        "Dom",
        "Luc",
        "Sev",
        "Tib",
        "Oct",
        "Mar",
        "Fla",
        "Ser",
        "Cor",
        "Pra",
        "Vel",
        "Quin",
        "Hor",
        "Sal",
        "Ter",
        "Num",
        "Ael",
        "Cal",
        "Ves",
        "Arr",
        "Bal",
        "Cinn",
        "Dec",
        "Fab",
        "Gall",
        "Len",
        "Pol",
        "Rut",
        "Stat",
        "Tull",
        "Varr",
    ),
    middles=("e", "i", "a", "o", "en", "ar", "il", "or", "ul", "an", "id"),
    codas=(
        "ia",
        "ium",
        "us",
        "ara",
        "ens",
        "ona",
        "ica",
        "ix",
        "um",
        "ana",
        "ora",
        "ris",
        "ax",
        "ilia",
        "entum",
        "onus",
    ),
)
ARCANE = Style(
    onsets=(
        "Ael",
        "Bryn",
        "Cael",
        "Dra",
        "Ely",
        "Fen",
        "Gwy",
        "Isol",
        "Lor",
        "Mor",
        "Thal",
        "Vey",
        "Zeph",
        "Syl",
        "Ery",
        "Kael",
        "Nym",
        "Ori",
        "Quel",
        "Rha",
        "Sor",
        "Tam",
        "Ul",
        "Yse",
    ),
    middles=("a", "e", "i", "o", "ar", "en", "il", "yr", "ae", "ol"),
    codas=(
        "wen",
        "dra",
        "mir",
        "ion",
        "eth",
        "ara",
        "is",
        "wyn",
        "thas",
        "riel",
        "dor",
        "nis",
        "vel",
        "dris",
        "lune",
        "ros",
    ),
)
MARINE = Style(
    onsets=(
        "Cor",
        "Mer",
        "Thal",
        "Ner",
        "Pel",
        "Aby",
        "Kai",
        "Ond",
        "Sal",
        "Tet",
        "Naut",
        "Mar",
        "Ula",
        "Bri",
        "Lag",
        "Cer",
        "Hal",
        "Ish",
        "Mod",
        "Sca",
        "Tor",
        "Vass",
        "Wel",
        "Zul",
    ),
    middles=("a", "e", "i", "o", "ae", "y", "ul", "en"),
    codas=(
        "is",
        "ora",
        "eus",
        "ine",
        "ax",
        "yn",
        "os",
        "ara",
        "ith",
        "el",
        "una",
        "ea",
        "oth",
        "ari",
        "ynx",
        "ess",
    ),
)
STELLAR = Style(
    onsets=(
        "Kep",
        "Hal",
        "Ves",
        "Ori",
        "Cyg",
        "Tau",
        "Lyr",
        "Andr",
        "Pho",
        "Sol",
        "Ery",
        "Zan",
        "Cas",
        "Dra",
        "Ix",
        "Ny",
        "Rig",
        "Alt",
        "Bel",
        "Cen",
        "Hesp",
        "Mira",
        "Pol",
        "Thu",
    ),
    middles=("a", "e", "i", "o", "on", "ar", "el", "ir"),
    codas=(
        "ion",
        "ara",
        "is",
        "on",
        "ix",
        "us",
        "ea",
        "ora",
        "ani",
        "eth",
        "ar",
        "yx",
        "ova",
        "ene",
        "ax",
        "os",
    ),
)
CELESTIAL_GIVEN = (
    "Xuan",
    "Ling",
    "Qian",
    "Zhen",
    "Yao",
    "Bei",
    "Cang",
    "Dan",
    "Feng",
    "Gan",
    "Hao",
    "Jiu",
    "Kuang",
    "Liu",
    "Miao",
    "Nian",
    "Ou",
    "Pan",
    "Qing",
    "Rui",
    "Shao",
    "Tian",
    "Wu",
    "Xue",
    "Yan",
    "Zhao",
    "An",
    "Bao",
    "Chao",
    "Dian",
    "Er",
    "Fang",
    "Gui",
    "Hong",
    "Jing",
    "Lan",
    "Mei",
    "Ning",
    "Ping",
    "Rong",
    "Song",
    "Tao",
    "Wei",
    "Xin",
    "Yun",
    "Zi",
)
CELESTIAL_SECOND = (
    "wei",
    "tian",
    "huan",
    "ming",
    "guang",
    "luo",
    "liu",
    "feng",
    "xiao",
    "zhan",
    "lin",
    "qing",
    "yin",
    "he",
    "sha",
    "long",
    "mei",
    "lan",
    "bo",
    "yi",
    "ren",
    "zhou",
    "yu",
    "shan",
)
HARBOR = Style(
    onsets=(
        "Ald",
        "Bras",
        "Cord",
        "Dwy",
        "Elsp",
        "Far",
        "Gav",
        "Har",
        "Ith",
        "Jos",
        "Kel",
        "Lyss",
        "Mor",
        "Nim",
        "Os",
        "Pry",
        "Quil",
        "Ros",
        "Sel",
        "Tess",
        "Uld",
        "Vald",
        "Wyl",
        "Yse",
    ),
    middles=("a", "e", "i", "o", "an", "er", "ol"),
    codas=(
        "ric",
        "a",
        "on",
        "yn",
        "ara",
        "ick",
        "is",
        "ell",
        "wen",
        "ard",
        "ina",
        "eth",
        "os",
        "ane",
        "us",
        "ir",
    ),
)
COMMON_GIVEN = (
    "Ada",
    "Bram",
    "Cyra",
    "Dax",
    "Elio",
    "Fenna",
    "Galen",
    "Hana",
    "Ilya",
    "Juno",
    "Kiran",
    "Lior",
    "Mara",
    "Niko",
    "Orin",
    "Pia",
    "Quinn",
    "Rhea",
    "Soren",
    "Tova",
    "Ursa",
    "Vale",
    "Wren",
    "Xan",
    "Yara",
    "Zev",
    "Alba",
    "Bex",
    "Cato",
    "Dara",
    "Edda",
    "Finn",
    "Greta",
    "Hugo",
    "Ines",
    "Jonah",
    "Kaia",
    "Leon",
    "Mina",
    "Nola",
    "Otto",
    "Petra",
    "Remy",
    "Saba",
    "Teo",
    "Uma",
    "Vera",
    "Wyatt",
    "Yusuf",
    "Zora",
    "Arlo",
    "Bea",
    "Cleo",
    "Dorian",
    "Elsa",
    "Felix",
    "Gia",
    "Hector",
    "Isla",
    "Jasper",
    "Kira",
    "Luca",
    "Maeve",
    "Nils",
    "Opal",
    "Piers",
)
COMMON_SURNAME_PARTS = (
    (
        "Ash",
        "Brook",
        "Cald",
        "Dun",
        "Eld",
        "Fair",
        "Glen",
        "Hart",
        "Ivy",
        "Kings",
        "Lang",
        "Marsh",
        "North",
        "Oak",
        "Pem",
        "Red",
        "Stan",
        "Thorn",
        "Under",
        "West",
        "Whit",
        "York",
        "Bell",
        "Cres",
    ),
    (
        "ford",
        "wood",
        "ley",
        "ton",
        "well",
        "field",
        "by",
        "more",
        "wick",
        "combe",
        "stead",
        "holm",
        "ridge",
        "worth",
        "bury",
        "dale",
        "gate",
        "lowe",
        "ham",
        "shaw",
    ),
)

STYLES: dict[str, Style] = {
    "imperial": IMPERIAL,
    "arcane": ARCANE,
    "marine": MARINE,
    "stellar": STELLAR,
    "harbor": HARBOR,
}

ROMAN = (
    "I",
    "II",
    "III",
    "IV",
    "V",
    "VI",
    "VII",
    "VIII",
    "IX",
    "X",
    "XI",
    "XII",
    "XIII",
    "XIV",
    "XV",
    "XVI",
    "XVII",
    "XVIII",
    "XIX",
    "XX",
    "XXI",
    "XXII",
    "XXIII",
    "XXIV",
    "XXV",
)


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
        return f"{pick(rng, COMMON_GIVEN)} {compound(rng, *COMMON_SURNAME_PARTS)}"
    if style == "celestial":
        return pick(rng, CELESTIAL_GIVEN) + pick(rng, CELESTIAL_SECOND)
    return f"{word(rng, style)} {word(rng, style)}"


def roman(number: int) -> str:
    """Roman numeral for 1..25 (legion and tome volume numbers); larger numbers stay Arabic."""
    return ROMAN[number - 1] if 1 <= number <= len(ROMAN) else str(number)
