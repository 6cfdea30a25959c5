"""``npusim profiles``: the chip profiles of :mod:`npusim.profiles` and their key limits."""
from __future__ import annotations

import argparse

from ..profiles import ALIASES, DEFAULT_PROFILE, PROFILES
from .command import Command

_COLUMNS = (("profile", 14), ("SoC", 18), ("AIC", 5), ("AIV", 5), ("SQ depth", 9),
            ("tasks/SQ", 9), ("streams", 8), ("events", 7), ("notifies", 9), ("pad", 4),
            ("SW-SQ", 6), ("cond", 5))


def run(args: argparse.Namespace) -> int:
    cols = _COLUMNS
    print("".join(f"{n:<{w}}" if i < 2 else f"{n:>{w}}" for i, (n, w) in enumerate(cols)))
    for p in PROFILES.values():
        cells = (p.name + ("*" if p.name == DEFAULT_PROFILE else ""), p.soc_version, p.aic_cores,
                 p.aiv_cores, p.rtsq_depth, p.max_task_num_per_stream, p.max_user_streams,
                 p.max_events, p.max_notifies, p.malloc_padding, "yes" if p.software_sq else "no",
                 "yes" if p.cond_supported else "no")
        print("".join(f"{str(c):<{w}}" if i < 2 else f"{str(c):>{w}}"
                      for i, (c, (_, w)) in enumerate(zip(cells, cols))))
    by_target: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        by_target.setdefault(target, []).append(alias)
    print()
    print("* default.  aliases: " + "; ".join(f"{t} = {', '.join(a)}"
                                             for t, a in by_target.items()))
    print("streams = user streams per device (default streams included); pad = aclrtMalloc "
          "padding bytes;\nSW-SQ = capture on software SQs; cond = IF/WHILE/SWITCH tasks. "
          "Choose one with NPUSIM_PROFILE=NAME,\nnpusim.configure(profile=NAME) or "
          "npusim.Device(NAME); sources in npusim/profiles.py.")
    return 0


COMMAND = Command("profiles", "list the chip profiles and their key limits", run)
