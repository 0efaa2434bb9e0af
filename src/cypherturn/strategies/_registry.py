"""The strategy registry: every strategy by name, the built-ins registered first.

The built-ins are ``single``, ``is`` and ``ras`` (the loop of
``strategies/_scaling.py``) and ``ras+`` (``strategies/_grounded.py``); a new
strategy is one :func:`register_strategy` call. This module imports both
strategies and neither imports it, so the attempt machinery and the grounded
strategy built on it stay one-way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from cypherturn._registry import Registry
from cypherturn.errors import ConfigError
from cypherturn.strategies._grounded import GroundedStrategy
from cypherturn.strategies._records import GroundingParts
from cypherturn.strategies._scaling import ScalingStrategy, Strategy, TokenCallback

__all__ = [
    "GROUNDED",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "StrategyFactory",
    "get_strategy",
    "register_strategy",
    "strategy_names",
]


class StrategyFactory(Protocol):
    """Builds a registered strategy: ``factory(options, on_token=...)``.

    ``options`` is the text after ``NAME:`` in a strategy name (``ras+:check,values``
    gives ``"check,values"``), ``None`` when the name has no ``:``. A factory that
    takes no options raises :class:`ConfigError` for any; the strategy it returns
    names itself in results (``Strategy.name``).
    """

    def __call__(self, options: str | None, *, on_token: TokenCallback | None) -> Strategy:
        """The strategy; ConfigError for options it does not take."""
        ...


STRATEGIES: Registry[StrategyFactory] = Registry("strategy")
"""Every strategy by name: the built-ins, then those added by :func:`register_strategy`."""


def register_strategy(name: str, factory: StrategyFactory, *, replace: bool = False) -> None:
    """Make a strategy available by name to :func:`get_strategy` (and so to the API and CLI).

    Args:
        name: the name (no ``:``; the part after one goes to the factory as options).
        factory: builds the strategy (:class:`StrategyFactory`).
        replace: allow replacing a registered strategy of that name.

    Raises:
        ConfigError: the name is empty or holds ``:``, or is taken and ``replace`` is false.
    """
    if ":" in name:
        raise ConfigError(f"a strategy name holds no ':', not {name!r}")
    STRATEGIES.register(name, factory, replace=replace)


def strategy_names() -> tuple[str, ...]:
    """The registered strategy names, in registration order (built-ins first)."""
    return STRATEGIES.names()


def _scaling(strategy: ScalingStrategy) -> StrategyFactory:
    def build(options: str | None, *, on_token: TokenCallback | None) -> Strategy:
        if options is not None:
            raise ConfigError(f"strategy {strategy.name!r} takes no options, not {options!r}")
        return replace(strategy, on_token=on_token)

    return build


def _grounded(options: str | None, *, on_token: TokenCallback | None) -> Strategy:
    """``ras+`` (the default parts), ``ras+:<part>,<part>`` (only those), ``ras+:-<part>,+<part>``."""
    if options is None:
        return GroundedStrategy(GroundingParts(), on_token=on_token)
    return GroundedStrategy(GroundingParts.parse(options), on_token=on_token)


GROUNDED = "ras+"
"""Name of the grounded strategy (the default parts: every part but ``vote``);
``ras+:<part>,<part>`` turns on only the listed parts, ``ras+:-<part>,+<part>`` drops
parts from the default or adds them (``ras+:+vote``, ``ras+:-greedy``)."""

register_strategy(
    "single", _scaling(ScalingStrategy(name="single", reflect=False, single_pass=True))
)
register_strategy("is", _scaling(ScalingStrategy(name="is", reflect=False)))
register_strategy("ras", _scaling(ScalingStrategy(name="ras", reflect=True)))
register_strategy(GROUNDED, _grounded)

STRATEGY_NAMES = strategy_names()
"""The built-in strategy names (plus the ``ras+:<parts>`` forms); :func:`strategy_names`
also lists those registered later."""


def get_strategy(name: str, *, on_token: TokenCallback | None = None) -> Strategy:
    """The strategy with this name, from the registry.

    Args:
        name: a registered name, or ``NAME:<options>`` for a strategy that takes
            options. Built-ins: ``single`` (one attempt), ``is`` (Independent
            Scaling, Algorithm 1), ``ras`` (Reflection-Augmented Scaling,
            Algorithm 2), ``ras+`` (RAS grounded in the schema and the data,
            every part but ``vote`` on), ``ras+:<part>[,<part>...]`` with only
            the listed parts on (parts: ``check``, ``values``, ``repair``,
            ``grammar``, ``select``, ``feedback``, ``greedy``, ``vote``, ``link``,
            ``confident``), or ``ras+:-<part>,+<part>...`` with the default parts
            less (``-``) or plus (``+``) those.
        on_token: called with each generated piece of text, for streaming display.

    Returns:
        The strategy.

    Raises:
        ConfigError: unknown name (the message lists the registered ones), or
            options the strategy does not take (an unknown ras+ part).
    """
    base, sep, options = name.partition(":")
    if base not in STRATEGIES:
        raise STRATEGIES.unknown(name, f" (or {GROUNDED}:<parts>)")
    return STRATEGIES.get(base)(options if sep else None, on_token=on_token)
