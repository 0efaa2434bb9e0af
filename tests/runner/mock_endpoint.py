"""A local OpenAI-compatible chat-completions endpoint that follows a script of statuses and replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """What the endpoint answers, call by call: ``(status, reply text)``; the last entry repeats."""

    def __init__(self, answers: list[tuple[int, str]]) -> None:
        self.answers = answers
        self.calls = 0
        self.lock = threading.Lock()

    def next(self) -> tuple[int, str]:
        with self.lock:
            answer = self.answers[min(self.calls, len(self.answers) - 1)]
            self.calls += 1
            return answer


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """Serve the script on 127.0.0.1; yields the base URL (``http://127.0.0.1:PORT/v1``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            status, text = script.next()
            if status == 200:
                body = {
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
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
            else:
                body = {"error": {"message": text, "type": "server_error"}}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
