"""The `cypherturn` command line: thin wiring over the public API, one module per command group."""

from cypherturn.cli._app import app, main

__all__ = ["app", "main"]
