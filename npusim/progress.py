"""Progress bars for long work (big captures, long replays), shown only once the work has taken
more than a couple of seconds of wall time, on stderr — and only when stderr is a terminal, so
a redirected log gets no carriage-return lines. ``NPUSIM_PROGRESS=0`` turns them off, ``=1``
forces them on. Uses tqdm when it is installed. Making a ``Progress`` costs one clock read:
everything else waits for the first ``update``."""
from __future__ import annotations

import os
import sys
import time

SHOW_AFTER_S = 2.0


def enabled() -> bool:
    """Show bars? ``NPUSIM_PROGRESS`` 0 / 1, else only when stderr is a terminal."""
    flag = os.environ.get("NPUSIM_PROGRESS")
    if flag is not None:
        return flag != "0"
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """``update(n)`` as work is done; nothing is printed for work that ends quickly."""

    __slots__ = ("desc", "unit", "total", "t0", "done", "bar")

    def __init__(self, desc: str, unit: str, total: int | None = None):
        self.desc, self.unit, self.total = desc, unit, total
        self.t0 = time.perf_counter()
        self.done = 0
        self.bar = None                 # None: not shown yet; False: plain text; else tqdm

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is None:
            if time.perf_counter() - self.t0 < SHOW_AFTER_S or not enabled():
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
