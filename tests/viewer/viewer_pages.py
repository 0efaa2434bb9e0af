"""Shared by the viewer tests: the markup-carrying query, and an HTML parser that checks nesting.

(A plain module with a unique basename, since pytest puts each test folder on ``sys.path``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

INJECTED = "MATCH (s:Student) RETURN '<script>alert(1)</script>' AS x LIMIT 1"
"""A query whose output holds markup: the page must show it as text."""


@dataclass(frozen=True)
class BenchRun:
    """A played and scored bench run and the benchmark file it played."""

    run: Path
    bench: Path


_VOID = {"meta", "br", "input", "img", "hr", "link"}


class Page(HTMLParser):
    """Collects tags, attributes, text, and whether every element was closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.items: list[dict[str, str | None]] = []
        self.turns = 0
        self.turn_attrs: list[dict[str, str | None]] = []
        self.urls: list[str] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.html: dict[str, str | None] = {}
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.html = found
        for name in ("src", "href", "action"):
            if found.get(name):
                self.urls.append(str(found[name]))
        if tag == "tbody" and "item" in (found.get("class") or "").split():
            self.items.append(found)
        if tag == "div" and "turn" in (found.get("class") or "").split():
            self.turns += 1
            self.turn_attrs.append(found)
        if tag == "script":
            self._in_script = True
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)


def parse(html: str) -> Page:
    """Parse a page; every element must be closed, in order."""
    parser = Page()
    parser.feed(html)
    parser.close()
    assert parser.errors == [] and parser.stack == [], (parser.errors, parser.stack)
    return parser
