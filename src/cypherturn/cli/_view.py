"""`cypherturn view`: one self-contained HTML page per run directory, written or served."""

from __future__ import annotations

from pathlib import Path

import typer

from cypherturn.cli._app import app, console, err_console
from cypherturn.errors import ConfigError, DatasetError

__all__ = ["view"]


@app.command()
def view(
    run_dirs: list[Path] = typer.Argument(
        ..., help="Run directories: bench run, qer run or ask-accuracy output."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Folder to write the pages to (N-NAME.html each); default RUN_DIR/view.html.",
    ),
    serve: bool = typer.Option(
        False, "--serve", help="Serve the pages on localhost instead of writing them."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (--serve)."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="TCP port (--serve; 0: any)."),
    bench: Path | None = typer.Option(
        None,
        "--bench",
        help="The benchmark file the runs played: turns then show the utterance and gold rows.",
    ),
) -> None:
    """Browse runs: systems, sessions, turns, actions, scores, with filters and the summary table."""
    from cypherturn.viewer import PAGE_FILE, page_name, page_server, read_page, write_page

    # Every directory is read before anything is written: a bad one (missing, not a run, a
    # malformed line named with its line) is one error line, exit 1, and no partial output.
    pages = [read_page(path, bench=bench) for path in run_dirs]
    if serve:
        try:
            server = page_server(pages, host, port)
        except OSError as e:
            raise ConfigError(f"cannot listen on {host}:{port}: {e.strerror or e}") from e
        bound_host, bound_port = server.server_address[:2]
        err_console.print(
            f"serving {len(pages)} run page(s) at http://{bound_host!s}:{bound_port}/ (Ctrl-C stops it)",
            highlight=False,
        )
        try:
            server.serve_forever()
        finally:
            server.server_close()
        return
    for index, (path, page) in enumerate(zip(run_dirs, pages, strict=True), start=1):
        target = out / page_name(index, page) if out is not None else path / PAGE_FILE
        try:
            written = write_page(page, target)
        except OSError as e:
            raise DatasetError(f"cannot write {target}: {e.strerror or e}") from e
        sessions = sum(len(g.items) for g in page.groups)
        console.print(f"{written}  ({page.kind}: {len(page.groups)} groups, {sessions} items)")
