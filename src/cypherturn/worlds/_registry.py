"""Name -> world lookup over a declarative catalogue. Add a world with one line in ``_CATALOGUE``."""

from __future__ import annotations

import importlib

from cypherturn.errors import DatasetError
from cypherturn.worlds._base import World

__all__ = ["get_world", "list_worlds", "world_names"]

# name -> "module:class"; imported on first use so `cypherturn --help` builds nothing.
_CATALOGUE: dict[str, str] = {
    "pole": "cypherturn.worlds._pole:PoleDataset",
    "healthcare": "cypherturn.worlds._healthcare:HealthcareDataset",
    "ancient_empire": "cypherturn.worlds._ancient_empire:AncientEmpire",
    "magic_academy": "cypherturn.worlds._magic_academy:MagicAcademy",
    "ocean_kingdom": "cypherturn.worlds._ocean_kingdom:OceanKingdom",
    "stellar_colony": "cypherturn.worlds._stellar_colony:StellarColony",
    "arcane_archive": "cypherturn.worlds._arcane_archive:ArcaneArchive",
    "celestial_court": "cypherturn.worlds._celestial_court:CelestialCourt",
    "merchant_harbor": "cypherturn.worlds._merchant_harbor:MerchantHarbor",
    "fraud": "cypherturn.worlds._fraud:Fraud",
}


def world_names() -> list[str]:
    """Registered world names, in catalogue order."""
    return list(_CATALOGUE)


def get_world(name: str) -> World:
    """Look a world up by name (case-insensitive, ``-`` and ``_`` alike).

    Raises:
        DatasetError: no world has that name; the message lists the known ones.
    """
    key = name.strip().lower().replace("-", "_")
    target = _CATALOGUE.get(key)
    if target is None:
        raise DatasetError(f"unknown graph {name!r}; known graphs: {', '.join(_CATALOGUE)}")
    module_name, _, class_name = target.partition(":")
    world: World = getattr(importlib.import_module(module_name), class_name)()
    return world


def list_worlds() -> list[World]:
    """Every registered world, in catalogue order."""
    return [get_world(name) for name in _CATALOGUE]
