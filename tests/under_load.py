"""`make test-loaded`: a command (the test suite) run beside CPU burners, as on a machine busy with
other work, which is where tests that count on timing fail.

    python -m tests.under_load BURNERS COMMAND...

BURNERS processes spin on the CPU until the command ends, however it ends: they are stopped at its
end, on Ctrl-C and SIGTERM, and die with this process even when it is killed (PR_SET_PDEATHSIG).
The exit code is the command's.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import suppress

from workers.temporal_server import _die_with_parent

BURN = "while True: pass"


def main(arguments: list[str]) -> int:
    if len(arguments) < 2 or not arguments[0].isdigit():
        print("usage: python -m tests.under_load BURNERS COMMAND...", file=sys.stderr)
        return 2
    burners = [subprocess.Popen([sys.executable, "-c", BURN], preexec_fn=_die_with_parent)
               for _ in range(int(arguments[0]))]
    # SIGTERM ends the run as Ctrl-C does: through the `finally` below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"under load: {len(burners)} CPU burner(s) beside `{' '.join(arguments[1:])}`", file=sys.stderr, flush=True)
    try:
        return subprocess.call(arguments[1:])
    except KeyboardInterrupt:
        return 130
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            with suppress(ChildProcessError):
                burner.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
