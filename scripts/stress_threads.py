"""Long run of the threads test: ``python scripts/stress_threads.py [SECONDS] [RUNS]``.

Runs ``tests/acl/test_threads.run_mix`` (8 threads: captures in GLOBAL / THREAD_LOCAL / RELAXED
mode and eager work with events across streams, every read-back checked) RUNS times for
SECONDS each, and prints per run the iterations, errors, hung threads and leaked resources.
Exit status 0 when every run was clean.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "acl"))
from test_threads import run_mix  # noqa: E402


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    bad = 0
    for k in range(runs):
        r = run_mix(seconds)
        clean = not (r["errors"] or r["hung"] or r["leaked"])
        bad += not clean
        print(f"run {k + 1}/{runs}: {sum(r['iterations'])} iterations {r['iterations']}, "
              f"errors {len(r['errors'])}, hung {len(r['hung'])}, leaked {r['leaked'] or 'none'}",
              flush=True)
        for e in r["errors"][:2]:
            print(e)
    print(f"{runs - bad} of {runs} runs clean")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
