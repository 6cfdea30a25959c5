"""Cold start (issue: compile less, compile once): ``import npusim`` and the first synchronize of
an acl memset plus an ``EasyOPf`` launch, in a new process with an empty ``NUMBA_CACHE_DIR`` and
then with the cache it left. Built-in kernel bodies compile at first launch
(``KernelTable.register_lazy``). Prints the figures; asserts nothing on time.

Session 12: the cold first synchronize is the engine's compile, ~42 numba functions of 0.1-1 s
each and ``run`` itself ~4 s (numba's compile events, exclusive times; LLVM's optimisation is
only ~4 s of it: ``NUMBA_OPT=0`` still takes ~15 s). ``_finish`` was compiled five times, once per
``R_*`` code ``run`` handed it as an int literal; with the codes ``np.int64`` it compiles once:
18.9 -> 17.3 s (medians of 3 interleaved pairs, each from an empty cache; this machine's figure
moves +-10 % between identical runs). Making the inlined helpers LLVM-inlined plain functions
instead (``forceinline``) was slower, 23.9 s: every plain function pays numba's per-function
pipeline, and ``_t_set`` compiled twice (its ``release`` flag as a literal). With the seven rare
opcodes (MEM_WRITE_VALUE, MEM_WAIT_VALUE, STREAM_ACTIVE, COND_FIRST, COND_JUMP_BACK, SQE_UPDATE,
STREAM_SWITCH) cut out of ``_execute`` — an experiment, not kept — the same program's cold first
synchronize took 13.8 / 14.7 s against 20.3 s for the full engine in the same hour. That is an
upper bound for compiling rare opcodes behind addresses at first use, as the built-in kernels
are: COND_FIRST and COND_JUMP_BACK run every WHILE iteration (~105 ns each now, the 8 M/s
target), so they cannot pay a call through an address that rebuilds the engine's array views;
the other five are ~2.3 s of exclusive compile time, not enough alone for 15 s.

Session 13: those five and MEMCPY's address modes (``_op_memcpy_mode``, 0.79 s) are now bodies,
cfuncs built at first use and called by address (``engine.body``, docs/architecture.md "Rare
opcodes' bodies"). Cold first synchronize, 3 interleaved pairs from empty caches, the child
below, c3d3a81 against the change: 16.49 / 13.70 / 14.80 s -> 9.99 / 10.48 / 12.37 s (median
14.80 -> 10.48 s). The bodies' own first use, after the engine: 0.5-1.3 s each and ~4.9 s for
all six in a process from an empty cache (they cost ~3 s inside the engine: a cfunc pays its
own pipeline), 0.3-0.4 s each when only the bodies' entries are missing, and a few ms from a
warm cache; ``test_rare_bodies_cold_then_warm`` prints them.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import time; t0=time.perf_counter()
import npusim as ns; from npusim import acl
t1=time.perf_counter()
acl.init(); acl.rt.set_device(0); s,_=acl.rt.create_stream(); x,_=acl.rt.malloc(64,0)
acl.rt.memset_async(x,64,1,64,s); acl.rt.synchronize_stream(s)
dev=ns.Device(); st=dev.stream(); b=dev.malloc(64); st.launch("EasyOPf",1,args=(b,)); st.synchronize()
t2=time.perf_counter(); print(f"import {t1-t0:.2f}s first sync {t2-t1:.2f}s total {t2-t0:.2f}s")
"""


def _child(cache_dir: str, program: str = CHILD) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    return subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True, timeout=900).stdout.strip()


def test_cold_then_warm_start(bench_report):
    with tempfile.TemporaryDirectory() as d:
        bench_report(f"[cold start] empty numba cache: {_child(d)}")
        bench_report(f"[cold start] warm numba cache:  {_child(d)}")


BODIES = """
import time
import npusim.device.engine as E
t = []
for b in range(E.N_BODIES):
    t0 = time.perf_counter(); E.body(b); t.append(time.perf_counter() - t0)
print("bodies " + " ".join(f"{x:.2f}" for x in t) + f" s, all {sum(t):.2f} s")
"""


def test_rare_bodies_cold_then_warm(bench_report):
    """The rare opcodes' bodies (``engine.B_*``), each built at its first use after the first
    synchronize: from an empty cache, then from the cache that left."""
    with tempfile.TemporaryDirectory() as d:
        for label in ("empty", "warm "):
            out = _child(d, CHILD + BODIES).replace("\n", "; ")
            bench_report(f"[cold start] {label} numba cache, then every rare body: {out}")
