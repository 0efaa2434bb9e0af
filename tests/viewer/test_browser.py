"""The run pages in a real headless browser (Debian's ``chromium``), from files and from ``--serve``.

Chromium loads the page written by ``cypherturn view`` for the real bench run of
``conftest.py`` and dumps the DOM after its scripts ran (``--dump-dom``). The
page's error sentinel counts uncaught errors, rejected promises and
``console.error`` calls on ``<html data-js-errors>``, and chromium's own log
(``--enable-logging=stderr``) prints every console message as ``CONSOLE``; both
must stay silent, and a page with a deliberate error shows both fire. Filters,
paging and opening a session are driven by the URL hash the page honours
(``#outcome=failed&page=2&open=ID``), so each check is one browser run. A
screenshot of the session table is saved under the test's tmp dir.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections import Counter
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from PIL import Image
from viewer_pages import BenchRun, Page, parse

from cypherturn.viewer import PAGE_FILE, RunPage, page_server, read_page, write_page

CHROMIUM = shutil.which("chromium")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install -y chromium; .ci/run does it "
    "as root): the run pages are not loaded in a browser",
)


class Loaded:
    """What chromium made of a page: the DOM after its scripts ran, and its console log."""

    def __init__(self, dom: str, log: str) -> None:
        self.dom = dom
        self.page: Page = parse(dom)
        self.console = [line for line in log.splitlines() if ":CONSOLE" in line]

    def assert_clean(self) -> None:
        """The page's script ran to its end, and nothing was reported as an error."""
        assert self.page.html.get("data-ready") == "1", self.page.html
        assert self.page.html.get("data-js-errors") == "0", self.page.html
        assert self.console == []

    @property
    def shown(self) -> list[str]:
        """Keys of the session rows not hidden (filtered out or on another page)."""
        return [str(i["data-key"]) for i in self.page.items if "hidden" not in i]

    @property
    def status(self) -> str:
        found = re.search(r'<span id="shown">([^<]*)</span>', self.dom)
        assert found is not None
        return found.group(1)


def _chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
        "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr", "--v=0", *args, url,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _load(tmp_path: Path, url: str) -> Loaded:
    done = _chromium(tmp_path, url, "--dump-dom")
    return Loaded(done.stdout, done.stderr)


def _url(path: Path, **state: str) -> str:
    return path.resolve().as_uri() + ("#" + urlencode(state, quote_via=quote) if state else "")


@pytest.fixture(scope="module")
def written(bench_run: BenchRun) -> tuple[RunPage, Path]:
    """The bench run's page (with the benchmark file's utterances), written where `view` puts it."""
    page = read_page(bench_run.run, bench=bench_run.bench)
    return page, write_page(page, bench_run.run / PAGE_FILE)


def test_page_loads_without_errors_and_lists_every_session(
    written: tuple[RunPage, Path], tmp_path: Path
) -> None:
    page, path = written
    keys = [i.key for g in page.groups for i in g.items]
    loaded = _load(tmp_path, _url(path))
    loaded.assert_clean()
    assert [i["data-key"] for i in loaded.page.items] == keys
    assert loaded.shown == keys  # 30 sessions fit the default page of 50
    assert loaded.status == f"{len(keys)} of {len(keys)} match · page 1 of 1"
    assert 'id="run-summary"' in loaded.dom and "FalkorDB" in loaded.dom
    # the turns stay in their inert templates until a session is opened
    assert loaded.page.turns == sum(len(i.turns) for g in page.groups for i in g.items)
    assert loaded.dom.count("<template>") == len(keys)


def test_filters_from_the_url_hash(written: tuple[RunPage, Path], tmp_path: Path) -> None:
    page, path = written
    items = [i for g in page.groups for i in g.items]
    persona, _ = Counter(i.persona for i in items).most_common(1)[0]
    loaded = _load(tmp_path, _url(path, persona=persona))
    loaded.assert_clean()
    assert loaded.shown == [i.key for i in items if i.persona == persona]
    assert 0 < len(loaded.shown) < len(items)

    # phenomenon + failed turns only: sessions with a failed turn of that phenomenon
    phenomenon, _ = Counter(t.phenomenon for i in items for t in i.turns if t.failed).most_common(
        1
    )[0]
    loaded = _load(tmp_path, _url(path, phenomenon=phenomenon, failed="1"))
    loaded.assert_clean()
    expected = [
        i.key for i in items if any(t.failed and t.phenomenon == phenomenon for t in i.turns)
    ]
    assert loaded.shown == expected and 0 < len(expected) < len(items)

    loaded = _load(tmp_path, _url(path, text="no-such-session"))
    loaded.assert_clean()
    assert loaded.shown == [] and loaded.status.startswith("0 of ")


def test_paging_and_opening_a_session(written: tuple[RunPage, Path], tmp_path: Path) -> None:
    page, path = written
    items = [i for g in page.groups for i in g.items]
    loaded = _load(tmp_path, _url(path, size="25", page="2"))
    loaded.assert_clean()
    assert loaded.shown == [i.key for i in items[25:]]
    assert loaded.status == f"{len(items)} of {len(items)} match · page 2 of 2"

    # opening clones the session's turns out of its template; failed=1 hides the others
    item = next(i for i in items if 0 < i.failed_turns < len(i.turns))
    loaded = _load(tmp_path, _url(path, open=item.key, failed="1"))
    loaded.assert_clean()
    assert loaded.dom.count("<template>") == len(items) - 1
    visible = [t for t in loaded.page.turn_attrs if "hidden" not in t]
    opened = len(loaded.page.turn_attrs) - sum(len(i.turns) for i in items if i.key != item.key)
    assert opened == len(item.turns)
    assert len(visible) == sum(len(i.turns) for i in items if i.key != item.key) + item.failed_turns
    # model output is text in the browser's DOM too: no script element but the page's two
    assert len(loaded.page.scripts) == 2 and "&lt;script&gt;alert(1)" in loaded.dom


def test_screenshot_shows_the_session_table(written: tuple[RunPage, Path], tmp_path: Path) -> None:
    page, path = written
    shot = tmp_path / "view.png"
    item = page.groups[0].items[0]
    _chromium(
        tmp_path, _url(path, open=item.key), f"--screenshot={shot}", "--window-size=1280,1800"
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    with Image.open(shot) as image:
        assert image.size == (1280, 1800)
        # a rendered page, not a blank one: many distinct colours (text, badges, borders)
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 50


def test_the_sentinel_reports_a_script_error(written: tuple[RunPage, Path], tmp_path: Path) -> None:
    """The check can fail: the same page with one broken script is caught both ways."""
    _, path = written
    broken = tmp_path / "broken.html"
    html = path.read_text(encoding="utf-8")
    broken.write_text(html.replace("</body>", "<script>noSuchFunction();</script></body>"), "utf-8")
    loaded = _load(tmp_path, _url(broken))
    assert loaded.page.html.get("data-js-errors") == "1"
    assert "noSuchFunction" in str(loaded.page.html.get("data-js-error-messages"))
    assert any("noSuchFunction" in line for line in loaded.console)


def test_served_and_qer_pages_load_in_the_browser(
    bench_run: BenchRun, qer_run: Path, tmp_path: Path
) -> None:
    pages = [read_page(bench_run.run), read_page(qer_run)]
    server = page_server(pages, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        for name, page in (("1-run.html", pages[0]), ("2-qer.html", pages[1])):
            loaded = _load(tmp_path, f"http://{host!s}:{port}/{name}")
            loaded.assert_clean()
            assert loaded.shown == [i.key for g in page.groups for i in g.items]
        keys = [i.key for g in pages[1].groups for i in g.items]
        qer = _load(tmp_path, f"http://{host!s}:{port}/2-qer.html#text={keys[-1]}&group=1")
        qer.assert_clean()
        assert qer.shown == [keys[-1]] and len(qer.page.items) == len(keys)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
