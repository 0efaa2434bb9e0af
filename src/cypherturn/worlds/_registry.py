"""Name -> world lookup: a :class:`~cypherturn._registry.Registry` of world factories.

The built-in entries are ``"module:Class"`` strings, imported on first use so
`cypherturn --help` builds nothing; :func:`register_world` adds a world (a
class or any zero-argument factory, or such a string) under a new name, and it
is then known to ``cypherturn load``, ``worlds list``, ``bench build`` and the API.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from cypherturn._registry import Registry
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.worlds._base import World

__all__ = [
    "WorldFactory",
    "get_world",
    "list_worlds",
    "register_world",
    "registered_world",
    "unregister_world",
    "world_names",
]

WorldFactory = Callable[[], World]
"""A zero-argument callable returning a :class:`World` (a world class is one)."""

_WORLDS: Registry[str | WorldFactory] = Registry("world")
for _name, _target in {
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
}.items():
    _WORLDS.register(_name, _target)


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def register_world(name: str, world: str | WorldFactory, *, replace: bool = False) -> None:
    """Make ``world`` buildable and loadable as ``name``.

    Args:
        name: lower-case, ``_`` between words (``toy_shop``); lookups ignore case and ``-``.
        world: a :class:`World` class or factory, or ``"module:Class"`` imported on first use.
        replace: replace an existing entry of that name.

    Raises:
        ConfigError: the name is not in canonical form, or taken and ``replace`` is false.
    """
    if name != _key(name):
        raise ConfigError(f"world name {name!r} must be lower-case with '_' ({_key(name)!r})")
    _WORLDS.register(name, world, replace=replace)


def unregister_world(name: str) -> None:
    """Remove the world ``name``.

    Raises:
        ConfigError: no world has that name.
    """
    _WORLDS.unregister(_key(name))


@contextmanager
def registered_world(name: str, world: str | WorldFactory) -> Iterator[None]:
    """Register ``world`` as ``name`` for the duration of a ``with`` block."""
    register_world(name, world)
    try:
        yield
    finally:
        unregister_world(name)


def world_names() -> list[str]:
    """Registered world names, in registration order."""
    return list(_WORLDS.names())


def get_world(name: str) -> World:
    """Look a world up by name (case-insensitive, ``-`` and ``_`` alike).

    Raises:
        DatasetError: no world has that name; the message lists the known ones.
    """
    key = _key(name)
    if key not in _WORLDS:
        raise DatasetError(f"unknown graph {name!r}; known graphs: {', '.join(_WORLDS.names())}")
    target = _WORLDS.get(key)
    if isinstance(target, str):
        module_name, _, class_name = target.partition(":")
        factory: WorldFactory = getattr(importlib.import_module(module_name), class_name)
    else:
        factory = target
    return factory()


def list_worlds() -> list[World]:
    """Every registered world, in registration order."""
    return [get_world(name) for name in _WORLDS.names()]
