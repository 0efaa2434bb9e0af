"""Merchant Harbor: a central Invoice bridging traders, buyers and storehouses (CypherTurn appendix D.1).

Topology. Every Invoice is ISSUED_BY one trader, ISSUED_TO one buyer and
DISPATCHED_FROM one storehouse, and INCLUDES one or two cargo lots; the invoice
is the only node where the three parties meet. Around it, traders SUPPLY cargo
and OPERATE_IN territories, storehouses HOLD cargo and are DOCKED_IN
territories. Invoices mostly carry cargo their own trader supplies, dispatched
from a storehouse that holds it, so the outer paths reconverge on the invoice.
Every relationship type carries numeric properties (costs, prices, quantities,
days, rates) — the richest edge properties of the seven worlds — and an
invoice's ``gold_value`` is the sum of ``quantity * unit_price`` over its
INCLUDES edges.
"""

from __future__ import annotations

import datetime as dt
import random

from cypherturn.graph import GraphData
from cypherturn.worlds._names import pick
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    lognormal_int,
    prefer,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["MerchantHarbor"]

# Declarations and vocabulary: data/merchant_harbor.yaml; the topology rules are the code below.
_DATA = load_world_data("merchant_harbor")
SPEC = _DATA.spec
_GOODS = _DATA.groups("goods")

_PERISHABLE = {"spice": (180, 720), "grain": (60, 365), "wine": (365, 1800), "fish": (14, 120)}
_STATUSES = ("paid", "pending", "overdue", "disputed")
_FIRST_YEAR, _LAST_YEAR = 1401, 1412


class MerchantHarbor(SyntheticWorld):
    """The Merchant Harbor world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build territories, traders, storehouses and cargo, then the invoices around them."""
        b = self.builder(rng, source, scale)

        territories = [b.node("Territory") for _ in range(b.count("Territory"))]
        traders = [b.node("Trader") for _ in range(b.count("Trader"))]
        links = spread(rng, territories, max(len(territories), round(len(traders) * 1.4)))
        seen: set[tuple[int, int]] = set()
        for trader, territory in zip(spread(rng, traders, len(links)), links, strict=True):
            if (trader, territory) in seen:
                continue
            seen.add((trader, territory))
            b.rel(
                "OPERATES_IN",
                trader,
                territory,
                since_year=rng.randint(1370, _LAST_YEAR),
                license_fee=lognormal_int(150, 0.6, step=5)(rng),
            )
        storehouses = []
        for territory in spread(rng, territories, b.count("Storehouse")):
            store = b.node("Storehouse", territory=b.get(territory, "name"))
            b.rel("DOCKED_IN", store, territory, berths=rng.randint(1, 12))
            storehouses.append(store)

        cost: dict[int, float] = {}
        supplier: dict[int, int] = {}
        holders: dict[int, list[int]] = {}
        supplied: dict[int, list[int]] = {}
        categories = list(_GOODS)
        for trader, store in zip(
            spread(rng, traders, b.count("Cargo")),
            spread(rng, storehouses, b.count("Cargo")),
            strict=True,
        ):
            category = categories[rng.randrange(len(categories))]
            goods = pick(rng, _GOODS[category])
            shelf = _PERISHABLE.get(category)
            cargo = b.node(
                "Cargo",
                name=b.fresh("Cargo", _DATA.text("cargo", goods=goods)),
                category=category,
                spoilage_days=rng.randint(*shelf) if shelf else None,
            )
            cost[cargo] = round(rng.lognormvariate(2.3, 0.8), 2)
            b.rel(
                "SUPPLIES",
                trader,
                cargo,
                unit_cost=cost[cargo],
                lead_days=rng.randint(2, 45),
                min_order=rng.choice((1, 5, 10, 20, 50)),
            )
            b.rel(
                "HOLDS",
                store,
                cargo,
                quantity=lognormal_int(200, 0.9)(rng),
                shelf_days=rng.randint(1, shelf[0] if shelf else 400),
            )
            supplier[cargo] = trader
            supplied.setdefault(trader, []).append(cargo)
            holders.setdefault(cargo, []).append(store)

        buyers = []
        for territory in spread(rng, territories, b.count("Buyer")):
            buyers.append(b.node("Buyer", territory=b.get(territory, "name")))
        self._invoices(
            b,
            rng,
            b.count("Invoice"),
            traders,
            buyers,
            storehouses,
            list(supplier),
            supplied,
            holders,
            cost,
        )
        return b.finish(SPEC.info.name)

    @staticmethod
    def _invoices(
        b: GraphBuilder,
        rng: random.Random,
        n: int,
        traders: list[int],
        buyers: list[int],
        storehouses: list[int],
        cargos: list[int],
        supplied: dict[int, list[int]],
        holders: dict[int, list[int]],
        cost: dict[int, float],
    ) -> None:
        issued = sorted(
            dt.date(_FIRST_YEAR, 1, 1) + dt.timedelta(days=rng.randint(0, 4_300)) for _ in range(n)
        )
        for number, (trader, buyer, day) in enumerate(
            zip(spread(rng, traders, n), spread(rng, buyers, n), issued, strict=True), start=1
        ):
            own = supplied.get(trader, [])
            lines = rng.choice((1, 1, 2))
            items = [prefer(rng, own, cargos, 0.8) for _ in range(lines)]
            items = list(dict.fromkeys(items))
            priced = [
                (cargo, rng.randint(1, 60), round(cost[cargo] * rng.uniform(1.15, 2.1), 2))
                for cargo in items
            ]
            gold = round(sum(quantity * price for _, quantity, price in priced))
            status = rng.choices(_STATUSES, weights=(0.55, 0.25, 0.12, 0.08))[0]
            terms = rng.choice((14, 30, 30, 60, 90))
            invoice = b.node(
                "Invoice",
                name=f"INV-{day.year}-{number:04d}",
                trade_year=day.year,
                issued_on=day,
                gold_value=gold,
                status=status,
                due_on=None if status == "paid" else day + dt.timedelta(days=terms),
            )
            b.rel(
                "ISSUED_BY",
                invoice,
                trader,
                commission_rate=round(rng.uniform(0.01, 0.12), 3),
                payment_terms_days=terms,
            )
            b.rel(
                "ISSUED_TO",
                invoice,
                buyer,
                credit_days=terms,
                discount_pct=round(rng.choice((0.0, 0.0, 2.5, 5.0, 7.5, 10.0)), 1),
            )
            stocked = holders.get(items[0], [])
            store = (
                stocked[0]
                if stocked and rng.random() < 0.75
                else storehouses[rng.randrange(len(storehouses))]
            )
            b.rel(
                "DISPATCHED_FROM",
                invoice,
                store,
                delivery_days=rng.randint(1, 30),
                freight_cost=round(gold * rng.uniform(0.02, 0.08), 2),
                insured_value=round(gold * rng.uniform(0.8, 1.2)),
            )
            for cargo, quantity, price in priced:
                b.rel(
                    "INCLUDES",
                    invoice,
                    cargo,
                    quantity=quantity,
                    unit_price=price,
                    tax_rate=rng.choice((0.05, 0.08, 0.1, 0.12)),
                )
