"""``cypherturn view``: browse a run's systems, sessions, turns and actions in one HTML page.

:func:`read_page` reads a run directory (a benchmark run, a QER run, or an
ask-accuracy run) into a :class:`RunPage`; :func:`render_page` renders it as
one self-contained HTML document (inline CSS and JavaScript, no network),
:func:`write_page` writes it, and :func:`page_server` serves pages on
localhost. Design: ``docs/design/viewer.md``.
"""

from cypherturn.viewer._load import detect_kind, read_page
from cypherturn.viewer._model import GroupView, ItemView, RunPage, StepView, TurnView
from cypherturn.viewer._render import (
    PAGE_FILE,
    page_name,
    page_server,
    render_index,
    render_page,
    write_page,
)

__all__ = [
    "PAGE_FILE",
    "GroupView",
    "ItemView",
    "RunPage",
    "StepView",
    "TurnView",
    "detect_kind",
    "page_name",
    "page_server",
    "read_page",
    "render_index",
    "render_page",
    "write_page",
]
