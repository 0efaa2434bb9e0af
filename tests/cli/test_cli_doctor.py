"""`cypherturn doctor` on real servers, and the exit-code table every command uses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from cypherturn.cli._exit import ExitCode
from cypherturn.graph import EmbeddedFalkorDB

README = Path(__file__).parent.parent.parent / "README.md"


def _cypherturn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cypherturn", *args], capture_output=True, text=True, timeout=120
    )


def test_doctor_lists_a_running_server_as_in_use(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path / "doc").start()
    try:
        done = _cypherturn("doctor", "--json")
        assert done.returncode == ExitCode.OK, done.stderr
        mine = [s for s in json.loads(done.stdout) if s["pid"] == server.pid]
        assert len(mine) == 1
        assert mine[0]["state"] == "in use" and mine[0]["users"] == [os.getpid()]
        assert mine[0]["data_dir"] == str(server.data_dir) and mine[0]["port"] == server.port
        # `--stop` leaves a server in use alone.
        assert _cypherturn("doctor", "--stop").returncode == ExitCode.OK
        assert server.running
    finally:
        server.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
        s["pid"] == server.pid for s in json.loads(_cypherturn("doctor", "--json").stdout)
    ):
        time.sleep(0.2)
    assert all(s["pid"] != server.pid for s in json.loads(_cypherturn("doctor", "--json").stdout))


def test_exit_codes_are_distinct_and_documented_in_the_readme() -> None:
    codes = [int(code) for code in ExitCode]
    assert len(set(codes)) == len(codes)
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Exit codes") :]
    for code in ExitCode:
        assert re.search(rf"^\| `{int(code)}` \| `{code.name}` \|", section, re.MULTILINE), code


def test_usage_error_and_error_differ() -> None:
    usage = _cypherturn("doctor", "--bogus")
    assert usage.returncode == ExitCode.USAGE and "Traceback" not in usage.stderr
    error = _cypherturn("load", "atlantis")
    assert error.returncode == ExitCode.ERROR and "Traceback" not in error.stderr
