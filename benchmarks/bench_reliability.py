"""Reliability suite (issue 15): timeouts that hold, an engine that always stops, refused writes.

Run: ``python benchmarks/bench_reliability.py [--limit 1.0] [--out docs/results/reliability]``.

Everything runs on real processes: an embedded FalkorDB in a temporary
directory, ``python -c`` children killed with real signals, and the
``cypherturn`` command line. It prints each figure and writes
``OUT/README.md`` (tables) and ``OUT/figures.json`` (raw). Sections:

1. **Pathological queries**: wall time until ``execute`` returns under a
   ``--limit`` second timeout, against the promise ``max(2L, L + 1 s)``,
   and the latency of ``RETURN 1`` right after (the engine stays usable).
2. **Lifecycle faults**: embedded servers (and watchdogs) of the fault's
   data directory still running 5 s after each fault.
3. **Write fuzz**: seeded writes, DDL and procedure calls disguised with
   comments, case, whitespace, unicode and write-like string literals; each
   must be refused, the graph checksum unchanged; look-alike reads must run
   (the false-refusal rate).
4. **Row cap**: 1,000,000 rows under a cap of 10, with the cap pushed into
   the query versus applied after the reply.
5. **Malformed inputs**: each must give exit 1, one stderr error line naming
   the input (the model layer's retry warnings aside), no traceback.
6. **Kill -9 mid-run**: a ``bench run`` and a ``qer run`` (child processes
   with their own ``CYPHERTURN_HOME``, answered by a deterministic local
   OpenAI-compatible endpoint) SIGKILLed once records are written, rerun with
   the same command, compared with an unbroken run: records lost, duplicated,
   changed, and embedded servers left.
7. **Endpoint faults**: 500, 429 with ``Retry-After``, a read timeout, a
   connection reset mid-body and a malformed tool call, transient (2 calls)
   or persistent, through the real ``openai`` client into ``run_benchmark``;
   and a reset mid-stream of a streamed chat.

The fault injectors are tests/reliability/faults.py, shared with the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cypherturn.errors import QueryError, QueryTimeoutError, WriteRefusedError
from cypherturn.graph import (
    EmbeddedFalkorDB,
    FalkorDBEngine,
    find_embedded_servers,
    timeout_promise_s,
)

_TESTS = Path(__file__).resolve().parent.parent / "tests"
# The fault injectors (stub endpoint, kill -9 driver, malformed inputs) are the tests' own,
# so the suite and tests/reliability measure the same thing.
sys.path[:0] = [str(_TESTS / "reliability"), str(_TESTS / "agent")]

import faults  # noqa: E402
from protocol_world import load_heroes  # noqa: E402

PATHOLOGICAL = {
    "UNWIND range(1e8) count": "UNWIND range(1, 100000000) AS x RETURN count(x)",
    "reduce over range(5e7)": "RETURN reduce(s = '', x IN range(1, 50000000) | s + 'x')",
    "range(0, 10^9)": "RETURN size(range(0, 10^9))",
    "cartesian 3 x UNWIND 3000": (
        "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b UNWIND range(1, 3000) AS c "
        "RETURN count(*)"
    ),
    "nested reduce (no literal cost)": (
        "RETURN size([x IN range(1, 3000) | "
        "[y IN range(1, 3000) | reduce(s = 0, z IN range(1, y) | s + z)]])"
    ),
    "range(1, n) built from data": (
        "MATCH (n:Item) WITH max(n.v) * 100000 AS top RETURN size(range(1, top))"
    ),
    "all pairs of nodes": "MATCH (a), (b), (c) RETURN count(*)",
}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


def pathological(limit: float, root: Path) -> list[dict[str, Any]]:
    server = EmbeddedFalkorDB(root / "patho").start()
    engine = FalkorDBEngine(server.client(), "patho", spec="bench")
    engine.write("UNWIND range(1, 2000) AS i CREATE (:Item {v: i})")
    rows = []
    try:
        for name, query in PATHOLOGICAL.items():
            started = time.monotonic()
            try:
                engine.execute(query, timeout_s=limit)
                outcome = "answered"
            except QueryTimeoutError as e:
                outcome = type(e).__name__
            except QueryError as e:
                outcome = f"{type(e).__name__}: {e}"[:60]
            elapsed = time.monotonic() - started
            after = time.monotonic()
            engine.execute("RETURN 1", timeout_s=10)
            rows.append(
                {
                    "query": name,
                    "returned_s": round(elapsed, 3),
                    "promise_s": timeout_promise_s(limit),
                    "held": elapsed <= timeout_promise_s(limit),
                    "outcome": outcome,
                    "next_query_ms": round((time.monotonic() - after) * 1000, 1),
                }
            )
            print(f"  {name:34} {elapsed:6.2f} s  {outcome}", flush=True)
    finally:
        engine.close()
        server.stop(force=True)
    return rows


_HOLD = """
import sys, time
from cypherturn.graph import EmbeddedFalkorDB
s = EmbeddedFalkorDB(DATA_DIR).start()
print(s.pid, flush=True)
sys.stdin.readline()
"""


def _child(data_dir: Path) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_HOLD).replace("DATA_DIR", repr(str(data_dir)))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, int(child.stdout.readline())


def _left(data_dir: Path, settle_s: float = 5.0) -> int:
    deadline = time.monotonic() + settle_s
    resolved = data_dir.resolve()
    count = 0
    while time.monotonic() < deadline:
        count = sum(1 for s in find_embedded_servers() if Path(s.data_dir) == resolved)
        if count == 0:
            return 0
        time.sleep(0.1)
    return count


def lifecycle(root: Path) -> list[dict[str, Any]]:
    results = []

    def record(fault: str, data_dir: Path, stderr: str = "") -> None:
        orphans = _left(data_dir)
        results.append({"fault": fault, "orphans": orphans, "traceback": "Traceback" in stderr})
        print(f"  {fault:46} orphans {orphans}  traceback {'Traceback' in stderr}", flush=True)

    d = root / "rm"
    child, _ = _child(d)
    shutil.rmtree(d)
    _, err = child.communicate("\n", timeout=60)
    record("data dir removed, then normal exit", d, err)

    d = root / "rm-live"
    child, _ = _child(d)
    shutil.rmtree(d)
    orphans_live = _left(d)
    child.communicate("\n", timeout=60)
    results.append(
        {"fault": "data dir removed, user alive", "orphans": orphans_live, "traceback": False}
    )
    print(f"  {'data dir removed, user alive':46} orphans {orphans_live}", flush=True)

    d = root / "kill9"
    child, _ = _child(d)
    child.send_signal(signal.SIGKILL)
    child.wait()
    record("sole user SIGKILLed", d)

    d = root / "kill9-wd"
    child, pid = _child(d)
    watchdog = json.loads((d / "server.json").read_text())["watchdog_pid"]
    os.kill(watchdog, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _, err = child.communicate("\n", timeout=60)
    record("watchdog SIGKILLed", d, err)

    d = root / "race"
    pair = [_child(d) for _ in range(2)]
    same = pair[0][1] == pair[1][1]
    errs = "".join(c.communicate("\n", timeout=60)[1] for c, _ in pair)
    record(f"two processes start at once (one server: {same})", d, errs)

    d = root / "taken"
    d.mkdir()
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()
        (d / "server.json").write_text(
            json.dumps({"pid": os.getpid(), "port": stranger.getsockname()[1]})
        )
        child, _ = _child(d)
        _, err = child.communicate("\n", timeout=60)
    record("recorded port taken by another process", d, err)
    return results


_WRITES = [
    "CREATE (:Person {name: 'x'})",
    "MERGE (n:Person {name: 'x'}) RETURN n",
    "MATCH (n) SET n.age = 1",
    "MATCH (n) SET n:Admin",
    "MATCH (n) REMOVE n.age",
    "MATCH (n) DELETE n",
    "MATCH (n) DETACH DELETE n",
    "MATCH (n) WITH n CREATE (m:Copy)",
    "MATCH (a), (b) CREATE (a)-[:R]->(b)",
    "UNWIND [1, 2] AS i CREATE (:N {i: i})",
    "MATCH (n) FOREACH (x IN [1] | SET n.f = x)",
    "CREATE INDEX FOR (n:Person) ON (n.name)",
    "DROP INDEX ON :Person(name)",
    "CALL db.idx.fulltext.createNodeIndex('Person', 'name')",
    "CALL db.idx.fulltext.drop('Person')",
    "MATCH (n) RETURN n UNION MATCH (m) SET m.x = 1 RETURN m",
    "OPTIONAL MATCH (n) MERGE (n)-[:R]->(:T)",
    "CREATE CONSTRAINT ON (n:Person) ASSERT n.name IS UNIQUE",
]
_READS = [
    "MATCH (n:Person) RETURN n.name",
    "MATCH (n:Person) WHERE n.name = 'CREATE (x)' RETURN n",
    "MATCH (n) RETURN 'SET n.a = 1' AS text",
    "MATCH (n) WHERE n.name CONTAINS 'DELETE' RETURN count(n)",
    "WITH 1 AS merge RETURN merge",
    "MATCH (drop:Person) RETURN drop.name",
    "MATCH (n) RETURN n.name AS set",
    "MATCH (n) // CREATE (m)\nRETURN count(n)",
    "MATCH (n) /* DETACH DELETE n */ RETURN n LIMIT 1",
    'RETURN "MERGE" AS word',
    "MATCH (n) RETURN n.createdAt ORDER BY n.createdAt",
    "MATCH (n) RETURN n.deleted, n.settings",
]


def _disguise(query: str, rng: random.Random) -> str:
    words = query.split(" ")
    out = []
    for word in words:
        choice = rng.random()
        if choice < 0.3:
            word = word.lower()
        elif choice < 0.5:
            word = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in word)
        out.append(word)
    sep = rng.choice([" ", "  ", "\n", "\t", " /* c */ ", "\u00a0", " \n// note\n"])
    if "//" in query or "/*" in query:
        # A separator inside a comment would end it (Cypher comments do not nest), and turn
        # the commented-out write into a real one.
        sep = " "
    text = sep.join(out) if sep != "\u00a0" else " ".join(out)
    prefix = rng.choice(["", "// generated\n", "/* plan */ ", "  ", "\n\n"])
    suffix = rng.choice(
        [
            "",
            ";",
            " // done",
            "\n",
            " RETURN 'CREATE ok' AS note" if "RETURN" not in query.upper() else "",
        ]
    )
    return prefix + text + suffix


def _checksum(engine: FalkorDBEngine) -> Any:
    return engine._run_trusted(
        "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n), count(r), "
        "collect(DISTINCT labels(n)), collect(DISTINCT keys(n))",
        {},
        write=False,
    )[1]


def write_fuzz(root: Path, count: int, seed: int) -> dict[str, Any]:
    server = EmbeddedFalkorDB(root / "fuzz").start()
    engine = FalkorDBEngine(server.client(), "fuzz", spec="bench")
    engine.write("CREATE (:Person {name: 'Ann', age: 3})-[:KNOWS]->(:Person {name: 'Bob'})")
    rng = random.Random(seed)
    before = _checksum(engine)
    refused = by_guard = 0
    passed: list[str] = []
    try:
        for i in range(count):
            query = _disguise(_WRITES[i % len(_WRITES)], rng)
            try:
                engine.execute(query, timeout_s=5)
                passed.append(query)
            except WriteRefusedError:
                refused += 1
                by_guard += 1
            except QueryError:
                refused += 1  # the engine's read-only mode or its parser refused it
        reads = [_disguise(_READS[i % len(_READS)], rng) for i in range(max(200, count // 2))]
        false_refusals = []
        for query in reads:
            try:
                engine.execute(query, timeout_s=5)
            except WriteRefusedError:
                false_refusals.append(query)
            except QueryError:
                pass  # not a write refusal: a disguise the engine rejects as a read
        after = _checksum(engine)
    finally:
        engine.close()
        server.stop(force=True)
    figures = {
        "writes": count,
        "refused": refused,
        "refused_by_guard": by_guard,
        "ran": len(passed),
        "ran_examples": passed[:5],
        "checksum_unchanged": before == after,
        "reads": len(reads),
        "false_refusals": len(false_refusals),
        "false_refusal_examples": false_refusals[:5],
    }
    print(
        f"  writes refused {refused}/{count} (guard {by_guard}), checksum unchanged "
        f"{before == after}; reads falsely refused {len(false_refusals)}/{len(reads)}",
        flush=True,
    )
    return figures


def row_cap(root: Path) -> dict[str, Any]:
    server = EmbeddedFalkorDB(root / "cap").start()
    engine = FalkorDBEngine(server.client(), "cap", spec="bench")
    engine.ensure_graph()
    query = "UNWIND range(1, 1000000) AS x RETURN x"
    try:
        timings: dict[str, list[float]] = {"pushed": [], "after": []}
        for _ in range(3):
            started = time.perf_counter()
            result = engine.execute(query, row_cap=10, timeout_s=60)
            timings["pushed"].append(time.perf_counter() - started)
            assert result.truncated and result.row_count == 10
            started = time.perf_counter()
            response = engine._command("GRAPH.RO_QUERY", query, {}, 60_000, wait_s=120)
            engine._decode(response, 10)
            timings["after"].append(time.perf_counter() - started)
    finally:
        engine.close()
        server.stop(force=True)
    figures = {k: round(min(v), 3) for k, v in timings.items()}
    print(f"  1M rows, cap 10: pushed {figures['pushed']} s, applied after {figures['after']} s")
    return figures


def malformed(root: Path) -> list[dict[str, Any]]:
    home = root / "home-malformed"
    results = []
    for name, (args, named) in faults.malformed_cases(root).items():
        outcome = faults.run_cli(args, faults.cli_env(home))
        line = outcome.stderr_lines[-1] if outcome.stderr_lines else ""
        results.append(
            {
                "input": name,
                "exit": outcome.exit,
                "stderr_lines": len(outcome.stderr_lines),
                "retry_warnings": outcome.retry_lines,
                "names_input": named in line,
                "traceback": outcome.traceback,
                "message": line[:160],
            }
        )
        print(f"  {name:40} exit {outcome.exit}  {line[:90]}", flush=True)
    left = len(faults.servers_under(home))
    results.append(
        {
            "input": "(servers left after these commands)",
            "exit": 0,
            "stderr_lines": 0,
            "retry_warnings": 0,
            "names_input": True,
            "traceback": False,
            "message": str(left),
        }
    )
    return results


def kill_resume(root: Path) -> list[dict[str, Any]]:
    """Kill -9 mid-run of ``bench run`` (3 sessions, 25 turns) and ``qer run`` (12 episodes)."""
    env = faults.cli_env(root / "home-build")
    bench = root / "kill-bench.jsonl"
    built = faults.run_cli(
        ["bench", "build", "--worlds", "magic_academy", "-n", "3", "--out", str(bench)], env
    )
    if built.exit != 0:
        raise SystemExit(f"bench build failed: {built.stderr_lines}")
    rows = []
    for kind, kill_at in (("bench", 6), ("qer", 4)):
        figures = faults.kill_resume(kind, root / f"kill-{kind}", bench=bench, kill_at=kill_at)
        rows.append({"run": f"{kind} run", **asdict(figures)})
        print(
            f"  {kind} run: killed at {figures.at_kill}/{figures.expected} records (exit "
            f"{figures.killed_rc}); resumed exit {figures.resumed_rc}: lost {figures.lost}, "
            f"duplicated {figures.duplicated}, changed {figures.different}, "
            f"servers left {figures.servers_left}",
            flush=True,
        )
    return rows


def endpoint_faults(root: Path) -> dict[str, Any]:
    """Endpoint faults through the real openai client, on a 4-turn session of the real engine."""
    server = EmbeddedFalkorDB(root / "faults").start()
    engine = FalkorDBEngine(server.client(), "heroes", spec="bench")
    load_heroes(engine)
    rows = []
    try:
        for fault in ("500", "429", "timeout", "reset", "malformed_tool_call"):
            for persistent in (False, True):
                if fault == "malformed_tool_call" and not persistent:
                    continue
                out = root / f"fault-{fault}-{persistent}"
                figures = faults.play_fault(engine, out, fault, persistent=persistent)
                rows.append(asdict(figures))
                print(
                    f"  {fault:20} {'persistent' if persistent else 'transient ':10} calls "
                    f"{figures.calls:2}  completed {figures.completed}  infra "
                    f"{figures.infra_failures}  scored turns {figures.scored_turns}  "
                    f"{figures.seconds} s",
                    flush=True,
                )
    finally:
        engine.close()
        server.stop(force=True)
    calls, error = faults.stream_reset()
    print(f"  reset mid-stream: {calls} call(s); {error[:90]}", flush=True)
    return {"runs": rows, "stream_reset": {"calls": calls, "error": error}}


def _write_readme(out: Path, figures: dict[str, Any], limit: float, command: str) -> None:
    lines = [
        "# Reliability suite",
        "",
        f"Command: `{command}`. Machine: {os.cpu_count()} cores, shared with other jobs.",
        "",
        f"## Pathological queries (limit {limit} s, promise {timeout_promise_s(limit)} s)",
        "",
        "| query | returned (s) | held | outcome | next `RETURN 1` (ms) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['query']} | {r['returned_s']} | {'yes' if r['held'] else '**no**'} | "
        f"{r['outcome']} | {r['next_query_ms']} |"
        for r in figures["pathological"]
    ]
    lines += [
        "",
        "## Lifecycle faults",
        "",
        "| fault | servers left | traceback |",
        "|---|---|---|",
    ]
    lines += [
        f"| {r['fault']} | {r['orphans']} | {'yes' if r['traceback'] else 'no'} |"
        for r in figures["lifecycle"]
    ]
    fuzz = figures["write_fuzz"]
    lines += [
        "",
        "## Write fuzz",
        "",
        f"- {fuzz['refused']} of {fuzz['writes']} disguised writes refused "
        f"({fuzz['refused_by_guard']} by the tokenizer guard, the rest by the engine); "
        f"graph checksum unchanged: {fuzz['checksum_unchanged']}.",
        f"- {fuzz['false_refusals']} of {fuzz['reads']} look-alike reads falsely refused.",
    ]
    if fuzz["ran_examples"]:
        lines.append(f"- writes that ran: {fuzz['ran_examples']}")
    if fuzz["false_refusal_examples"]:
        lines.append(f"- false refusals: {fuzz['false_refusal_examples']}")
    cap = figures["row_cap"]
    lines += [
        "",
        "## Row cap (1,000,000 rows, cap 10, best of 3)",
        "",
        f"- pushed into the query (`LIMIT 11`): {cap['pushed']} s",
        f"- applied after the reply: {cap['after']} s",
        "",
        "## Malformed inputs",
        "",
        "| input | exit | error lines | retry warnings | names input | traceback | message |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['input']} | {r['exit']} | {r['stderr_lines']} | {r['retry_warnings']} | "
        f"{'yes' if r['names_input'] else '**no**'} | {'yes' if r['traceback'] else 'no'} | "
        f"{r['message'].replace('|', '/')} |"
        for r in figures["malformed"]
    ]
    lines += [
        "",
        "## Kill -9 mid-run (resumed with the same command, compared with an unbroken run)",
        "",
        "| run | records | at kill | killed exit | resumed exit | lost | duplicated | changed "
        "| servers left | traceback |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['run']} | {r['expected']} | {r['at_kill']} | {r['killed_rc']} | "
        f"{r['resumed_rc']} | {r['lost']} | {r['duplicated']} | {r['different']} | "
        f"{r['servers_left']} | {'yes' if r['traceback'] else 'no'} |"
        for r in figures["kill_resume"]
    ]
    ep = figures["endpoint_faults"]
    lines += [
        "",
        "## Endpoint faults (one 4-turn guided session; 4 attempts, 0.05 s apart, "
        "`Retry-After` honoured up to 2 s; 0.5 s request timeout)",
        "",
        "| fault | kind | requests | faults injected | completed | infra failures (unscored) "
        "| scored turns | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['fault']} | {'persistent' if r['persistent'] else 'transient (2 calls)'} | "
        f"{r['calls']} | {r['injected']} | {r['completed']} | {r['infra_failures']} | "
        f"{r['scored_turns']} | {r['seconds']} |"
        for r in ep["runs"]
    ]
    lines += [
        "",
        f"- reset mid-stream of a streamed chat, after tokens were shown: "
        f"{ep['stream_reset']['calls']} request (not retried): "
        f"`{ep['stream_reset']['error']}`",
        "",
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "figures.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=1.0, help="query timeout, seconds")
    parser.add_argument("--writes", type=int, default=540, help="disguised writes to try")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--out", type=Path, default=Path("docs/results/reliability"))
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="cypherturn-reliability-") as tmp:
        root = Path(tmp)
        print("pathological queries:")
        figures["pathological"] = pathological(args.limit, root)
        print("lifecycle faults:")
        figures["lifecycle"] = lifecycle(root)
        print("write fuzz:")
        figures["write_fuzz"] = write_fuzz(root, args.writes, args.seed)
        print("row cap:")
        figures["row_cap"] = row_cap(root)
        print("malformed inputs:")
        figures["malformed"] = malformed(root)
        print("kill -9 mid-run:")
        figures["kill_resume"] = kill_resume(root)
        print("endpoint faults:")
        figures["endpoint_faults"] = endpoint_faults(root)
    command = "python benchmarks/bench_reliability.py " + " ".join(sys.argv[1:])
    _write_readme(args.out, figures, args.limit, command.strip())
    print(f"wrote {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
