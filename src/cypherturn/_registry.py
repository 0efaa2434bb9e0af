"""The one registry type behind cypherturn's extension points (strategies, engine URL schemes,
protocol variants, metrics).

A registry maps names to items in registration order; the built-ins register
themselves when their module is imported, and a user adds one more with the
extension point's ``register_*`` function. An unknown name is a
:class:`~cypherturn.errors.ConfigError` that lists the known ones.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from cypherturn.errors import ConfigError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Named items of one kind, in registration order.

    Args:
        kind: what the items are, for messages (``"strategy"``, ``"metric"``).
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._lock = threading.Lock()

    def register(self, name: str, item: T, *, replace: bool = False) -> T:
        """Add ``item`` under ``name`` and return it.

        Raises:
            ConfigError: the name is empty, or taken and ``replace`` is false.
        """
        if not name:
            raise ConfigError(f"a {self.kind} needs a non-empty name")
        with self._lock:
            if name in self._items and not replace:
                raise ConfigError(f"{self.kind} {name!r} is already registered")
            self._items[name] = item
        return item

    def unregister(self, name: str) -> T:
        """Remove and return the item of ``name``.

        Raises:
            ConfigError: no item has that name.
        """
        with self._lock:
            if name not in self._items:
                raise self.unknown(name)
            return self._items.pop(name)

    @contextmanager
    def registered(self, name: str, item: T) -> Iterator[T]:
        """Register ``item`` for the duration of a ``with`` block (tests, scoped plugins)."""
        self.register(name, item)
        try:
            yield item
        finally:
            self.unregister(name)

    def get(self, name: str) -> T:
        """The item of ``name``.

        Raises:
            ConfigError: unknown name; the message lists the known ones.
        """
        try:
            return self._items[name]
        except KeyError:
            raise self.unknown(name) from None

    def unknown(self, name: str, hint: str = "") -> ConfigError:
        """The error for an unknown ``name``: it lists the known names, then ``hint``."""
        known = ", ".join(self._items) or "none"
        return ConfigError(f"unknown {self.kind} {name!r}; known: {known}{hint}")

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._items)

    def items(self) -> tuple[T, ...]:
        """The registered items, in registration order."""
        return tuple(self._items.values())

    def __contains__(self, name: object) -> bool:
        return name in self._items
