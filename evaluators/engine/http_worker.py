"""An HTTP worker process: sends chat requests through the `openai` SDK for the engine's process.

At high concurrency the SDK's own CPU per request (about 1.5 ms here: building the request, its HTTP
stack, parsing) fills the engine's event loop, and answers wait in line for it. Worker processes
carry that work on other cores; the engine keeps the cache, limits, retries and the store.

Protocol, over stdin/stdout (started by `http_pool`; not for people):
- in: one JSON header line per message, a `post` followed by exactly `size` bytes of request body:
  `{"op": "client", "cid": 1, "spec": {...}}`, `{"op": "post", "id": 7, "cid": 1, "size": 123}`,
  `{"op": "cancel", "id": 7}`, `{"op": "drop", "cid": 1}`.
- out: `{"ready": true}` once the SDK is imported and the certificates loaded, then one line per finished post:
  `{"id": 7, "response": {...}}` or `{"id": 7, "failed": {"problem": ..., "retryable": ..., "retry_after": ...}}`.
The API key arrives in a `client` message, lives in memory only and is never printed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import traceback
from typing import Any, BinaryIO, NoReturn

from evaluators.engine.redact import redact
from evaluators.engine.sdk_transport import AttemptFailed, EndpointSpec, make_sdk_client, post_completion, short, tls_context

READ_LIMIT = 1 << 30  # one header line; bodies are read by size


class WorkerServer:
    def __init__(self, out: asyncio.WriteTransport):
        self.out = out
        self.clients: dict[int, tuple[Any, float]] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def reply(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False)
        try:
            line = text.encode()
        except UnicodeEncodeError:  # a lone surrogate (valid in the endpoint's JSON) travels as its \u escape
            line = json.dumps(message).encode()
        self.out.write(line + b"\n")

    async def attempt(self, request_id: int, cid: int, payload: bytes) -> None:
        sdk_client: Any = None
        try:
            sdk_client, timeout = self.clients[cid]
            # post_completion bounds the whole attempt by `timeout` (not each read) and redacts the key.
            self.reply({"id": request_id, "response": await post_completion(sdk_client, payload, timeout)})
        except AttemptFailed as exc:
            self.reply({"id": request_id, "failed": exc.to_json()})
        except asyncio.CancelledError:
            pass  # the engine gave up on this request and expects no answer
        except Exception as exc:  # noqa: BLE001 - reported to the engine, which retries
            problem = redact(f"worker error: {type(exc).__name__}: {exc}", (getattr(sdk_client, "api_key", None),))
            self.reply({"id": request_id, "failed": AttemptFailed(short(problem), True).to_json()})
        finally:
            self.tasks.pop(request_id, None)

    async def handle(self, header: dict[str, Any], reader: asyncio.StreamReader) -> None:
        op = header.get("op")
        if op == "post":
            payload = await reader.readexactly(int(header["size"]))
            request_id = int(header["id"])
            self.tasks[request_id] = asyncio.create_task(self.attempt(request_id, int(header["cid"]), payload))
        elif op == "client":
            spec = EndpointSpec(**header["spec"])
            self.clients[int(header["cid"])] = (make_sdk_client(spec), spec.timeout)
        elif op == "cancel":
            task = self.tasks.get(int(header["id"]))
            if task is not None:
                task.cancel()
        elif op == "drop":
            client = self.clients.pop(int(header["cid"]), None)
            if client is not None:
                await client[0].close()

    async def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        for sdk_client, _ in self.clients.values():
            await sdk_client.close()


async def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    # Imported and loaded before saying ready, so the first request waits for neither.
    import openai  # noqa: F401

    tls_context()

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, stdout)
    server = WorkerServer(out)
    server.reply({"ready": True})
    try:
        while line := await reader.readline():
            await server.handle(json.loads(line), reader)
    finally:
        # End of input: the engine closed the pipe or its process ended; nothing more will be read.
        await server.close()


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the engine cancels its run and then closes this worker's
    # input, which ends it; an interrupt here would only fail the requests still being answered.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def main() -> None:
    _ignore_interrupts()
    # Stdout carries the protocol alone: keep a private copy of it, and send anything a library prints
    # to stderr instead.
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    asyncio.run(serve(sys.stdin.buffer, protocol_out))


def serve_forked(from_engine: int, to_engine: int) -> NoReturn:
    """The life of a worker forked from the engine's process (`http_pool.fork_workers`, which has set
    it to ignore Ctrl-C): serve over the two pipes, then leave at once, running none of the engine's
    exit handlers or finalizers (its open files and database belong to the engine)."""
    code = 0
    try:
        # The engine's stdout may carry a report (--json): whatever a library prints here goes to stderr
        # (the descriptors themselves, whatever sys.stdout has been replaced with).
        os.dup2(2, 1)
        asyncio.run(serve(os.fdopen(from_engine, "rb", 0), os.fdopen(to_engine, "wb", 0)))
    except BaseException:  # noqa: BLE001 - reported, then this process ends whatever happened
        traceback.print_exc()
        code = 1
    finally:
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    main()
