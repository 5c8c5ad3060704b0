import gc

# Start-up allocates hundreds of thousands of objects (the SDK's modules, the samples) and frees almost none:
# the collector's passes over them are wasted. `run` turns it back on once its run is created (run_command),
# every other command at once (cli.main).
gc.disable()

import sys  # noqa: E402

from evaluators.cli import main  # noqa: E402

# The usual end: every exit handler runs, whenever it was registered, and the interpreter's own teardown follows.
sys.exit(main())
