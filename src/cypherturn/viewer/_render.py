"""Render run pages to self-contained HTML (Jinja2, autoescaped), write them, or serve them.

The page has no external reference: its CSS and JavaScript are inline, it
loads no font, image or script from anywhere, so it opens offline and from a
file. Every value is escaped by Jinja2's autoescaping (HTML text and
attribute values alike); the page's only script reads the DOM and never
injects markup.
"""

from __future__ import annotations

import html
import http.server
import re
from collections.abc import Sequence
from pathlib import Path

import jinja2

from cypherturn.reports import fmt
from cypherturn.viewer._model import RunPage

__all__ = ["PAGE_FILE", "page_name", "page_server", "render_index", "render_page", "write_page"]

PAGE_FILE = "view.html"
"""The page's file name inside a run directory (when no ``--out`` is given)."""

_FACETS = ("world", "phenomenon", "persona", "outcome")

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("cypherturn.viewer", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render_page(page: RunPage) -> str:
    """The HTML of one run page.

    Args:
        page: from :func:`~cypherturn.viewer.read_page`.

    Returns:
        A complete, self-contained HTML document.
    """
    facets = [(facet, page.facet_values(facet)) for facet in _FACETS]
    return _ENV.get_template("run.html.j2").render(page=page, facets=facets, fmt=fmt)


def write_page(page: RunPage, out: Path) -> Path:
    """Write ``page`` to ``out`` (parents created) and return the path.

    Raises:
        OSError: the file cannot be written.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_page(page), encoding="utf-8")
    return out


def page_name(index: int, page: RunPage) -> str:
    """A URL-safe file name for the ``index``-th page: ``1-<run dir name>.html``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(page.title).name) or "run"
    return f"{index}-{stem}.html"


def render_index(pages: Sequence[RunPage]) -> str:
    """A small self-contained page linking to each run page (relative links only)."""
    esc = html.escape
    links = "".join(
        f"<li><a href='{esc(page_name(i, p))}'>{esc(p.title)}</a> ({esc(p.kind)})</li>"
        for i, p in enumerate(pages, start=1)
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>cypherturn runs</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:1.5em}</style></head>"
        f"<body><h1>cypherturn runs</h1><ul>{links}</ul></body></html>"
    )


def page_server(pages: Sequence[RunPage], host: str, port: int) -> http.server.ThreadingHTTPServer:
    """An HTTP server (not yet serving) for an index at ``/`` and each page under its name.

    Pages are rendered once, up front; the server answers GET and HEAD only,
    and 404 for anything else it does not hold.

    Args:
        pages: the run pages.
        host: interface to bind (``127.0.0.1`` keeps it on this machine).
        port: TCP port; 0 picks a free one (read it from ``server.server_address``).

    Returns:
        The bound server; call ``serve_forever()``, then ``server_close()``.

    Raises:
        OSError: the address cannot be bound.
    """
    documents = {"/": render_index(pages).encode("utf-8")}
    for i, page in enumerate(pages, start=1):
        documents["/" + page_name(i, page)] = render_page(page).encode("utf-8")

    class Handler(http.server.BaseHTTPRequestHandler):
        def _send(self, body: bool) -> None:
            document = documents.get(self.path.split("?", 1)[0])
            if document is None:
                self.send_error(404, "no such page")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(document)))
            self.end_headers()
            if body:
                self.wfile.write(document)

        def do_GET(self) -> None:
            self._send(body=True)

        def do_HEAD(self) -> None:
            self._send(body=False)

        def log_message(self, format: str, *args: object) -> None:
            # one request per page view is noise on the user's terminal
            return

    return http.server.ThreadingHTTPServer((host, port), Handler)
