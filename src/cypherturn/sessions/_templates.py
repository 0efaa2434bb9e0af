"""Utterance rendering: phenomenon templates in the persona's register (CypherTurn §2.4-2.5).

Templates (``data/templates.yaml``) give each phenomenon several variants in
three tiers; a persona (``data/personas.yaml``) picks its tier from its register
and adds its openers, closers and style transformations. Style is applied to
the template text *before* slots are filled, so entity names and property
values reach the utterance unchanged and stay recoverable from it.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.errors import DatasetError
from cypherturn.sessions._vocab import Persona

__all__ = ["PersonaProfile", "Register", "TemplateBank", "load_bank"]

Tier = Literal["formal", "neutral", "terse"]
Level = Literal["low", "medium", "high"]
Style = Literal[
    "lowercase", "contractions", "drop_question_mark", "drop_articles", "plain_request", "no_please"
]


class Register(BaseModel):
    """A persona's register (CypherTurn App. D.4, Table 7).

    Attributes:
        formality: formal, neutral or informal wording.
        density: how much a turn spells out (low: vague references, high: explicit).
        tolerance: patience with imprecise answers (low: demands precision).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    formality: Literal["formal", "neutral", "informal"]
    density: Level
    tolerance: Level


class PersonaProfile(BaseModel):
    """How one persona speaks; see ``data/personas.yaml`` for the fields' meaning.

    Attributes:
        speech_register: the register (key ``register`` in the file).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    title: str
    speech_register: Register = Field(alias="register")
    traits: str
    tier: Tier
    opener_rate: float = Field(ge=0.0, le=1.0)
    openers: list[str]
    closer_rate: float = Field(ge=0.0, le=1.0)
    closers: list[str]
    style: list[Style] = Field(default_factory=list)


_CONTRACTIONS = (
    ("What is", "What's"),
    ("what is", "what's"),
    ("Let us", "Let's"),
    ("do not", "don't"),
    ("are not", "aren't"),
    ("is not", "isn't"),
    ("I would", "I'd"),
    ("that is", "that's"),
)
_NON_NATIVE = (
    ("Could you ", "Can you "),
    ("What are ", "What is "),
    ("How many", "How much"),
    ("Which are ", "Which is "),
    ("Can you show me", "Please show me"),
)


def _restyle(text: str, styles: list[Style], rng: random.Random) -> str:
    for style in styles:
        if style == "lowercase":
            text = text.lower()
        elif style == "contractions":
            for full, short in _CONTRACTIONS:
                text = text.replace(full, short)
        elif style == "drop_question_mark":
            text = text.rstrip("?")
        elif style == "drop_articles":
            text = re.sub(r"\bthe ", lambda m: "" if rng.random() < 0.5 else m.group(0), text)
        elif style == "plain_request":
            for full, slip in _NON_NATIVE:
                if full in text and rng.random() < 0.5:
                    text = text.replace(full, slip, 1)
        elif style == "no_please":
            text = text.replace(", please", "").replace("Please ", "")
    return text


def _lower_first(text: str) -> str:
    if text.startswith(("I ", "I'", "{")) or not text:
        return text
    return text[0].lower() + text[1:]


class TemplateBank:
    """Templates and personas loaded from the package data files.

    Raises:
        DatasetError: a data file is missing a key or is malformed.
    """

    def __init__(self, templates: Mapping[str, Any], personas: Mapping[str, Any]) -> None:
        try:
            self.personas = {
                Persona(k): PersonaProfile.model_validate(v) for k, v in personas.items()
            }
        except (ValueError, ValidationError) as e:
            raise DatasetError(f"personas.yaml is malformed: {e}") from e
        missing = set(Persona) - set(self.personas)
        if missing:
            raise DatasetError(f"personas.yaml lacks {sorted(missing)}")
        self.phrases: dict[str, Any] = dict(templates.get("phrases") or {})
        self.cores: dict[str, dict[str, list[str]]] = {
            k: v for k, v in templates.items() if k != "phrases"
        }
        for key, tiers in self.cores.items():
            for tier in ("formal", "neutral", "terse"):
                if not tiers.get(tier):
                    raise DatasetError(f"templates.yaml: {key} has no {tier} variants")

    def persona(self, persona: Persona) -> PersonaProfile:
        """The profile of ``persona``."""
        return self.personas[persona]

    def phrase(self, *path: str) -> Any:
        """A phrase entry under ``phrases`` (a string, list or mapping).

        Raises:
            DatasetError: the path does not exist.
        """
        node: Any = self.phrases
        for part in path:
            if not isinstance(node, dict) or part not in node:
                raise DatasetError(f"templates.yaml: no phrase at {'/'.join(path)}")
            node = node[part]
        return node

    def pick(self, rng: random.Random, *path: str) -> str:
        """One phrase drawn from the list at ``path``."""
        options = self.phrase(*path)
        return str(rng.choice(options)) if isinstance(options, list) else str(options)

    def render(
        self,
        persona: Persona,
        key: str,
        slots: Mapping[str, object],
        rng: random.Random,
        *,
        topic_shift: bool = False,
    ) -> str:
        """Render one utterance.

        Args:
            persona: whose register to speak in.
            key: the template key (``EXPAND``, ``ORIGIN_FILTER``...).
            slots: slot values; every slot the chosen variant names must be given.
            rng: the session's generator (all choices are drawn from it).
            topic_shift: a topic-shift marker precedes the core (TOPIC_SHIFT turns).

        Returns:
            The utterance, starting with a capital unless the persona writes in lower case.

        Raises:
            DatasetError: unknown key, or a slot the variant needs is missing.
        """
        profile = self.personas[persona]
        tiers = self.cores.get(key)
        if tiers is None:
            raise DatasetError(f"templates.yaml has no key {key!r}")
        text = rng.choice(tiers[profile.tier])
        lead = ""
        if topic_shift:
            lead = rng.choice(self.cores["TOPIC_SHIFT"][profile.tier])
        elif profile.openers and rng.random() < profile.opener_rate:
            lead = rng.choice(profile.openers)
        if lead.endswith((", ", ": ")) or lead.rstrip()[-1:].islower():
            text = _lower_first(text)
        text = _restyle(lead + text, profile.style, rng)
        try:
            text = text.format_map(dict(slots))
        except (KeyError, IndexError, ValueError) as e:
            raise DatasetError(f"template {key!r} variant needs slot {e}") from e
        if profile.closers and rng.random() < profile.closer_rate:
            closer = _restyle(rng.choice(profile.closers), profile.style, rng)
            if closer.strip()[:1].isupper() and not text.rstrip().endswith((".", "?", "!")):
                text = text.rstrip() + "."
            text = text + closer
        text = " ".join(text.split())
        if "lowercase" not in profile.style and text:
            text = text[0].upper() + text[1:]
        return text


@functools.cache
def load_bank() -> TemplateBank:
    """The template bank of the package data files (loaded once).

    Raises:
        DatasetError: a data file is missing or malformed.
    """
    data = resources.files("cypherturn.sessions").joinpath("data")
    try:
        templates = yaml.safe_load(data.joinpath("templates.yaml").read_text(encoding="utf-8"))
        personas = yaml.safe_load(data.joinpath("personas.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise DatasetError(f"cannot read the session templates: {e}") from e
    return TemplateBank(templates, personas)
