"""Golden digests: every world builds exactly the graph it built when the digests were recorded.

Recorded before the world declarations moved from code to data files
(issue 13), and kept so that any later change to a world's output is a
deliberate one: for every world, the SHA-256 of its catalogue entry and
declared schema (what the benchmark builder draws its vocabulary from), and
for every synthetic world and a few ``(seed, scale)`` pairs, the SHA-256 of a
canonical dump of the generated graph (every node and relationship in
insertion order, property values tagged with their Python type, so ``1``,
``1.0`` and ``True`` differ). The benchmark builder sees nothing else of a
world: the graph it loads and the schema it is given.

To record new digests after an intended change:
``python tests/worlds/test_golden_digests.py --write``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cypherturn.graph import GraphData
from cypherturn.worlds import get_world, world_names

GOLDEN = Path(__file__).with_name("golden_digests.json")
BUILDS: tuple[tuple[int, float], ...] = ((0, 1.0), (3, 1.0), (7, 0.5), (1, 2.0))
"""``(seed, scale)`` pairs built for each synthetic world (Fraud: the first two only)."""


def _tagged(value: Any) -> Any:
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, float):
        return ["f", repr(value)]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, dt.date):
        return ["d", value.isoformat()]
    if isinstance(value, list | tuple):
        return ["l", [_tagged(v) for v in value]]
    raise TypeError(f"unexpected property value {value!r}")


def graph_digest(data: GraphData) -> str:
    """SHA-256 of a canonical dump of ``data`` (records in order, typed values, sorted keys)."""
    digest = hashlib.sha256()

    def feed(item: Any) -> None:
        digest.update(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode())
        digest.update(b"\n")

    feed([data.name, data.source, [list(index) for index in data.indexes]])
    for node in data.nodes:
        props = {k: _tagged(v) for k, v in sorted(node.properties.items())}
        feed(["n", node.key, list(node.labels), props])
    for rel in data.relationships:
        props = {k: _tagged(v) for k, v in sorted(rel.properties.items())}
        feed(["r", rel.start, rel.end, rel.type, props])
    return digest.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def world_digests(name: str) -> dict[str, str]:
    """Digests of world ``name``: its info, its declared schema and its builds."""
    world = get_world(name)
    digests = {
        "info": _sha(world.info.model_dump_json()),
        "declared_schema": _sha(world.declared_schema().model_dump_json()),
    }
    if world.info.kind == "synthetic":
        builds = BUILDS[:2] if name == "fraud" else BUILDS
        for seed, scale in builds:
            digests[f"graph seed={seed} scale={scale:g}"] = graph_digest(
                world.build(seed=seed, scale=scale)
            )
    return digests


RECORDED: dict[str, dict[str, str]] = (
    json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
)


def test_every_world_has_recorded_digests() -> None:
    assert set(RECORDED) == set(world_names())


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_world_output_matches_its_golden_digests(name: str) -> None:
    assert world_digests(name) == RECORDED[name]


def test_digest_sees_a_one_value_change() -> None:
    data = get_world("magic_academy").build(seed=0)
    before = graph_digest(data)
    node = data.nodes[5]
    key = next(
        k for k, v in node.properties.items() if isinstance(v, int) and not isinstance(v, bool)
    )
    node.properties[key] = float(node.properties[key])
    assert graph_digest(data) != before


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/worlds/test_golden_digests.py --write")
    recorded = {name: world_digests(name) for name in world_names()}
    GOLDEN.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({len(recorded)} worlds)")
