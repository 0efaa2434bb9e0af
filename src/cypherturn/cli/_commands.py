"""The complete app: every command module registered on the root app.

The top-level commands attach themselves to `app` with ``@app.command`` when their
module is imported, so importing them here is the registration; the command groups
are added as sub-apps. `cypherturn.cli` imports this module, so its `app` is complete.
"""

from cypherturn.cli import _ask, _bench_ask, _chat, _doctor, _learn, _load, _mcp, _report, _view  # noqa: F401  (importing registers the commands)
from cypherturn.cli._app import app
from cypherturn.cli._bench import bench_app
from cypherturn.cli._models import models_app
from cypherturn.cli._qer import qer_app
from cypherturn.cli._worlds import worlds_app

__all__ = ["app"]

app.add_typer(worlds_app)
app.add_typer(bench_app)
app.add_typer(qer_app)
app.add_typer(models_app)
