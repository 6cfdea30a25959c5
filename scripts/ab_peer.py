"""A/B of ``runtime/peer.py``'s stall path in one process: the bridge walk of main before
issue 38's speed work (``old_pump`` / ``old_progress`` below, as they were) against the current
``pump`` / ``_progress``, on replays of the 8-rank decode step of ``bench/hccl_step.py``,
alternated so the machine's drift hits both alike.

    python scripts/ab_peer.py [--pairs 7] [--layers 48]

Prints the median CPU ms per replay of each (``time.process_time``: the machine is shared), the new/old ratio (median of the pairs' ratios), and
one replay of each timed piece by piece (engine calls, pumps, the rest); then the capture of
the step on every rank with the old ``peer.move`` (``old_move``) and the current one.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

from hccl_step import Step, where_time_goes  # noqa: E402
import numpy as np  # noqa: E402

from npusim.device import engine as E  # noqa: E402
from npusim.device import peer as P  # noqa: E402
from npusim.device import sqe as S  # noqa: E402
from npusim.runtime import args as A  # noqa: E402
from npusim.runtime import peer  # noqa: E402
from npusim.runtime.runtime import RT  # noqa: E402


def old_pump() -> set:
    got = set()
    for b in peer.BRIDGES:
        if not b.open:
            continue
        sync = b.src.state.sync
        if sync[b.src_slot, E.Y_VAL] > 0:
            sync[b.src_slot, E.Y_VAL] = 0
            b.dst.state.signal(b.dst_slot, int(sync[b.src_slot, E.Y_TIME]))
            b.delivered += 1
            got.add(b.dst)
    return got


def old_progress(dev) -> bool:
    if not peer.BRIDGES:
        return False
    got = peer.pump()
    while dev not in got:
        moved = bool(got)
        for other in list(RT.devices.values()):
            if other is not dev:
                before = int(other.state.st[E.E_STEPS])
                other._run()
                moved |= int(other.state.st[E.E_STEPS]) != before
        got = peer.pump()
        if not got and not moved:
            return False
    return True


def old_register(dev) -> None:
    mem = dev.state.mem
    i = dev.id * P.A_COLS
    P.ARENAS[i + P.A_PTR] = mem.arena.ctypes.data
    P.ARENAS[i + P.A_SIZE] = mem.arena.nbytes


def old_owner_of(addr: int, n: int):
    for dev in RT.devices.values():
        mem = dev.state.mem
        if mem.is_device(addr) or mem.is_pinned_host(addr):
            a = mem.allocation_of(addr)
            if a is None or addr + n > a[0] + a[1]:
                return None, -1
            return dev, mem.to_off(addr)
    return None, -1


def old_move(stream, dst: int, src: int, n: int, dur: int, host_ns: int, kid: int = -1,
             extra=()) -> int:
    dd, doff = old_owner_of(dst, n)
    sd, soff = old_owner_of(src, n)
    old_register(dd)
    old_register(sd)
    words = [dd.id, doff, sd.id, soff, n, *extra, P.ARENAS.ctypes.data]
    addr = A.place(stream, np.array(words, np.int64).tobytes())
    return stream.submit(S.OP_KERNEL, host_ns, P.COPY_KID if kid < 0 else kid, addr,
                         8 * len(words), max(1, int(dur)), 0, 1)


NEW_MOVE = peer.move
NEW = (peer.pump, peer._progress)
OLD = (old_pump, old_progress)


def use(impl) -> None:
    hooks = peer.STALL_HOOKS
    i = next(k for k, h in enumerate(hooks) if h in (NEW[1], OLD[1]))
    peer.pump, hooks[i] = impl
    peer._progress = impl[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--layers", type=int, default=48)
    a = ap.parse_args()
    step = Step(layers=a.layers)
    models = step.capture_all(True)
    times = {"old": [], "new": []}
    for name, impl in (("old", OLD), ("new", NEW)):
        use(impl)
        step.replay(models)
        step.check_sum()
    before = step.steps()
    step.replay(models)
    sqes = step.steps() - before
    for _ in range(a.pairs):
        for name, impl in (("old", OLD), ("new", NEW)):
            use(impl)
            t0 = time.process_time()         # CPU time: 6 helpers share 2 cores
            step.replay(models)
            times[name].append(time.process_time() - t0)
    step.check_sum()
    ratios = [n / o for n, o in zip(times["new"], times["old"])]
    print(f"{sqes:,} SQEs per replay over {step.ranks} devices, {a.pairs} pairs")
    for name in ("old", "new"):
        med = statistics.median(times[name])
        print(f"  {name}: {med * 1e3:8.2f} ms per replay  {sqes / med / 1e6:6.2f} M SQE/s")
    print(f"  new / old = {statistics.median(ratios):.3f} (median of the pairs' ratios)")
    for name, impl in (("old", OLD), ("new", NEW)):
        use(impl)
        w = where_time_goes(lambda: step.replay(models))
        print(f"  {name}: {w['total'] * 1e3:.2f} ms = engine {w['engine'] * 1e3:.2f} "
              f"({w['runs']} runs) + pump {w['pump'] * 1e3:.2f} ({w['pumps']}) + host "
              f"{w['host'] * 1e3:.2f} ({w['stalls']} stalls)")
    use(NEW)
    # capture: the step on every rank, the old and the current peer.move (HCCL's copies)
    cap = {"old": [], "new": []}
    tasks = 0
    for _ in range(max(3, a.pairs // 2)):
        for name, mv in (("old", old_move), ("new", NEW_MOVE)):
            peer.move = mv
            t0 = time.process_time()
            ms = step.capture_all(True)
            cap[name].append(time.process_time() - t0)
            tasks = sum(step.tasks(m) for m in ms)
            step.destroy(ms)
    peer.move = NEW_MOVE
    for name in ("old", "new"):
        med = statistics.median(cap[name])
        print(f"  capture {name} peer.move: {med * 1e3:8.2f} ms for {step.ranks} ranks  "
              f"{med / tasks * 1e6:.2f} us per task captured")
    print(f"  capture new / old = "
          f"{statistics.median([n / o for n, o in zip(cap['new'], cap['old'])]):.3f}")


if __name__ == "__main__":
    main()
