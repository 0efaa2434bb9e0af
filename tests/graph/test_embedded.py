"""The embedded FalkorDB server: start, stop, persistence, and the ownership/reuse rule."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cypherturn.errors import ConfigError, QueryError
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is not a running server.
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "State:\tZ" not in status.read_text()


def _wait_dead(pid: int, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedFalkorDB]:
    started = EmbeddedFalkorDB(tmp_path / "falkordb").start()
    yield started
    started.stop(force=True)


def _python(code: str, data_dir: Path) -> subprocess.Popen[str]:
    script = textwrap.dedent(code).replace("DATA_DIR", repr(str(data_dir)))
    return subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_start_writes_private_files(server: EmbeddedFalkorDB) -> None:
    assert server.owned and server.running
    for name in ("password", "redis.conf"):
        mode = stat.S_IMODE((server.data_dir / name).stat().st_mode)
        assert mode == 0o600, name
    state = json.loads((server.data_dir / "server.json").read_text())
    assert (state["pid"], state["port"]) == (server.pid, server.port)
    assert server.password not in " ".join(
        Path(f"/proc/{server.pid}/cmdline").read_text().split("\0")
    )
    assert server.url == f"falkordb://:{server.password}@127.0.0.1:{server.port}"
    assert server.client().select_graph("g").query("RETURN 1").result_set == [[1]]


def test_second_instance_reuses_and_does_not_stop(server: EmbeddedFalkorDB) -> None:
    other = EmbeddedFalkorDB(server.data_dir).start()
    assert (other.pid, other.port, other.owned) == (server.pid, server.port, False)
    other.stop()
    assert server.running
    pid = server.pid
    assert pid is not None
    server.stop()
    assert _wait_dead(pid)
    assert not (server.data_dir / "server.json").exists()


def test_graphs_survive_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "persist"
    with EmbeddedFalkorDB(data_dir) as first:
        first.client().select_graph("kept").query("CREATE (:Thing {n: 42})")
        first_pid = first.pid
    with EmbeddedFalkorDB(data_dir) as second:
        assert second.pid != first_pid
        rows = second.client().select_graph("kept").ro_query("MATCH (t:Thing) RETURN t.n")
        assert rows.result_set == [[42]]


def test_an_index_serves_zeros_after_a_restart(tmp_path: Path) -> None:
    """FalkorDB's snapshot load drops an index's zero entries; the starter rebuilds the index."""
    data_dir = tmp_path / "zeros"
    values = [0, 0.0, -0.0, 1.5, 3, -2]
    with EmbeddedFalkorDB(data_dir) as first:
        graph = first.client().select_graph("kept")
        graph.query("CREATE INDEX FOR (t:Thing) ON (t.n)")
        graph.query("UNWIND $values AS v CREATE (:Thing {n: v})", {"values": values})
    with EmbeddedFalkorDB(data_dir) as second:
        graph = second.client().select_graph("kept")
        plan = str(graph.explain("MATCH (t:Thing) WHERE t.n < 1 RETURN t"))
        assert "Index Scan" in plan, plan
        served = graph.ro_query("MATCH (t:Thing) WHERE t.n < 1 RETURN count(t)").result_set
        scanned = graph.ro_query("MATCH (t:Thing) WHERE t.n + 0 < 1 RETURN count(t)").result_set
        assert served == scanned == [[sum(v < 1 for v in values)]]
        assert graph.ro_query("MATCH (t:Thing) WHERE t.n = 0 RETURN count(t)").result_set == [[3]]


def test_other_process_reuses_and_leaves_it_running(server: EmbeddedFalkorDB) -> None:
    child = _python(
        """
        from cypherturn.graph import EmbeddedFalkorDB
        s = EmbeddedFalkorDB(DATA_DIR).start()
        print(s.pid, s.port, s.owned)
        """,
        server.data_dir,
    )
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert out.split() == [str(server.pid), str(server.port), "False"]
    assert server.running


def test_owner_process_stops_server_on_sigterm(tmp_path: Path) -> None:
    data_dir = tmp_path / "owned-by-child"
    child = _python(
        """
        import sys, time
        from cypherturn.graph import EmbeddedFalkorDB
        s = EmbeddedFalkorDB(DATA_DIR).start()
        print(s.pid, flush=True)
        time.sleep(60)
        """,
        data_dir,
    )
    assert child.stdout is not None
    server_pid = int(child.stdout.readline())
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=60)
    assert _wait_dead(server_pid)
    assert not (data_dir / "server.json").exists()


def test_server_of_a_sigkilled_sole_user_is_stopped_by_its_watchdog(tmp_path: Path) -> None:
    data_dir = tmp_path / "orphan"
    child = _python(
        """
        import time
        from cypherturn.graph import EmbeddedFalkorDB
        s = EmbeddedFalkorDB(DATA_DIR).start()
        print(s.pid, flush=True)
        time.sleep(60)
        """,
        data_dir,
    )
    assert child.stdout is not None
    server_pid = int(child.stdout.readline())
    watchdog_pid = json.loads((data_dir / "server.json").read_text())["watchdog_pid"]
    child.kill()  # SIGKILL: no atexit; the watchdog sees no live lease and stops the server
    child.wait(timeout=30)
    assert _wait_dead(server_pid, 10.0)
    assert _wait_dead(watchdog_pid, 10.0)
    assert not (data_dir / "server.json").exists()
    # The next user starts a fresh server on the same directory.
    fresh = EmbeddedFalkorDB(data_dir).start()
    assert fresh.owned and fresh.pid != server_pid
    fresh.stop()


def test_server_outlives_its_starter_while_another_process_uses_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "shared"
    starter = EmbeddedFalkorDB(data_dir).start()
    user = _python(
        """
        import time
        from cypherturn.graph import EmbeddedFalkorDB
        s = EmbeddedFalkorDB(DATA_DIR).start()
        print(s.pid, flush=True)
        time.sleep(60)
        """,
        data_dir,
    )
    assert user.stdout is not None
    server_pid = int(user.stdout.readline())
    assert server_pid == starter.pid
    starter.stop()
    assert _alive(server_pid)
    user.terminate()
    user.wait(timeout=60)
    assert _wait_dead(server_pid)


def test_force_stop_ends_a_server_others_still_use(tmp_path: Path) -> None:
    data_dir = tmp_path / "forced"
    first = EmbeddedFalkorDB(data_dir).start()
    second = EmbeddedFalkorDB(data_dir).start()
    assert second.pid == first.pid and not second.owned
    pid = first.pid
    assert pid is not None
    second.stop(force=True)
    assert _wait_dead(pid)


def test_stale_state_file_starts_a_fresh_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "stale"
    data_dir.mkdir()
    (data_dir / "server.json").write_text(json.dumps({"pid": 2**22 + 1, "port": 1}))
    with EmbeddedFalkorDB(data_dir) as server:
        assert server.owned and server.running
        assert json.loads((data_dir / "server.json").read_text())["pid"] == server.pid


def test_bolt_on_running_server_without_bolt_is_refused(server: EmbeddedFalkorDB) -> None:
    with pytest.raises(ConfigError, match="without Bolt"):
        EmbeddedFalkorDB(server.data_dir, bolt_port=0).start()
    with pytest.raises(ConfigError):
        EmbeddedFalkorDB(server.data_dir, bolt_port=40000)


def test_query_memory_cap(tmp_path: Path) -> None:
    with EmbeddedFalkorDB(tmp_path / "small", query_memory_bytes=64 << 20) as server:
        engine = FalkorDBEngine(server.client(), "mem", spec="mem")
        engine.ensure_graph()
        with pytest.raises(QueryError) as caught:
            engine.execute("UNWIND range(1, 5000000) AS x RETURN size(collect(x))")
        assert caught.value.engine_message == "Query's mem consumption exceeded capacity"
        assert engine.execute("RETURN 1").rows == [[1]]
        engine.close()
