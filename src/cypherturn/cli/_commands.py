"""Imports every command module so each registers its commands on the app."""

from cypherturn.cli import _ask, _bench_ask, _chat, _doctor, _load, _mcp, _report, _view  # noqa: F401  (importing registers the commands)
from cypherturn.cli._app import app
from cypherturn.cli._bench import bench_app
from cypherturn.cli._models import models_app
from cypherturn.cli._qer import qer_app
from cypherturn.cli._worlds import worlds_app

app.add_typer(worlds_app)
app.add_typer(bench_app)
app.add_typer(qer_app)
app.add_typer(models_app)
