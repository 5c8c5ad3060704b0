import gc

# Start-up allocates hundreds of thousands of objects (the SDK's modules, the samples) and frees almost none:
# the collector's passes over them are wasted. `run` turns it back on once its run is created (run_command),
# every other command at once (cli.main).
gc.disable()

import atexit  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

from evaluators.cli import main  # noqa: E402


def _leave(code: int) -> None:
    """End the process once the command is done, without the interpreter's teardown: freeing every module
    and object one by one takes ~0.2 s once the SDK is loaded, and nothing is left to do by then (the
    command has closed what it wrote). Exit handlers still run and the output is flushed first; a process
    with other threads still going, or output that cannot be flushed, ends the usual way."""
    if any(thread is not threading.main_thread() and not thread.daemon for thread in threading.enumerate()):
        raise SystemExit(code)
    atexit._run_exitfuncs()  # they are run once: the interpreter finds none left if it ends the usual way
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)


_leave(main())
