"""The `cypherturn` command line: thin wiring over the public API, one module per command group.

`app` has every command on import; `main` is the console-script entry point.
"""

from cypherturn.cli._commands import app
from cypherturn.cli._main import main

__all__ = ["app", "main"]
