"""The benchmark vocabulary: the paper's 13 phenomena, 9 chain modes and 10 personas, spelled as released."""

from __future__ import annotations

from cypherturn.sessions import (
    AGGREGATION_PHENOMENA,
    CHAIN_DEPENDENT_MODES,
    ChainMode,
    Persona,
    Phenomenon,
    PhenomenonCategory,
    category_of,
    chain_mode_of,
    is_chain_dependent,
)


def test_values_are_the_official_spellings() -> None:
    assert [p.value for p in Phenomenon] == [
        "EXPAND", "PIVOT", "FIRST", "COUNT", "AGG_SUM", "AGG_AVG", "AGG_MAX",
        "FILTER", "REFINE", "VALUE_FILTER", "MULTI_CONDITION", "CONTRAST", "TOPIC_SHIFT",
    ]  # fmt: skip
    assert {m.value for m in ChainMode} == {
        "none", "topic_shift", "expand", "pivot", "agg_numeric", "aggregate", "contrast",
        "value_narrow", "narrow",
    }  # fmt: skip
    assert {p.value for p in Persona} == {
        "journalist", "student", "product_manager", "novice_user", "data_analyst", "casual_user",
        "impatient_exec", "adversarial", "non_native", "verbose_user",
    }  # fmt: skip


def test_chain_modes_of_phenomena_follow_the_issue() -> None:
    assert chain_mode_of(Phenomenon.FILTER) is ChainMode.NARROW
    assert chain_mode_of(Phenomenon.REFINE) is ChainMode.NARROW
    assert chain_mode_of(Phenomenon.VALUE_FILTER) is ChainMode.VALUE_NARROW
    assert chain_mode_of(Phenomenon.COUNT) is ChainMode.AGGREGATE
    for agg in (Phenomenon.AGG_SUM, Phenomenon.AGG_AVG, Phenomenon.AGG_MAX):
        assert chain_mode_of(agg) is ChainMode.AGG_NUMERIC
    assert chain_mode_of(Phenomenon.EXPAND) is ChainMode.EXPAND
    assert chain_mode_of(Phenomenon.PIVOT) is ChainMode.PIVOT
    assert chain_mode_of(Phenomenon.CONTRAST) is ChainMode.CONTRAST
    assert chain_mode_of(Phenomenon.TOPIC_SHIFT) is ChainMode.TOPIC_SHIFT
    assert {chain_mode_of(p) for p in Phenomenon} == set(ChainMode) - {ChainMode.NONE}


def test_categories_and_dependency() -> None:
    sizes = {c: sum(1 for p in Phenomenon if category_of(p) is c) for c in PhenomenonCategory}
    assert sizes == {
        PhenomenonCategory.NAVIGATION: 3,
        PhenomenonCategory.AGGREGATION: 4,
        PhenomenonCategory.FILTERING: 4,
        PhenomenonCategory.DISCOURSE: 2,
    }
    assert {
        Phenomenon.COUNT,
        Phenomenon.AGG_SUM,
        Phenomenon.AGG_AVG,
        Phenomenon.AGG_MAX,
    } == AGGREGATION_PHENOMENA
    assert len(CHAIN_DEPENDENT_MODES) == 7
    assert not is_chain_dependent(ChainMode.NONE)
    assert not is_chain_dependent(ChainMode.TOPIC_SHIFT)
    assert all(
        is_chain_dependent(chain_mode_of(p)) for p in Phenomenon if p is not Phenomenon.TOPIC_SHIFT
    )
