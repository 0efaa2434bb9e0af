"""Utterance templates in the persona registers."""

from __future__ import annotations

import random
import re

import pytest

from cypherturn.errors import DatasetError
from cypherturn.sessions import Persona, load_bank

SLOTS = {
    "tgt": "courses",
    "plural": "spells",
    "noun": "spell",
    "set": "those spells",
    "hop": "courses taught by those professors",
    "cond": "whose school is Evocation",
    "prop": "power level",
    "extreme": "highest",
    "k": "5",
}


def test_every_key_has_variants_in_every_tier() -> None:
    bank = load_bank()
    for key, tiers in bank.cores.items():
        for tier in ("formal", "neutral", "terse"):
            assert len(tiers[tier]) >= 3, (key, tier)


@pytest.mark.parametrize("persona", list(Persona))
def test_every_persona_renders_every_template(persona: Persona) -> None:
    bank = load_bank()
    rng = random.Random(persona.value)
    for key in bank.cores:
        if key == "TOPIC_SHIFT":
            continue
        for _ in range(6):
            text = bank.render(persona, key, SLOTS, rng)
            assert text and "{" not in text and "}" not in text, (key, text)
            assert "  " not in text


def test_registers_shape_the_wording() -> None:
    bank = load_bank()
    rng = random.Random(1)
    casual = [bank.render(Persona.CASUAL_USER, "EXPAND", SLOTS, rng) for _ in range(30)]
    assert all(t == t.lower() or "Evocation" in t for t in casual)
    assert all(not t.endswith("?") for t in casual)
    verbose = [bank.render(Persona.VERBOSE_USER, "COUNT", SLOTS, rng) for _ in range(30)]
    terse = [bank.render(Persona.IMPATIENT_EXEC, "COUNT", SLOTS, rng) for _ in range(30)]
    assert sum(map(len, verbose)) > 2 * sum(map(len, terse))
    assert bank.persona(Persona.NOVICE_USER).speech_register.density == "low"
    assert bank.persona(Persona.DATA_ANALYST).speech_register.density == "high"


def test_topic_shift_marker_and_values_kept_verbatim() -> None:
    bank = load_bank()
    rng = random.Random(3)
    markers = {m.lower().strip() for tier in bank.cores["TOPIC_SHIFT"].values() for m in tier}
    for persona in Persona:
        text = bank.render(persona, "ORIGIN_FILTER", SLOTS, rng, topic_shift=True)
        assert any(text.lower().startswith(m[:8]) for m in markers), text
        assert "Evocation" in text


def test_rendering_is_deterministic_and_varied() -> None:
    bank = load_bank()
    first = [bank.render(Persona.STUDENT, "FILTER", SLOTS, random.Random(5)) for _ in range(3)]
    assert len(set(first)) == 1
    rng = random.Random(5)
    assert len({bank.render(Persona.STUDENT, "FILTER", SLOTS, rng) for _ in range(40)}) >= 5


def test_missing_slot_and_unknown_key_are_clear_errors() -> None:
    bank = load_bank()
    with pytest.raises(DatasetError, match="slot"):
        bank.render(Persona.JOURNALIST, "EXPAND", {}, random.Random(0))
    with pytest.raises(DatasetError, match="no key"):
        bank.render(Persona.JOURNALIST, "NOPE", SLOTS, random.Random(0))


def test_non_native_style_slips_only_outside_values() -> None:
    bank = load_bank()
    rng = random.Random(11)
    texts = [bank.render(Persona.NON_NATIVE, "ORIGIN_FILTER", SLOTS, rng) for _ in range(40)]
    assert all("Evocation" in t for t in texts)
    assert any(re.search(r"\bthe\b", t) is None for t in texts)
