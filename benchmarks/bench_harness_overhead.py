"""Harness overhead of the benchmark runner against a mock OpenAI-compatible endpoint.

Run: ``python benchmarks/bench_harness_overhead.py [--sessions 50] [--latency 0.2]
[--concurrency 1,4,16] [--protocol guided]``.

Builds ``--sessions`` sessions on one world (private embedded FalkorDB in a
temporary directory), serves a local chat-completions endpoint in a separate
process (as a real server is, so its CPU is not charged to the harness) that
sleeps ``--latency`` seconds per call and plays a fixed policy (EXECUTE_CYPHER
of a count query, then SUBMIT_ANSWER: two actions per turn),
runs the sessions at each concurrency through :func:`cypherturn.runner.run_benchmark`
(real OpenAI SDK, real engine, real per-action fsynced logs) and prints the
wall time against the ideal ``calls x latency / concurrency`` and the overhead
fraction (goal: at most 2%). With concurrency > 1 the ideal assumes perfect
packing; sessions of unequal length make the real optimum longer, so the
makespan of the best schedule of the same sessions (longest first, exact call
counts) is printed too, with the overhead against it. The harness's own CPU
time per call (this process: SDK, prompts, parsing, engine client, logs) is
printed as well; unlike wall-clock overhead it barely moves when other jobs
share the cores.
"""

from __future__ import annotations

import argparse
import heapq
import json
import multiprocessing
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, GraphEngine, GraphSchema
from cypherturn.models import NO_RETRY, OpenAIChatModel
from cypherturn.protocols import ProtocolSettings
from cypherturn.records import ProtocolName
from cypherturn.runner import StepLogged, log_path, read_log, run_benchmark
from cypherturn.sessions import build_sessions, plan_build
from cypherturn.worlds import get_world, load_world

QUERY = "MATCH (n) RETURN count(n) AS nodes"


def _handler(latency: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body leave in two writes; with Nagle on, the second waits for
        # the client's delayed ACK (~40 ms), which real servers do not add
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            # the endpoint's whole service time is the latency: its own parsing and
            # encoding are taken out of the sleep, not added to it
            started = time.perf_counter()
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            last = body["messages"][-1]["content"]
            action = "SUBMIT_ANSWER" if last.startswith("Observation:") else "EXECUTE_CYPHER"
            text = json.dumps({"action": action, "input": QUERY})
            data = json.dumps(
                {
                    "id": "mock",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "mock",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                }
            ).encode()
            time.sleep(max(0.0, latency - (time.perf_counter() - started)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


def _serve(latency: float, port: multiprocessing.SimpleQueue) -> None:  # type: ignore[type-arg]
    http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(latency))
    port.put(http.server_address[1])
    http.serve_forever()


def _makespan(calls: list[int], latency: float, concurrency: int) -> float:
    """Finish time of ``concurrency`` workers taking sessions longest first (seconds)."""
    workers = [0.0] * concurrency
    for n in sorted(calls, reverse=True):
        heapq.heappush(workers, heapq.heappop(workers) + n * latency)
    return max(workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--world", default="magic_academy")
    parser.add_argument("--protocol", default="guided", choices=["guided", "agentic"])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "db").start()
        engine = FalkorDBEngine(server.client(), f"bench_{args.world}", spec="bench")
        world = get_world(args.world)
        load_world(engine, world, replace=True)

        def provider(name: str) -> tuple[GraphEngine, GraphSchema]:
            return engine, world.declared_schema()

        plan = plan_build(seed=0, worlds=[args.world], sessions=args.sessions)
        sessions, _ = build_sessions(plan, provider, seed=0)
        turns = sum(len(s.turns) for s in sessions)
        port: multiprocessing.SimpleQueue[int] = multiprocessing.SimpleQueue()
        endpoint = multiprocessing.Process(target=_serve, args=(args.latency, port), daemon=True)
        endpoint.start()
        model = OpenAIChatModel(
            "mock", base_url=f"http://127.0.0.1:{port.get()}/v1", retry=NO_RETRY
        )
        settings = ProtocolSettings(protocol=ProtocolName(args.protocol))
        print(
            f"{len(sessions)} sessions, {turns} turns, 2 actions per turn, "
            f"model latency {args.latency * 1000:.0f} ms"
        )
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            out = Path(tmp) / f"run-c{concurrency}"
            started = time.perf_counter()
            cpu_started = time.process_time()
            summary = run_benchmark(
                sessions,
                model=model,
                engines=lambda _name: engine,
                settings=settings,
                out_dir=out,
                concurrency=concurrency,
            )
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
            steps_of = {
                s.session_id: [
                    e.step
                    for e in read_log(log_path(out, s.session_id))
                    if isinstance(e, StepLogged)
                ]
                for s in sessions
            }
            steps = [step for logged in steps_of.values() for step in logged]
            calls = len(steps)
            ideal = calls * args.latency / concurrency
            best = _makespan([len(v) for v in steps_of.values()], args.latency, concurrency)
            model_s = sum(st.model_latency_s for st in steps)
            engine_s = sum(st.execution_latency_s for st in steps)
            print(
                f"concurrency {concurrency:3d}: {summary.completed} sessions, {calls} calls, "
                f"wall {wall:7.2f} s, ideal {ideal:7.2f} s, overhead {(wall - ideal) / ideal:6.2%}"
                f" (best schedule {best:7.2f} s, overhead {(wall - best) / best:6.2%}); "
                f"per call: model round trip {model_s / len(steps) * 1000:6.1f} ms, "
                f"engine {engine_s / len(steps) * 1000:5.1f} ms, "
                f"harness CPU {cpu / calls * 1000:5.2f} ms"
            )
        endpoint.terminate()
        engine.close()
        server.stop()


if __name__ == "__main__":
    main()
