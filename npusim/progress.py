"""Progress bars for long work (big captures, long replays), shown only once the work has taken
more than a couple of seconds of wall time, on stderr. Uses tqdm when it is installed."""
from __future__ import annotations

import os
import sys
import time

SHOW_AFTER_S = 2.0


class Progress:
    """``update(n)`` as work is done; nothing is printed for work that ends quickly."""

    def __init__(self, desc: str, unit: str, total: int | None = None):
        self.desc, self.unit, self.total = desc, unit, total
        self.t0 = time.perf_counter()
        self.done = 0
        self.bar = None
        self.enabled = os.environ.get("NPUSIM_PROGRESS", "1") != "0"

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.bar is None:
            if time.perf_counter() - self.t0 < SHOW_AFTER_S:
                return
            try:
                from tqdm import tqdm    # optional, and only once some work has run long
                self.bar = tqdm(desc=self.desc, unit=self.unit, unit_scale=True,
                                total=self.total, file=sys.stderr, leave=False)
                self.bar.update(self.done)
                return
            except ImportError:
                self.bar = False
        if self.bar is not False:
            self.bar.update(n)
        else:
            rate = self.done / max(time.perf_counter() - self.t0, 1e-9)
            print(f"\r{self.desc}: {self.done:,} {self.unit} ({rate:,.0f}/s)", end="",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is False:
            print(file=sys.stderr)
        elif self.bar is not None:
            self.bar.close()
        self.bar = None
