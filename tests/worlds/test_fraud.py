"""Fraud: PaySim-style structure, exact counts up to the public size, and the planted fraud rings."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from world_graphs import Indexed, built

from cypherturn.worlds._fraud import PUBLIC_SCALE, FraudSizes

SUBTYPES = {"CashIn", "CashOut", "Debit", "Payment", "Transfer"}
TARGET = {
    "Payment": "Merchant",
    "CashIn": "Merchant",
    "CashOut": "Merchant",
    "Debit": "Bank",
    "Transfer": "Client",
}


def counts(sizes: FraudSizes) -> tuple[int, int]:
    identifiers = 3 * sizes.clients - sum(sizes.shared)
    nodes = sizes.clients + sizes.merchants + sizes.banks + identifiers + sizes.transactions
    return nodes, 3 * sizes.transactions + 4 * sizes.clients


def test_public_scale_has_the_public_graph_counts() -> None:
    assert counts(FraudSizes.at(PUBLIC_SCALE)) == (332_973, 980_857)


@pytest.mark.parametrize("scale", [1.0, 10.0, 0.2])
def test_counts_follow_the_size_formula(scale: float) -> None:
    data = built("fraud", 0, scale)
    assert (len(data.nodes), len(data.relationships)) == counts(FraudSizes.at(scale))


def test_transactions_have_one_subtype_and_the_right_target() -> None:
    data = built("fraud")
    g = Indexed(data)
    for tx in g.keys("Transaction"):
        (subtype,) = set(g.labels[tx][1:])
        assert subtype in SUBTYPES
        (target,) = g.out["TO"][tx]
        assert g.label[target] == TARGET[subtype]
        assert len(g.into["PERFORMED"][tx]) == 1


def test_each_client_chain_covers_its_transactions_in_time_order() -> None:
    data = built("fraud")
    g = Indexed(data)
    step = {k: g.props[k]["globalStep"] for k in g.keys("Transaction")}
    assert sorted(step.values()) == list(range(len(step)))
    assert all(g.props[k]["ts"] <= g.props[j]["ts"] for k in step for j in g.out["NEXT"][k])
    for client in g.keys("Client"):
        (first,) = g.out["FIRST_TX"][client]
        (last,) = g.out["LAST_TX"][client]
        walk = [first]
        while g.out["NEXT"][walk[-1]]:
            (following,) = g.out["NEXT"][walk[-1]]
            walk.append(following)
        assert walk[-1] == last
        assert sorted(walk, key=step.__getitem__) == walk
        assert set(walk) == set(g.out["PERFORMED"][client])


def test_fraud_rings_answer_the_ras_fraud_questions() -> None:
    data = built("fraud")
    g = Indexed(data)
    fraud = {k for k in g.keys("Transaction") if g.props[k]["fraud"]}
    assert fraud  # fraud_easy
    per_client = Counter(c for tx in fraud for c in g.into["PERFORMED"][tx])
    assert any(n > 2 for n in per_client.values())  # fraud_medium
    sent: dict[tuple[int, int], int] = defaultdict(int)
    for tx in g.keys("Transaction"):
        if "Transfer" in g.labels[tx]:
            (who,) = g.into["PERFORMED"][tx]
            (whom,) = g.out["TO"][tx]
            sent[(who, whom)] += 1
    mutual = {frozenset(p) for p in sent if (p[1], p[0]) in sent}
    both_fraud = [p for p in mutual if all(per_client[c] for c in p)]
    assert both_fraud  # fraud_hard
    assert len(fraud) < 0.05 * len(step_keys := g.keys("Transaction")) and step_keys


def test_ring_members_share_identifiers_and_mules_cash_out() -> None:
    data = built("fraud")
    g = Indexed(data)
    holders = Counter(
        end for r in data.relationships if r.type.startswith("HAS_") for end in [r.end]
    )
    shared = [k for k, n in holders.items() if n > 1]
    assert len(shared) >= 3
    mules = [k for k in g.keys("Client") if "Mule" in g.labels[k]]
    assert mules
    cash_outs = [
        tx
        for m in mules
        for tx in g.out["PERFORMED"][m]
        if "CashOut" in g.labels[tx] and g.props[tx]["fraud"]
    ]
    assert cash_outs


def test_identifiers_are_fictional() -> None:
    g = Indexed(built("fraud"))
    assert all(g.props[k]["ssn"].startswith("9") for k in g.keys("SSN"))
    assert all(
        g.props[k]["email"].rsplit(".", 1)[1] in {"example", "test"} for k in g.keys("Email")
    )
