"""The device engine: one jitted loop that runs every SQ of a device in simulated time.

State lives in plain arrays owned by ``npusim.device.state.DeviceState`` (their column layouts are
defined below, one block per table):

* ``pool``  — the SQE pool (``SQE_DTYPE`` rows). SQ ``q`` owns rows ``[base, base+depth)`` used as a
  ring: position ``p`` is row ``base + p % depth``. Eager streams keep appending (head and tail only
  grow); a model stream is replayed by resetting its head to 0 when it is activated.
* ``sqs``   — int64 ``[n, Q_COLS]``: per SQ ring bounds, clock, state, what it waits on, its first
  fault. The clock ``Q_TIME`` is the simulated time (ns) at which the SQ is free again.
* ``sync``  — int64 ``[n, Y_COLS]``: event/notify slots (value, time set, number of parked waiters).
* ``models``— CSR arrays (``mptr``, ``msq``): the head SQs that MODEL_EXECUTE activates.
* ``conds``/``cmodels`` — int64 ``[n, CD_COLS]``: one row per cond handle; its sub-models' engine
  model ids are ``cmodels[CD_MBASE:]``.
* ``ctx``/``mem`` — the memory context and arena (``memory.py``); kernels get both.
* ``kaddr``/``kcost`` — the kernel table (``kernels.py``): body address, cost and unit per kernel.
* ``tc``    — the cost vector (``timing.py``).
* ``trace`` — optional preallocated trace rows; ``st`` — the engine state (``E_*``).

**Scheduling** (``run``) is exact in simulated time: the runnable SQ with the earliest next start
runs, and it keeps running while it stays no later than the second earliest (so a single stream
runs in a tight loop); a synchronization that ties another SQ's start ends the turn (the lowest
SQ goes first). With contention off, an SQ runs its private SQEs (NOP, kernel, memset, plain
memcpy) on past that limit, up to its next synchronization ("run-ahead", ``loop._turn_ends``):
they commute with every other SQ's SQEs, so every time stays the exact-order one
(``E_EXACT``: exact order forced; ``Q_EXACT``: an SQ that never runs ahead). A wait that is not satisfied parks its SQ; the record that satisfies it
un-parks it, and its clock jumps to the record's time. When nothing can run but something is
parked, that is a deadlock: the engine returns ``R_DEADLOCK`` and the host explains it. The
runnable SQs are the leaves of a tournament tree and parked ones are on per-slot waiter lists,
so neither a pick nor a wake scans all SQs. Both live in ``sched``, a buffer the device keeps
between runs, with the list of SQs in play (``live``): each run builds them from that list and
clears them from it when it returns, so a run's fixed cost follows the SQs in play, not the SQs
that exist (idle model SQs of resident graphs, drained streams and their sync slots cost
nothing).

**Semantics** are one small function per opcode (``_op_*``, each documented; ``_execute`` is the
opcode table). An opcode function does the SQE's work and says what happens next (``X_*``): done,
done and parked SQs were woken (the running SQ yields), parked, or faulted.

The engine never decides API errors; it reports device faults (kernel exception, bad address,
unknown opcode, runaway WHILE) by returning ``R_FAULT`` with the SQ and position, and the host maps
them to ACL codes. Every fault leaves the SQ the same way (``_fault_exit``): its clock at the end
of what the faulting SQE was charged, its head past it.

``npusim.testing.reference`` is the same semantics in plain Python (the test oracle), function for
function; a change here is made there too, and ``tests/device/test_engine_reference.py`` compares them.


The package, lowest first (each module imports only the ones above it):

* ``layout.py``  — the tables: every array's column layout, codes and opcode classes (one
  definition each);
* ``sched.py``   — the scheduler: tournament tree, waiter lists, live list, and the steps every
  opcode shares (park, wake, start, fault);
* ``opcodes.py`` — device-memory access, core pools, one ``_op_*`` per hot opcode, the opcode
  table ``_execute`` and the call of a body by address;
* ``bodies.py``  — the rare opcodes' bodies, cfuncs built at their first use (``body``,
  ``provide``);
* ``loop.py``    — ``run``.

Every file of the package is one of ``jitcache.ABI_FILES``: jitted functions of one module inline
those of the others. The names the host, the reference and the tests read are re-exported here:
``npusim.device.engine.run``, ``E.Q_TIME``, ``E.body`` ...
"""
from __future__ import annotations

from .layout import *  # noqa: F401,F403  (the tables: the host reads them as engine.X)
from .layout import _OP_BODY, _OP_PRIV, _OP_UNIT, _WORD  # noqa: F401
from .bodies import _BUILT, body, provide  # noqa: F401
from .loop import run  # noqa: F401
