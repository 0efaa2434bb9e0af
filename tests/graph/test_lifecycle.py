"""Lifecycle faults of the embedded server: no orphan process and no traceback, in every case.

Each test drives real processes (``python -c`` children, signals) on a private
data directory and asserts that no redis-server or watchdog of that directory
is left running afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cypherturn.graph import EmbeddedFalkorDB, find_embedded_servers, stop_leftover_servers

_HOLD = """
import sys, time
from cypherturn.graph import EmbeddedFalkorDB
s = EmbeddedFalkorDB(DATA_DIR).start()
print(s.pid, flush=True)
sys.stdin.readline()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


def _wait_dead(pid: int, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _python(code: str, data_dir: Path) -> subprocess.Popen[str]:
    script = textwrap.dedent(code).replace("DATA_DIR", repr(str(data_dir)))
    return subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _servers_of(data_dir: Path) -> list[int]:
    return [s.pid for s in find_embedded_servers() if Path(s.data_dir) == data_dir.resolve()]


def _watchdog(data_dir: Path) -> int:
    return int(json.loads((data_dir / "server.json").read_text())["watchdog_pid"])


def test_data_dir_removed_then_exit_no_traceback_no_orphan(tmp_path: Path) -> None:
    data_dir = tmp_path / "gone"
    child = _python(_HOLD, data_dir)
    assert child.stdout is not None and child.stdin is not None
    server_pid = int(child.stdout.readline())
    watchdog = _watchdog(data_dir)
    shutil.rmtree(data_dir)
    _, stderr = child.communicate("\n", timeout=60)  # normal exit: atexit runs stop()
    assert child.returncode == 0
    assert "Traceback" not in stderr, stderr
    assert _wait_dead(server_pid) and _wait_dead(watchdog)


def test_data_dir_removed_under_a_live_user_stops_the_server(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path / "gone-live").start()
    pid = server.pid
    assert pid is not None
    shutil.rmtree(server.data_dir)
    # The watchdog notices within a poll; SIGTERM stops it although its final save fails.
    assert _wait_dead(pid)
    server.stop()


def test_sigkilled_starter_leaves_no_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "killed"
    child = _python(_HOLD, data_dir)
    assert child.stdout is not None
    server_pid = int(child.stdout.readline())
    watchdog = _watchdog(data_dir)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert _wait_dead(server_pid) and _wait_dead(watchdog)
    assert _servers_of(data_dir) == []


def test_sigkilled_starter_keeps_the_server_for_a_live_user(tmp_path: Path) -> None:
    data_dir = tmp_path / "shared"
    starter = _python(_HOLD, data_dir)
    assert starter.stdout is not None
    server_pid = int(starter.stdout.readline())
    user = EmbeddedFalkorDB(data_dir).start()
    assert user.pid == server_pid
    starter.kill()
    starter.wait(timeout=30)
    time.sleep(1.0)  # several watchdog polls
    assert user.running
    user.stop()
    assert _wait_dead(server_pid)


def test_sigkilled_watchdog_takes_the_server_with_it(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path / "wd").start()
    pid = server.pid
    assert pid is not None
    os.kill(_watchdog(server.data_dir), signal.SIGKILL)
    assert _wait_dead(pid)  # PR_SET_PDEATHSIG
    server.stop()


def test_two_processes_starting_at_once_share_one_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "race"
    children = [_python(_HOLD, data_dir) for _ in range(2)]
    pids = []
    for child in children:
        assert child.stdout is not None
        pids.append(int(child.stdout.readline()))
    assert pids[0] == pids[1]
    assert _servers_of(data_dir) == [pids[0]]
    for child in children:
        _, stderr = child.communicate("\n", timeout=60)
        assert child.returncode == 0 and "Traceback" not in stderr, stderr
    assert _wait_dead(pids[0])


def test_recorded_port_taken_by_a_stranger_starts_a_fresh_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "taken"
    data_dir.mkdir()
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()
        port = stranger.getsockname()[1]
        # A state file naming a live pid (ours) and the stranger's port.
        (data_dir / "server.json").write_text(json.dumps({"pid": os.getpid(), "port": port}))
        server = EmbeddedFalkorDB(data_dir, startup_timeout_s=20).start()
        try:
            assert server.owned and server.port != port and server.running
        finally:
            server.stop()


def test_doctor_finds_and_stops_a_leftover(tmp_path: Path) -> None:
    server = EmbeddedFalkorDB(tmp_path / "left").start()
    pid = server.pid
    mine = [s for s in find_embedded_servers() if s.pid == pid]
    assert len(mine) == 1 and mine[0].state == "in use" and mine[0].users == [os.getpid()]
    assert mine[0].port == server.port and mine[0].watchdog_pid == _watchdog(server.data_dir)
    # In use: not a leftover. Only this test's directory is touched.
    only = [server.data_dir]
    assert [s.stopped for s in stop_leftover_servers(data_dirs=only)] == [False]
    assert server.running
    stopped = stop_leftover_servers(include_in_use=True, data_dirs=only)
    assert [s.pid for s in stopped if s.stopped] == [pid]
    assert pid is not None and _wait_dead(pid)
    server.stop()
