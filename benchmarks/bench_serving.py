"""Serving reliability (issue 43): nothing half-loaded, nobody blocked, every command stops.

Run: ``python benchmarks/bench_serving.py [--kills 20] [--out docs/results/reliability]``.

Everything runs on real processes with a private ``CYPHERTURN_HOME`` (its own
embedded FalkorDB), the ``cypherturn`` command line and the official MCP SDK
client. It prints each figure and writes ``OUT/serving.md`` and
``OUT/serving.json``. Sections:

1. **Kill -9 during a first load.** ``cypherturn mcp --graph pole`` is started
   on an engine without the graph (so it loads POLE first) and SIGKILLed at a
   uniformly random point of the load; a watcher polls the graph every 50 ms
   the whole time and records any moment it is visible with other counts than
   the world's. Then ``ask``, ``chat`` and ``mcp`` are started in turn (a replay
   model answers ``MATCH (n) RETURN count(n)``) and the count each serves is
   compared with POLE's. Target: 0 partial graphs visible, 0 served.
2. **Many MCP clients, and a bystander.** ``cypherturn mcp --http`` on POLE;
   100 concurrent sessions of the official client, 5 rounds of the three read
   tools each: errors and latency percentiles. Then one client runs a query
   until the server's 15 s timeout while another reads: the bystander's
   latency. Target: 0 errors; bystander p90 <= 0.5 s.
3. **Parameters cannot change what runs.** Crafted parameter names and values
   (header injection, backticks, quotes closing a literal, NUL, oversized
   integers, nested maps, unicode) sent with ``RETURN $p``-shaped reads through
   :meth:`GraphEngine.execute` and through the MCP ``read_cypher`` tool: each is
   refused with the parameter named, or returns the value unchanged; the
   graph's checksum is unchanged. (The 540-write fuzz of the query text is in
   ``bench_reliability.py``.)
4. **Signals.** Each long-running command with a query in flight (``mcp`` over
   stdio and HTTP, ``ask``, ``chat``) gets SIGTERM or the first Ctrl-C:
   seconds to exit, exit code, processes left. Target: within 2 s, 143 / 130,
   none left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from cypherturn.errors import CypherTurnError
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, find_embedded_servers
from cypherturn.worlds import get_world

GRAPH = "pole"
COUNT = "MATCH (n) RETURN count(n) AS nodes"


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "CYPHERTURN_HOME": str(home), "COLUMNS": "200"}


def _replay(root: Path) -> str:
    path = root / "replay.json"
    path.write_text(json.dumps([f"```cypher\n{COUNT}\n```"] * 50), encoding="utf-8")
    return f"replay:{path}"


class _Watcher(threading.Thread):
    """Polls the graph's counts; remembers every reading that is not the whole world."""

    def __init__(self, engine: FalkorDBEngine, expected: tuple[int, int]) -> None:
        super().__init__(daemon=True)
        self.engine, self.expected = engine, expected
        self.partial: list[tuple[int, int]] = []
        self.readings = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            if GRAPH in self.engine.client.list_graphs():
                seen = (self.engine.node_count(), self.engine.relationship_count())
                self.readings += 1
                if seen != self.expected:
                    self.partial.append(seen)
            time.sleep(0.05)


def _mcp_count(home: Path, model: str) -> int:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cypherturn", "mcp", "--graph", GRAPH, "--model", model],
        env=_env(home),
    )
    found: list[int] = []

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result: CallToolResult = await session.call_tool("read_cypher", {"query": COUNT})
            assert result.structured_content is not None, result
            found.append(int(result.structured_content["rows"][0][0]))

    anyio.run(main)
    return found[0]


def _cli_count(home: Path, args: list[str], stdin: str | None = None) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "cypherturn", *args],
        input=stdin,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({done.returncode}): {done.stderr[-500:]}")
    if args[0] == "ask":
        return int(json.loads(done.stdout)["final_result"]["rows"][0][0])
    # Only a result table's cells count: the banner and footer hold other numbers (seconds,
    # attempts), and a refused question prints no table at all.
    cells = [
        int(line.strip("│ ").replace(",", ""))
        for line in done.stdout.splitlines()
        if line.startswith("│") and line.strip("│ ").replace(",", "").isdigit()
    ]
    if not cells:
        raise SystemExit(f"{args[0]} printed no result table: {done.stdout[-500:]}")
    return cells[0]


def load_kills(root: Path, kills: int, seed: int) -> dict[str, Any]:
    """Section 1: kill -9 at random points of a first load, then restart ask, chat and mcp."""
    home = root / "home-load"
    server = EmbeddedFalkorDB(home / "falkordb").start()
    engine = FalkorDBEngine(server.client(), GRAPH, spec="bench")
    info = get_world(GRAPH).info
    assert info.expected_nodes is not None and info.expected_relationships is not None
    expected = (info.expected_nodes, info.expected_relationships)
    model = _replay(root)
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    try:
        started = time.monotonic()
        full = subprocess.run(
            [sys.executable, "-m", "cypherturn", "load", GRAPH], env=_env(home), capture_output=True
        )
        load_s = time.monotonic() - started
        assert full.returncode == 0, full.stderr
        print(f"  a whole first load: {load_s:.1f} s", flush=True)
        restarts = ("ask", "chat", "mcp")
        for i in range(kills):
            engine.drop()
            watcher = _Watcher(engine, expected)
            watcher.start()
            at = rng.uniform(0.5, load_s)
            process = subprocess.Popen(
                [sys.executable, "-m", "cypherturn", "mcp", "--graph", GRAPH, "--no-ask"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=_env(home),
                start_new_session=True,
            )
            time.sleep(at)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            left = [g for g in engine.client.list_graphs() if g.startswith(f"{GRAPH}.loading.")]
            restart = restarts[i % len(restarts)]
            if restart == "ask":
                served = _cli_count(
                    home, ["ask", "how many nodes?", "--graph", GRAPH, "--model", model, "--json"]
                )
            elif restart == "chat":
                served = _cli_count(
                    home,
                    ["chat", "--graph", GRAPH, "--model", model, "--no-answer"],
                    "how many nodes of any label (Crime, Person, ...) are there?\n/quit\n",
                )
            else:
                served = _mcp_count(home, model)
            watcher.stop.set()
            watcher.join()
            row = {
                "kill_at_s": round(at, 2),
                "staging_left_at_kill": len(left),
                "partial_visible": len(watcher.partial),
                "readings": watcher.readings,
                "restart": restart,
                "served_nodes": served,
                "complete": served == expected[0],
                "staging_left_after": sum(
                    g.startswith(f"{GRAPH}.loading.") for g in engine.client.list_graphs()
                ),
            }
            rows.append(row)
            print(
                f"  kill {i + 1:2}/{kills} at {at:5.1f} s: partial readings "
                f"{row['partial_visible']}, {restart} served {served:,} nodes "
                f"({'complete' if row['complete'] else 'PARTIAL'})",
                flush=True,
            )
    finally:
        engine.close()
        server.stop(force=True)
    return {
        "load_s": round(load_s, 1),
        "expected": list(expected),
        "kills": rows,
        "partial_served": sum(not r["complete"] for r in rows),
        "partial_visible": sum(r["partial_visible"] for r in rows),
    }


EXPENSIVE = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*) AS n"
READS: list[tuple[str, dict[str, Any]]] = [
    ("read_cypher", {"query": "MATCH (c:Crime) RETURN c.type AS type, count(*) AS n"}),
    ("get_schema", {"labels": ["Crime"]}),
    ("search_values", {"key": "type", "text": "burglary"}),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _http_server(home: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cypherturn", "mcp", "--graph", GRAPH, "--no-ask", "--http",
         "--port", str(port), *extra],
        env=_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while True:
        if process.poll() is not None:
            raise SystemExit("the MCP server exited before listening")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}/mcp"
        if time.monotonic() > deadline:
            raise SystemExit("the MCP server did not listen within 300 s")
        time.sleep(0.2)


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "n": len(ordered),
        "p50_s": round(statistics.median(ordered), 3),
        "p90_s": round(at(0.9), 3),
        "p99_s": round(at(0.99), 3),
        "max_s": round(ordered[-1], 3),
    }


def mcp_load(root: Path, sessions: int, rounds: int) -> dict[str, Any]:
    """Section 2: many concurrent MCP sessions, then a bystander beside a slow query."""
    home = root / "home-mcp"
    subprocess.run([sys.executable, "-m", "cypherturn", "load", GRAPH], env=_env(home), check=True)
    process, url = _http_server(home, "--timeout", "15")
    latencies: list[float] = []
    errors: list[str] = []
    bystander: list[float] = []
    slow: list[float] = []

    async def one_session() -> None:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            for _ in range(rounds):
                for tool, arguments in READS:
                    started = time.monotonic()
                    result = await s.call_tool(tool, arguments)
                    latencies.append(time.monotonic() - started)
                    if result.is_error:
                        errors.append(f"{tool}: {result.content}")

    async def many() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(sessions):
                group.start_soon(one_session)

    async def beside_a_slow_query() -> None:
        async with (
            streamable_http_client(url) as (r1, w1),
            ClientSession(r1, w1) as first,
            streamable_http_client(url) as (r2, w2),
            ClientSession(r2, w2) as second,
        ):
            await first.initialize()
            await second.initialize()
            done = anyio.Event()

            async def run_slow() -> None:
                started = time.monotonic()
                await first.call_tool("read_cypher", {"query": EXPENSIVE})
                slow.append(time.monotonic() - started)
                done.set()

            async with anyio.create_task_group() as group:
                group.start_soon(run_slow)
                await anyio.sleep(1.0)
                while not done.is_set():
                    for tool, arguments in READS:
                        started = time.monotonic()
                        await second.call_tool(tool, arguments)
                        bystander.append(time.monotonic() - started)
                    await anyio.sleep(0.05)

    try:
        started = time.monotonic()
        anyio.run(many)
        wall = time.monotonic() - started
        anyio.run(beside_a_slow_query)
    finally:
        process.terminate()
        process.wait(timeout=30)
    figures = {
        "sessions": sessions,
        "rounds": rounds,
        "calls": len(latencies),
        "errors": len(errors),
        "error_examples": errors[:3],
        "wall_s": round(wall, 1),
        "latency": _percentiles(latencies),
        "bystander": _percentiles(bystander),
        "slow_query_s": round(slow[0], 1) if slow else None,
    }
    print(
        f"  {sessions} sessions x {rounds} rounds: {len(latencies)} calls, {len(errors)} errors, "
        f"p50 {figures['latency']['p50_s']} s p90 {figures['latency']['p90_s']} s; bystander "
        f"p50 {figures['bystander']['p50_s']} s p90 {figures['bystander']['p90_s']} s over "
        f"{len(bystander)} reads beside a {figures['slow_query_s']} s query",
        flush=True,
    )
    return figures


def _crafted(rng: random.Random, count: int) -> list[tuple[str, Any]]:
    """(name, value) pairs built from injection pieces: each must be refused or returned as sent."""
    names = ["p", "x=1 CREATE (n) //", "p RETURN 1 //", "`p`", "p}", "p'", "", " p", "p\u0000",
             "MATCH", "p-q", "\u0440", "p;q", "CYPHER", "1p", "p.q", "p[0]", "p\nCREATE (n)"]  # fmt: skip
    tails = ["' }) CREATE (:Hacked) //", "\\' CREATE (:Hacked) //", "\u0000", "\" CREATE (n) \"",
             "}}} MATCH (n) DETACH DELETE n //", "ok", "\u202e", "a`b", "x" * 2000]  # fmt: skip
    values: list[Any] = [*tails, 2**70, -(2**63), float("nan"), float("inf"), True, None, 1.5,
                         [1, "two", [3]], {"k": "v"}, {"a`b": 1}, {"k\u0000": 1},
                         {"deep": {"deeper": {"x": tails[0]}}}, list(range(50))]  # fmt: skip
    out = [(name, "ok") for name in names] + [("p", value) for value in values]
    while len(out) < count:
        out.append((rng.choice(names), rng.choice(values)))
    return out


def parameters(root: Path, count: int, seed: int) -> dict[str, Any]:
    """Section 3: crafted parameter names and values cannot change what runs."""
    server = EmbeddedFalkorDB(root / "params").start()
    engine = FalkorDBEngine(server.client(), "params", spec="bench")
    engine.write("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})")

    def checksum() -> Any:
        return engine.execute(
            "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n), count(r), "
            "collect(DISTINCT labels(n))"
        ).rows

    before = checksum()
    refused = unchanged = changed = 0
    named = 0
    examples: list[str] = []
    try:
        for name, value in _crafted(random.Random(seed), count):
            plain = name.isidentifier() and name.isascii()
            query = f"RETURN ${name} AS v" if plain else "RETURN 1 AS v"
            try:
                rows = engine.execute(query, {name: value}).rows
            except CypherTurnError as e:
                refused += 1
                named += int(repr(name)[1:-1] in str(e) or "parameter" in str(e))
                continue
            same = rows == [[value]] or (value != value and rows[0][0] != rows[0][0])
            if same if plain else rows == [[1]]:
                unchanged += 1
            else:
                changed += 1
                examples.append(f"{name!r}={value!r} -> {rows!r}"[:120])
        after = checksum()
    finally:
        engine.close()
        server.stop(force=True)
    total = refused + unchanged + changed
    print(
        f"  {total} crafted parameters: {refused} refused ({named} naming the parameter), "
        f"{unchanged} returned as sent, {changed} changed; checksum unchanged: {before == after}",
        flush=True,
    )
    return {
        "cases": total,
        "refused": refused,
        "refused_naming_it": named,
        "returned_unchanged": unchanged,
        "changed": changed,
        "changed_examples": examples[:5],
        "checksum_unchanged": before == after,
    }


def _stop_time(process: subprocess.Popen[bytes], signum: int) -> tuple[float, int]:
    started = time.monotonic()
    process.send_signal(signum)
    try:
        code = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
    return time.monotonic() - started, code


def _wait_in_flight(home: Path, process: subprocess.Popen[bytes]) -> None:
    """Wait until the command holds its engine lease, then give it time to send the query.

    A fixed sleep is not enough on a loaded machine: a signal that arrives while Python is
    still importing meets the default handlers, not the command's.
    """
    leases = home / "falkordb" / "clients"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if any(p.name.startswith(f"{process.pid}-") for p in leases.glob("*")):
            break
        time.sleep(0.1)
    time.sleep(3.0)  # the replayed model answers at once; the query reaches the engine


def signals(root: Path) -> list[dict[str, Any]]:
    """Section 4: SIGTERM and Ctrl-C to each long-running command with a query in flight."""
    home = root / "home-signals"
    subprocess.run([sys.executable, "-m", "cypherturn", "load", GRAPH], env=_env(home), check=True)
    slow_model = root / "slow.json"
    slow_model.write_text(json.dumps([f"```cypher\n{EXPENSIVE}\n```"] * 5), encoding="utf-8")
    rows: list[dict[str, Any]] = []
    for command in ("ask", "chat", "mcp stdio", "mcp http"):
        for signum in (signal.SIGTERM, signal.SIGINT):
            stdin = subprocess.PIPE
            if command == "ask":
                args = ["ask", "how many?", "--graph", GRAPH, "--model", f"replay:{slow_model}",
                        "--strategy", "single", "--no-answer"]  # fmt: skip
            elif command == "chat":
                args = ["chat", "--graph", GRAPH, "--model", f"replay:{slow_model}", "--no-answer"]
            else:
                args = ["mcp", "--graph", GRAPH, "--no-ask"]
            if command == "mcp http":
                process, url = _http_server(home)

                def in_flight(url: str = url) -> None:
                    async def call() -> None:
                        async with (
                            streamable_http_client(url) as (r, w),
                            ClientSession(r, w) as session,
                        ):
                            await session.initialize()
                            await session.call_tool("read_cypher", {"query": EXPENSIVE})

                    try:
                        anyio.run(call)
                    except BaseException:  # the server went away mid-call, as intended
                        return

                threading.Thread(target=in_flight, daemon=True).start()
            else:
                process = subprocess.Popen(
                    [sys.executable, "-m", "cypherturn", *args],
                    stdin=stdin,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=_env(home),
                )
                assert process.stdin is not None
                if command == "chat":
                    process.stdin.write(b"how many crimes are there?\n")
                    process.stdin.flush()
                elif command == "mcp stdio":
                    for message in (
                        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                            "protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "0"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                            "name": "read_cypher", "arguments": {"query": EXPENSIVE}}},
                    ):  # fmt: skip
                        process.stdin.write(json.dumps(message).encode() + b"\n")
                        process.stdin.flush()
            _wait_in_flight(home, process)
            took, code = _stop_time(process, signum)
            time.sleep(1.0)
            left = [s for s in find_embedded_servers() if str(home) in str(s.data_dir) and s.users]
            row = {
                "command": command,
                "signal": signal.Signals(signum).name,
                "exit_s": round(took, 2),
                "exit_code": code,
                "expected_code": 128 + signum,
                "servers_in_use_left": len(left),
            }
            rows.append(row)
            print(
                f"  {command:9} {row['signal']}: exit {code} in {row['exit_s']} s, "
                f"servers in use left {len(left)}",
                flush=True,
            )
    return rows


def _write(out: Path, figures: dict[str, Any], command: str) -> None:
    load = figures.get("load_kills")
    lines = [
        "# Serving reliability (issue 43)",
        "",
        f"Command: `{command}`. Machine: {os.cpu_count()} cores, shared with other jobs.",
    ]
    if load:
        lines += _load_lines(load)
    _extend(lines, figures)
    out.mkdir(parents=True, exist_ok=True)
    (out / "serving.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "serving.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")


def _load_lines(load: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "## Kill -9 during a first load",
        "",
        f"`cypherturn mcp --graph pole` on an engine without the graph, SIGKILLed at a uniformly "
        f"random point of its first load (a whole load took {load['load_s']} s); a watcher read "
        "the graph's counts every 50 ms; then `ask`, `chat` or `mcp` was started and asked "
        f"for the node count. POLE holds {load['expected'][0]:,} nodes and "
        f"{load['expected'][1]:,} relationships.",
        "",
        f"- **{load['partial_served']} of {len(load['kills'])}** restarts served a partial "
        f"graph; **{load['partial_visible']}** watcher readings ever saw one.",
        "",
        "| kill at (s) | staging graph left | partial readings / readings | restart | nodes "
        "served | staging left after |",
        "|---:|---:|---:|---|---:|---:|",
    ]
    lines += [
        f"| {r['kill_at_s']} | {r['staging_left_at_kill']} | {r['partial_visible']} / "
        f"{r['readings']} | {r['restart']} | {r['served_nodes']:,} | {r['staging_left_after']} |"
        for r in load["kills"]
    ]
    return lines


def _extend(lines: list[str], figures: dict[str, Any]) -> None:
    mcp = figures.get("mcp_load")
    if mcp:
        lines += [
            "",
            "## Many MCP clients, and a bystander beside a slow query",
            "",
            f"`cypherturn mcp --graph pole --http --timeout 15`; {mcp['sessions']} concurrent "
            f"sessions of the official client x {mcp['rounds']} rounds of read_cypher, get_schema "
            f"and search_values: **{mcp['errors']} errors** in {mcp['calls']} calls "
            f"({mcp['wall_s']} s).",
            "",
            "| calls | n | p50 (s) | p90 (s) | p99 (s) | max (s) |",
            "|---|---:|---:|---:|---:|---:|",
            "| 100 sessions at once | {n} | {p50_s} | {p90_s} | {p99_s} | {max_s} |".format(
                **mcp["latency"]
            ),
            "| bystander beside a {q} s query | {n} | {p50_s} | {p90_s} | {p99_s} | {max_s} |".format(
                q=mcp["slow_query_s"], **mcp["bystander"]
            ),
        ]
    params = figures.get("parameters")
    if params:
        lines += [
            "",
            "## Crafted parameters",
            "",
            f"- {params['cases']} crafted names and values: {params['refused']} refused "
            f"({params['refused_naming_it']} naming the parameter), "
            f"{params['returned_unchanged']} returned exactly as sent, **{params['changed']} "
            f"changed**; graph checksum unchanged: {params['checksum_unchanged']}.",
        ]
    sigs = figures.get("signals")
    if sigs:
        lines += [
            "",
            "## Signals with a query in flight",
            "",
            "| command | signal | exit (s) | exit code | expected | servers in use left |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['command']} | {r['signal']} | {r['exit_s']} | {r['exit_code']} | "
            f"{r['expected_code']} | {r['servers_in_use_left']} |"
            for r in sigs
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="first loads to kill")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--sessions", type=int, default=100, help="concurrent MCP sessions")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--params", type=int, default=300, help="crafted parameters")
    parser.add_argument(
        "--only",
        help="comma-separated sections (load, mcp, params, signals); the others keep the "
        "figures already in OUT/serving.json",
    )
    parser.add_argument("--out", type=Path, default=Path("docs/results/reliability"))
    args = parser.parse_args()
    # A job started in the background of a shell ignores SIGINT, and its children inherit
    # that; Python's own handler is reset to the default in each child at exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    only = None if args.only is None else set(args.only.split(","))
    previous = args.out / "serving.json"
    # A partial rerun keeps the sections it did not run, so one section can be redone alone.
    figures: dict[str, Any] = (
        json.loads(previous.read_text(encoding="utf-8"))
        if only is not None and previous.is_file()
        else {}
    )
    with tempfile.TemporaryDirectory(prefix="cypherturn-serving-") as tmp:
        root = Path(tmp)
        sections = {
            "load": ("kill -9 during a first load", "load_kills",
                     lambda: load_kills(root, args.kills, args.seed)),
            "mcp": ("many MCP clients", "mcp_load", lambda: mcp_load(root, args.sessions, args.rounds)),
            "params": ("crafted parameters", "parameters", lambda: parameters(root, args.params, args.seed)),
            "signals": ("signals", "signals", lambda: signals(root)),
        }  # fmt: skip
        for key, (title, name, run) in sections.items():
            if only is None or key in only:
                print(f"{title}:")
                figures[name] = run()
    command = "python benchmarks/bench_serving.py " + " ".join(sys.argv[1:])
    _write(args.out, figures, command.strip())
    print(f"wrote {args.out / 'serving.md'}")


if __name__ == "__main__":
    main()
