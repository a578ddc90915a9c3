"""A tiny real HTTP server whose answers a test scripts, for what the Warren server cannot be
made to do on demand: answer late, answer a 429 that clears at once, answer garbage."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Dict, List, Optional, Tuple, Type

# (status, headers, body) for each request in turn; the last one repeats.
Answer = Tuple[int, List[Tuple[str, str]], bytes]


class StubServer:
    def __init__(self, answers: List[Answer], delay: float = 0.0, drop_idle: bool = False) -> None:
        self.answers = answers
        self.delay = delay
        # Close each connection after answering, without saying so: what a server does to a
        # kept-alive connection that stayed idle past its timeout.
        self.drop_idle = drop_idle
        self.requests: List[Tuple[str, str, int]] = []  # method, path, client port
        self.headers: List[Dict[str, str]] = []
        self.bodies: List[bytes] = []
        self.times: List[float] = []  # time.monotonic() when each request had been read
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                stub.bodies.append(self.rfile.read(length))
                stub.times.append(time.monotonic())
                stub.requests.append((self.command, self.path, self.client_address[1]))
                stub.headers.append(dict(self.headers.items()))
                if stub.delay:
                    threading.Event().wait(stub.delay)
                status, headers, body = stub.answers[min(len(stub.requests), len(stub.answers)) - 1]
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                if stub.drop_idle:
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # shutdown() returns once serve_forever next looks, every poll_interval: at the default
        # 0.5 s every test using a stub would wait half a second for it to stop.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
