"""`cypherturn mcp`: serve one graph to assistants over MCP (stdio, or streamable HTTP).

Once serving, the command ends through :class:`~cypherturn.mcp_server._shutdown.Shutdown`:
SIGINT or SIGTERM stop it within about 1.5 s whatever is in flight (130 or 143),
and the end of a stdio session exits 0, both after the engine's lease is dropped.
"""

from __future__ import annotations

import contextlib
import sys

import typer

from cypherturn import api
from cypherturn.cli._app import app, err_console
from cypherturn.cli._background import in_background
from cypherturn.cli._options import (
    BaseUrlOpt,
    DataPathOpt,
    EngineOpt,
    MaxSecondsOpt,
    ModelOptions,
    max_seconds,
    model_options,
)
from cypherturn.errors import ConfigError
from cypherturn.graph import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S
from cypherturn.models import load_model

__all__ = ["mcp"]


@app.command()
def mcp(
    graph: str = typer.Option(
        api.DEFAULT_GRAPH,
        "--graph",
        "-g",
        help="Graph to serve; a known world is loaded on first use.",
    ),
    engine: EngineOpt = None,
    model: ModelOptions = "default",
    base_url: BaseUrlOpt = None,
    no_ask: bool = typer.Option(
        False, "--no-ask", help="Serve without a model: no ask tool, nothing loaded."
    ),
    budget: int = typer.Option(5, "-n", "--budget", min=1, max=10, help="Default budget of ask."),
    seconds: MaxSecondsOpt = api.DEFAULT_MAX_SECONDS,
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT_S, "--timeout", min=0.001, help="Longest a query may run, seconds."
    ),
    row_cap: int = typer.Option(
        DEFAULT_ROW_CAP, "--row-cap", min=1, help="Most rows a query returns."
    ),
    path: DataPathOpt = None,
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (--http)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port (--http)."),
) -> None:
    """Serve a graph over MCP: get_schema, search_values, read_cypher (read-only), ask. No write tool."""
    try:
        from cypherturn.mcp_server import build_server, serve
    except ImportError as e:
        raise ConfigError(
            f"the MCP server needs the mcp SDK ({e}); install it with: pip install 'cypherturn[mcp]'"
        ) from None
    from cypherturn.mcp_server import GraphService, Shutdown

    options = model_options(model, base_url)
    # On stdio, stdout is the protocol channel: anything printed while the graph
    # loads or the model starts would corrupt the first messages.
    quiet = contextlib.nullcontext() if http else contextlib.redirect_stdout(sys.stderr)
    with contextlib.ExitStack() as stack:
        with quiet:
            opened = stack.enter_context(api.connect(graph, engine_url=engine, data_path=path))
            chat_model = None if no_ask else load_model(model, **options)
            service = GraphService(
                opened,
                model=chat_model,
                engine_url=engine,
                timeout_s=timeout,
                row_cap=row_cap,
                budget=budget,
                max_seconds=max_seconds(seconds),
            )
            service.index()
        stack.callback(service.close)
        server = build_server(service, with_ask=not no_ask)
        shutdown = Shutdown(
            announce=lambda line: err_console.print(f"cypherturn mcp: {line}", highlight=False)
        )
        shutdown.install()
        # The ask tool's prompt prefix is evaluated (or read from disk) while the
        # client connects; a stop of the server, or its end, aborts the warm-up.
        warming = in_background(service.warm, "warming the ask prompt prefix")
        shutdown.on_stop(warming.abort)
        stack.callback(warming.abort)
        if http:
            err_console.print(
                f"cypherturn MCP server on graph {graph}: http://{host}:{port}/mcp (Ctrl-C stops it)",
                highlight=False,
            )
            serve(server, transport="streamable-http", host=host, port=port, shutdown=shutdown)
        else:
            serve(server, transport="stdio", shutdown=shutdown)
        stack.close()
        # Not a normal return: threads abandoned in flight (an engine call, the SDK's
        # stdin reader) would hold the interpreter's exit until they end.
        shutdown.finish(0)
