"""Imports every command module so each registers its commands on the app."""

from cypherturn.cli import _ask, _load  # noqa: F401
