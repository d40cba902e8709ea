"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests: scripted, no network."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    """Serves /v1/embeddings and /v1/chat/completions.

    `script` is a list of actions consumed one per request: "ok", "429", "500", "400", "401",
    "404", "timeout" (answer after delay_s), "malformed" (not JSON), "html" (a web page with
    status 200), "retry-after" (429 asking for a 1 s pause), "stall" (say nothing for 60 s),
    "trickle" (headers, then one byte of the answer every trickle_s), "flood" (a body without end,
    as fast as it can be read); once it is empty every
    request succeeds. Chat answers come from `answers`.
    """

    def __init__(self, script=None, answers=None, dim: int = 8, delay_s: float = 3.0, trickle_s: float = 1.0) -> None:
        self.script = list(script or [])
        self.answers = list(answers or [])
        self.dim, self.delay_s, self.trickle_s = dim, delay_s, trickle_s
        self.requests: list[dict] = []
        self.flooded = 0  # bytes the "flood" action wrote
        self.request_times: list[float] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                owner.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                owner.request_times.append(time.monotonic())
                action = owner.script.pop(0) if owner.script else "ok"
                if action == "timeout":
                    time.sleep(owner.delay_s)
                    action = "ok"
                if action == "stall":
                    time.sleep(60)
                    return
                if action in ("429", "500", "401", "404", "400"):
                    self._send(int(action), {"error": {"message": f"scripted {action}", "type": "test"}})
                    return
                if action == "retry-after":
                    self._send(429, {"error": {"message": "slow down", "type": "test"}}, {"Retry-After": "1"})
                    return
                if action == "html":
                    self._raw(200, "text/html", b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>")
                    return
                if action == "trickle":
                    data = json.dumps(self._completion(body, "```python\ndef f():\n    return 1\n```")).encode()
                    self._raw(200, "application/json", data, pause_s=owner.trickle_s)
                    return
                if action == "flood":  # a body without end, as fast as the client reads it
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    chunk = b'{"choices": [' + b" " * (1 << 20)
                    try:
                        for _ in range(4096):
                            self.wfile.write(chunk)
                            owner.flooded += len(chunk)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                if action == "malformed":
                    self._raw(200, "application/json", b"{this is not json")
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i,
                             "embedding": [float((len(t) + j) % 5) + 0.5 for j in range(owner.dim)]}
                            for i, t in enumerate(inputs)]
                    self._send(200, {"object": "list", "data": data, "model": body.get("model"),
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                    return
                text = owner.answers.pop(0) if owner.answers else ""
                if callable(text):
                    text = text(body)
                self._send(200, self._completion(body, text))

            @staticmethod
            def _completion(body, text):
                return {
                    "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}

            def _raw(self, status, content_type, data, pause_s=0.0):
                """Send `data`; with pause_s, one byte at a time (a server that trickles)."""
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for chunk in ([bytes([b]) for b in data] if pause_s else [data]):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        time.sleep(pause_s)
                except OSError:
                    pass

            def _send(self, status, payload, headers=None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
