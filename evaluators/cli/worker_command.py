"""`python -m evaluators worker`: a Celery worker over the queue (TOOLBOARD_BROKER_URL) with toolboard's
settings (engine/queue_app.py): prefork processes, one run each at a time, late acknowledgement, a dead
process's run put back at once, a time limit per run. Each worker uses its own store and response cache
(TOOLBOARD_HOME) and reads API keys from its own environment."""

from __future__ import annotations

import argparse
import logging
import os
import socket

from evaluators.core.environment import check_switches
from evaluators.core.errors import ToolboardError
from evaluators.engine.endpoint_guard import guard_hub_requests
from evaluators.engine.queue_app import BROKER_ENV, settings_from_env, shown_url
from evaluators.engine.queue_worker import make_celery


def worker_arguments(args: argparse.Namespace, queue: str) -> list[str]:
    """Celery's `worker` command line for our flags."""
    if args.concurrency < 1:
        raise ToolboardError("--concurrency must be at least 1")
    return ["worker", "--pool=prefork", f"--concurrency={args.concurrency}", f"--queues={queue}",
            f"--hostname={args.hostname or f'worker-{os.getpid()}@' + socket.gethostname()}", f"--loglevel={args.loglevel}",
            "--without-gossip"]


def worker_command(args: argparse.Namespace) -> int:
    check_switches()  # a public run's rules are this host's TOOLBOARD_PUBLIC too: a typo stops the worker at start
    settings = settings_from_env()
    if settings is None:
        raise ToolboardError(f"a worker takes runs from a queue: set {BROKER_ENV}=redis://HOST:6379/0 (the same as the app's)")
    argv = worker_arguments(args, settings.queue)
    print(f"toolboard worker on {shown_url(settings.broker_url)}, queue {settings.queue!r}, "
          f"{args.concurrency} run(s) at a time", flush=True)
    # Every request's line from the HTTP client would drown the worker's own log.
    for noisy in ("httpx", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    guard_hub_requests()  # a public deployment's runs download their data from the Hub here
    make_celery(settings).worker_main(argv=argv)
    return 0
