"""Trace export: the engine's trace rows as Chrome trace / Perfetto JSON, and their summary.

One row per executed SQE (``device/engine/layout.py`` ``TRACE_DTYPE``): which SQ (stream), opcode,
unit, start and end in simulated ns. The Chrome format wants microseconds; ``ph: "X"`` complete
events, one ``tid`` per stream (the user's name for it when it has one, ``Device.stream(name=)``),
kernels by their defined name (``@npusim.kernel``), copies and memsets with the name of the
buffer they write (``Device.malloc(name=)``), a host row of API calls and a row of the user's
markers (``npusim.trace.mark`` / ``range``, ``docs/timing.md`` "Traces").

A wait's row starts when the wait began and ends when it finished, so its length includes the
time the SQ sat parked: :attr:`Trace.waiting` is that part per row (the row's length less the
SQ's dispatch and the opcode's fixed cost), which ``summary`` reports apart from busy time.
With core contention on (``docs/timing.md`` "Contention") a kernel's row starts when it really
started; the time it waited for cores before is the row's ``val`` (``core_wait_ns`` in its
args), which ``summary`` counts as waiting too.

Several devices (``docs/timing.md`` "Traces", issue 38): :class:`WorldTrace`
(``npusim.trace.world()``) puts every device in one document — a process per device, a track per
stream, the host rows once, each device's rows as its own :class:`Trace` exports them — with an
arrow (a Chrome flow) from each record of a notify between devices (``runtime/peer.py``
``Bridge``) to the wait it satisfied. The runtime's own kernel bodies show by readable names
(``peer copy``), its SDMA ones with the task type ``MEMCPY_ASYNC`` (docs/fidelity.md row 400).

The export is vectorised (``chrome_json``): the text of all rows is built a column at a time in
a byte matrix — the parts rows share (name and stream, opcode, unit) taken from small tables,
the numbers written digit by digit with integer array arithmetic — and the padding dropped at
the end (``bench/test_trace_export.py`` measures it against :meth:`Trace.events`, the per-row
path kept as the reference). Timestamps are written as exact decimal ``<ns>e-3`` µs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..device import engine as E
from ..device.kernels import TABLE, UNIT_DMA, UNIT_NAMES
from ..device.sqe import (N_OPCODES, OP_COND_FIRST, OP_COND_JUMP_BACK, OP_COND_NOTIFY_WAIT,
                          OP_EVENT_WAIT, OP_KERNEL, OP_MEM_WAIT_VALUE, OP_MEMCPY, OP_MEMSET,
                          OP_NAME, OP_NOTIFY_RECORD, OP_NOTIFY_WAIT, OP_TASK_TYPE)
from ..runtime.peer import Bridge
from ..runtime.runtime import RT

WAIT_OPS = (OP_EVENT_WAIT, OP_NOTIFY_WAIT, OP_MEM_WAIT_VALUE, OP_COND_NOTIFY_WAIT)
"""Opcodes whose row may include time parked on a wait."""
NOTIFY_OPS = (OP_NOTIFY_RECORD, OP_NOTIFY_WAIT)
"""Opcodes whose row names the other device when their notify is a bridge between devices."""
_CHUNK = 1 << 18                    # rows turned into text at once (bounded memory)
_RUNTIME_PREFIX = "__npusim_"       # the runtime's own kernel bodies (peer copy, sdma reduce ...)


def sdma_kernels(kids) -> np.ndarray:
    """Per kernel id: True for the runtime's own bodies on the DMA unit (a peer copy, an inline
    reduce): their rows' ``task_type`` is the runtime's for an SDMA copy, ``MEMCPY_ASYNC``
    (``memory_memcpy_async_task.cc`` 295; a reduce is a memcpy task, ``task_base.hpp`` 174;
    docs/fidelity.md row 400)."""
    kids = np.asarray(kids, np.int64)
    sdma = np.array([e.unit == UNIT_DMA and e.name.startswith(_RUNTIME_PREFIX)
                     for e in TABLE.entries] + [False], np.bool_)
    return sdma[np.where((kids >= 0) & (kids < len(TABLE.entries)), kids, len(TABLE.entries))]


def readable(name: str) -> str:
    """A kernel's name as traces show it: a runtime-owned body (``__npusim_peer_copy``, an
    ``aicpu:`` one too) without the prefix and with spaces (``peer copy``); others unchanged."""
    head, _, rest = name.rpartition(":")
    if rest.startswith(_RUNTIME_PREFIX):
        rest = rest[len(_RUNTIME_PREFIX):].replace("_", " ")
        return f"{head}:{rest}" if head and head != "aicpu" else rest
    return name


@dataclass
class Trace:
    rows: np.ndarray              # engine TRACE_DTYPE rows
    stream_names: dict            # sq -> display name
    device_id: int = 0
    host: tuple = ()              # (api name, host start ns, host end ns)
    markers: tuple = ()           # (name, host ns, end ns; -1 for a mark): npusim.trace.mark
    waiting: np.ndarray | None = None   # per row: ns parked on a wait (0: none), int64
    buffer_names: dict = field(default_factory=dict)   # a0 of copy/memset rows -> buffer name
    peers: dict = field(default_factory=dict)   # a0 (slot) of notify rows -> (other device id,
    #                                             the bridge's label, the bridge's key, True on
    #                                             its recording side): notifies between devices

    def __post_init__(self):
        if self.waiting is None:
            self.waiting = np.zeros(len(self.rows), np.int64)

    @classmethod
    def from_device(cls, dev) -> "Trace":
        names = dict(dev.freed_sq_names)             # streams gone: the name they had
        names.update({sq: s.display_name() for sq, s in dev.streams.items()})
        names.update({sq: cs.display_name() for sq, cs in dev.streams_by_sq_model.items()})
        state = dev.state
        rows = state.trace_rows().copy()
        # parked time of waits: the row less the SQ's dispatch and the opcode's fixed cost
        sq = np.minimum(rows["sq"], len(state.sqs) - 1)
        op = np.minimum(rows["op"], N_OPCODES - 1)
        dispatch = state.sqs[:, E.Q_DISPATCH].copy()
        for q, d in state.freed_dispatch.items():    # freed SQs: the dispatch they had
            if q < len(dispatch) and dispatch[q] == 0:
                dispatch[q] = d
        service = dispatch[sq] + state.tc[op]
        waiting = np.where(np.isin(rows["op"], WAIT_OPS),
                           np.maximum(rows["end"] - rows["start"] - service, 0), 0)
        mem = state.mem
        bufs = {}
        if mem.labels:
            for a in np.unique(rows["a0"][np.isin(rows["op"], (OP_MEMCPY, OP_MEMSET))]):
                label = mem.label_of(int(a))
                if label:
                    bufs[int(a)] = label
        # notifies between devices (runtime/peer.py bridges): the device at the other end. The
        # slots' owners now: a slot a bridge dropped since and another bridge took names the
        # newer one in the older rows too
        peers = {}
        for slot, o in list(dev.slot_owner.items()):
            if isinstance(o, Bridge):
                other = o.dst if o.src is dev else o.src
                peers[int(slot)] = (int(other.id), str(o.label), id(o), o.src is dev)
        return cls(rows, names, dev.id, tuple(RT.host_trace), tuple(RT.markers),
                   waiting.astype(np.int64), bufs, peers)

    def __len__(self):
        return len(self.rows)

    def stream_name(self, sq: int) -> str:
        return self.stream_names.get(int(sq), f"sq{int(sq)}")

    def name_of(self, r) -> str:
        if r["op"] == OP_KERNEL and 0 <= r["a0"] < len(TABLE.entries):
            return readable(TABLE.label(int(r["a0"])))
        return OP_NAME[int(r["op"])]

    # ---- time windows ----
    def range_bounds(self, name: str) -> tuple[int, int]:
        """(start, end) host ns of the first ``npusim.trace.range(name)``; KeyError if none."""
        return _range_bounds(self.markers, name)

    def window(self, start=None, end: int | None = None) -> "Trace":
        """The part of the trace that overlaps ``[start, end)`` (simulated ns; None: open), or
        ``window("step 3")``: the span of that ``npusim.trace.range``. Rows, host calls and
        markers that overlap the window are kept whole."""
        if isinstance(start, str):
            start, end = self.range_bounds(start)
        lo = -(1 << 62) if start is None else int(start)
        hi = 1 << 62 if end is None else int(end)
        r = self.rows
        keep = (r["end"] > lo) & (r["start"] < hi) | ((r["start"] == r["end"]) &
                                                      (r["start"] >= lo) & (r["start"] < hi))
        host, marks = _host_window(self.host, self.markers, lo, hi)
        return Trace(r[keep], self.stream_names, self.device_id, host, marks,
                     self.waiting[keep], self.buffer_names, self.peers)

    # ---- the per-row path (reference of the vectorised export) ----
    def events(self) -> list[dict]:
        """The Chrome trace events, one dict each (the reference the export is tested
        against)."""
        out = [self._meta_event()]
        out += [{"name": name, "ph": "X", "pid": "host", "tid": "API calls", "ts": t0 / 1000.0,
                 "dur": (t1 - t0) / 1000.0} for name, t0, t1 in self.host]
        out += [self._marker_event(m) for m in self.markers]
        for r, w in zip(self.rows, self.waiting):
            sq = int(r["sq"])
            op = int(r["op"])
            ev = {
                "name": self.name_of(r), "ph": "X", "pid": f"device {self.device_id}",
                "tid": self.stream_name(sq),
                "ts": int(r["start"]) / 1000.0, "dur": (int(r["end"]) - int(r["start"])) / 1000.0,
                "args": {"task_type": "MEMCPY_ASYNC" if op == OP_KERNEL and
                         sdma_kernels([r["a0"]])[0] else OP_TASK_TYPE[op],
                         "task_id": int(r["task_id"]),
                         "unit": UNIT_NAMES[int(r["unit"])], "blocks": int(r["blocks"]),
                         "position": int(r["pos"])},
            }
            if op in (OP_COND_FIRST, OP_COND_JUMP_BACK):
                ev["args"]["branch" if op == OP_COND_FIRST else "value"] = int(r["val"])
            if op in WAIT_OPS:
                ev["args"]["waiting_ns"] = int(w)
            if op == OP_KERNEL and int(r["val"]) > 0:
                ev["args"]["core_wait_ns"] = int(r["val"])
            if op in (OP_MEMCPY, OP_MEMSET) and int(r["a0"]) in self.buffer_names:
                ev["args"]["buffer"] = self.buffer_names[int(r["a0"])]
            if op in NOTIFY_OPS and int(r["a0"]) in self.peers:
                d, label = self.peers[int(r["a0"])][:2]
                ev["args"]["peer_device"] = d
                ev["args"]["notify"] = label
            out.append(ev)
        return out

    def _row_events(self) -> list[dict]:
        """:meth:`events` of the device's rows alone (no metadata, host or marker events)."""
        return self.events()[1 + len(self.host) + len(self.markers):]

    def _meta_event(self) -> dict:
        """The metadata event naming the device's process row."""
        return {"name": "process_name", "ph": "M", "pid": f"device {self.device_id}",
                "args": {"name": f"npusim device {self.device_id}"}}

    @staticmethod
    def _marker_event(m) -> dict:
        name, t0, t1 = m
        if t1 < 0:
            return {"name": name, "ph": "i", "s": "g", "pid": "host", "tid": "markers",
                    "ts": t0 / 1000.0}
        return {"name": name, "ph": "X", "pid": "host", "tid": "markers", "ts": t0 / 1000.0,
                "dur": (t1 - t0) / 1000.0}

    # ---- the vectorised export ----
    def chrome_json(self) -> str:
        """``{"traceEvents": [...], "displayTimeUnit": "ns"}`` as text: the same events as
        :meth:`events`, built a column at a time (:class:`_Text`)."""
        return b"".join(self._chrome_parts()).decode("ascii")

    def _chrome_parts(self) -> list:
        """The export as a list of ASCII byte buffers (every event after the first starts with
        its comma, so nothing is copied to join them)."""
        return _document([self._meta_event()], _host_parts(self.host, self.markers),
                         self._row_parts())

    def _row_parts(self) -> list:
        """The device's rows as text (each event starting with its comma), a chunk at a time."""
        return [self._rows_text(self.rows[i:i + _CHUNK], self.waiting[i:i + _CHUNK])
                for i in range(0, len(self.rows), _CHUNK)]

    @staticmethod
    def _host_text(host):
        names = np.array([h[0] for h in host], dtype=object)
        t = np.array([(h[1], h[2]) for h in host], np.int64).reshape(-1, 2)
        uniq, inv = np.unique(names, return_inverse=True)
        out = _Text(len(t))
        out.table([',{"name":' + json.dumps(str(n)) + ',"ph":"X","pid":"host","tid":"API calls",'
                   '"ts":' for n in uniq], inv)
        out.num(t[:, 0])
        out.const('e-3,"dur":')
        out.num(t[:, 1] - t[:, 0])
        out.const("e-3}")
        return out.text()

    def _rows_text(self, r, waiting):
        n = len(r)
        if n == 0:
            return b""
        op = r["op"].astype(np.int64)
        # the head of each row: its name and stream, shared by all rows of one (name, stream)
        code = np.where(op == OP_KERNEL, r["a0"], -1 - op)
        sq = r["sq"].astype(np.int64)
        key = (code - code.min()) * (int(sq.max() - sq.min()) + 1) + (sq - sq.min())
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        pid = json.dumps(f"device {self.device_id}")
        out = _Text(n)
        out.table([',{"name":' + json.dumps(self.name_of(r[i])) + ',"ph":"X","pid":' + pid
                   + ',"tid":' + json.dumps(self.stream_name(r[i]["sq"])) + ',"ts":'
                   for i in first], inv)
        out.num(r["start"])
        out.const('e-3,"dur":')
        out.num(r["end"] - r["start"])
        out.const('e-3,"args":{"task_type":')
        types = [OP_TASK_TYPE.get(o, "?") for o in range(N_OPCODES + 1)] + ["MEMCPY_ASYNC"]
        out.table(['"' + t + '","task_id":' for t in types],
                  np.where((op == OP_KERNEL) & sdma_kernels(r["a0"]), N_OPCODES + 1,
                           np.minimum(op, N_OPCODES)))
        out.num(r["task_id"])
        out.table([',"unit":"' + u + '","blocks":' for u in UNIT_NAMES],
                  np.minimum(r["unit"], len(UNIT_NAMES) - 1))
        out.num(r["blocks"])
        out.const(',"position":')
        out.num(r["pos"])
        # what a few opcodes add to their args: a key (and a number)
        keys = ["", ',"branch":', ',"value":', ',"waiting_ns":', ',"core_wait_ns":']
        which = np.zeros(n, np.int64)
        value = np.zeros(n, np.int64)
        for k, m in ((1, op == OP_COND_FIRST), (2, op == OP_COND_JUMP_BACK),
                     (4, (op == OP_KERNEL) & (r["val"] > 0))):
            which[m], value[m] = k, r["val"][m]
        m = np.isin(op, WAIT_OPS)
        which[m], value[m] = 3, waiting[m]
        if self.buffer_names:
            m = np.isin(op, (OP_MEMCPY, OP_MEMSET))
            for a, label in self.buffer_names.items():
                keys.append(',"buffer":' + json.dumps(label))
                which[m & (r["a0"] == a)] = len(keys) - 1
        out.table(keys, which)
        out.num(value, (which >= 1) & (which <= 4))
        m = np.isin(op, NOTIFY_OPS)
        here = [s for s in np.unique(r["a0"][m]).tolist() if s in self.peers] if self.peers \
            else []
        if here:                        # a notify between devices: the other device, the label
            notes = [""]                # (only the bridges of these rows: the column is as
            which = np.zeros(n, np.int64)   # wide as its widest entry)
            for slot in here:
                d, label = self.peers[slot][:2]
                notes.append(f',"peer_device":{int(d)},"notify":' + json.dumps(label))
                which[m & (r["a0"] == slot)] = len(notes) - 1
            out.table(notes, which)
        out.const("}}")
        return out.text()

    def to_chrome(self, path) -> str:
        """Write ``{"traceEvents": [...]}`` (opens in chrome://tracing and ui.perfetto.dev)."""
        with open(path, "wb") as f:
            f.writelines(self._chrome_parts())
        return str(path)

    # ---- summary ----
    def summary(self) -> str:
        """Per stream: tasks, busy time (without time parked on waits), waiting time (parked,
        and kernels waiting for cores under contention), first start and last end (simulated
        µs); then the markers' ranges."""
        if len(self.rows) == 0:
            return "(empty trace)"
        lines = [f"{'stream':<28}{_HEAD}"]
        lines += [f"{name:<28}{cols}" for name, cols in self._stream_lines()]
        return "\n".join(lines + _range_lines(self.markers))

    def _stream_lines(self) -> list[tuple[str, str]]:
        """(stream name, the columns of :data:`_HEAD`) per stream with rows."""
        out = []
        sqs = self.rows["sq"]
        for sq in np.unique(sqs):
            m = sqs == sq
            r = self.rows[m]
            wait = int(self.waiting[m].sum())
            busy = int((r["end"] - r["start"]).sum()) - wait
            wait += int(r["val"][r["op"] == OP_KERNEL].sum())      # waiting for cores
            out.append((self.stream_name(sq), f"{len(r):>7}{busy / 1e3:>11.1f}{wait / 1e3:>12.1f}"
                        f"{r['start'].min() / 1e3:>11.1f}{r['end'].max() / 1e3:>11.1f}"))
        return out


_HEAD = f"{'tasks':>7}{'busy us':>11}{'waiting us':>12}{'start us':>11}{'end us':>11}"
"""The columns of a summary's stream line, after the stream's name."""


def _range_lines(markers, width: int = 28) -> list[str]:
    """The summary's lines of the ``npusim.trace.range`` spans (none: no lines)."""
    ranges = [m for m in markers if m[2] >= 0]
    if not ranges:
        return []
    lines = [f"{'range':<{width}}{'':>7}{'length us':>11}{'':>12}{'start us':>11}{'end us':>11}"]
    for name, t0, t1 in ranges:
        lines.append(f"{name:<{width}}{'':>7}{(t1 - t0) / 1e3:>11.1f}{'':>12}"
                     f"{t0 / 1e3:>11.1f}{t1 / 1e3:>11.1f}")
    return lines


def _range_bounds(markers, name: str) -> tuple[int, int]:
    for n, t0, t1 in markers:
        if n == name and t1 >= 0:
            return t0, t1
    raise KeyError(f"no trace range called {name!r}")


def _host_window(host, markers, lo: int, hi: int) -> tuple[tuple, tuple]:
    """The host calls and markers that overlap ``[lo, hi)`` (kept whole)."""
    h = tuple(x for x in host if x[2] > lo and x[1] < hi or lo <= x[1] == x[2] < hi)
    m = tuple(x for x in markers
              if ((lo <= x[1] < hi) if x[2] < 0 else (x[2] > lo and x[1] < hi)))
    return h, m


def _host_parts(host, markers) -> list:
    """The host's API-call row and the markers as text (each event starting with its comma)."""
    parts = [Trace._host_text(host)] if host else []
    parts += [("," + json.dumps(Trace._marker_event(m), separators=(",", ":"))).encode()
              for m in markers]
    return parts


def _document(metas, *groups) -> list:
    """The JSON document as byte buffers: the metadata events (at least one: the first event
    has no comma before it), then each group's buffers (each event starting with its comma)."""
    parts = [b'{"traceEvents":[' + json.dumps(metas[0], separators=(",", ":")).encode()]
    parts += [("," + json.dumps(m, separators=(",", ":"))).encode() for m in metas[1:]]
    for g in groups:
        parts += g
    parts.append(b'],"displayTimeUnit":"ns"}')
    return parts


@dataclass
class WorldTrace:
    """Every device of the process on one timeline (``npusim.trace.world()``): one Chrome /
    Perfetto process row per device (``device N``, sorted by id), one track per stream on it,
    the host's API calls and markers once. The devices share the host clock's origin, so a
    row's time on one device compares with a row's time on another (``runtime/peer.py``:
    notifies between devices end no earlier than their record). With ``flows`` (the default)
    each wait on a notify between devices has an arrow (a Chrome flow, ``"cat": "notify"``)
    from the record that satisfied it: the latest record of that bridge ending no later than
    the wait."""

    traces: dict                  # device id -> Trace, in id order
    host: tuple = ()              # (api name, host start ns, host end ns): once for all devices
    markers: tuple = ()           # npusim.trace.mark / range: once for all devices
    flows: bool = True            # arrows from a notify's record to the wait it satisfied

    @classmethod
    def from_devices(cls, devices=None, flows: bool = True) -> "WorldTrace":
        """The trace of ``devices`` (host ``Device`` objects, Pythonic ``npusim.Device`` objects or
        device ids; None: every open device of the process); ``flows``: the record-to-wait
        arrows of notifies between devices."""
        if devices is None:
            devs = list(RT.devices.values())
        else:
            devs = []
            for d in devices:
                d = getattr(d, "_dev", d)                        # a Pythonic Device
                devs.append(RT.devices[d] if isinstance(d, int) else d)
        traces = {t.device_id: t for t in sorted((Trace.from_device(d) for d in devs),
                                                 key=lambda t: t.device_id)}
        return cls(traces, tuple(RT.host_trace), tuple(RT.markers), flows)

    def __len__(self):
        return sum(len(t) for t in self.traces.values())

    def __getitem__(self, device_id: int) -> Trace:
        return self.traces[device_id]

    @property
    def devices(self) -> list[int]:
        return list(self.traces)

    def window(self, start=None, end: int | None = None) -> "WorldTrace":
        """Every device's :meth:`Trace.window` of ``[start, end)`` (simulated ns), or of the
        span of ``npusim.trace.range(start)`` when ``start`` is its name."""
        if isinstance(start, str):
            start, end = _range_bounds(self.markers, start)
        lo = -(1 << 62) if start is None else int(start)
        hi = 1 << 62 if end is None else int(end)
        host, marks = _host_window(self.host, self.markers, lo, hi)
        return WorldTrace({d: t.window(start, end) for d, t in self.traces.items()}, host, marks,
                          self.flows)

    # ---- arrows from a record on one device to the wait it satisfied on another ----
    def flow_pairs(self) -> list[tuple]:
        """Per bridge with rows on both ends: (label, recording device, record rows, waiting
        device, wait rows, index of the satisfying record per wait, -1: none in the trace).
        Rows are the engine's, records sorted by end."""
        ends = {}                                   # bridge key -> {True: (dev, slot), False: ..}
        for d, t in self.traces.items():
            for slot, (_, label, key, out) in t.peers.items():
                ends.setdefault(key, [label, {}])[1][out] = (d, slot)
        pairs = []
        for label, sides in ends.values():
            if True not in sides or False not in sides:
                continue
            (sd, ss), (wd, ws) = sides[True], sides[False]
            sr, wr = self.traces[sd].rows, self.traces[wd].rows
            rec = sr[(sr["op"] == OP_NOTIFY_RECORD) & (sr["a0"] == ss)]
            rec = rec[np.argsort(rec["end"], kind="stable")]
            wait = wr[(wr["op"] == OP_NOTIFY_WAIT) & (wr["a0"] == ws)]
            if len(rec) == 0 or len(wait) == 0:
                continue
            pairs.append((label, sd, rec, wd, wait,
                          np.searchsorted(rec["end"], wait["end"], side="right") - 1))
        return pairs

    def _flow_events(self) -> list[dict]:
        out, fid = [], 0
        for label, sd, rec, wd, wait, which in self.flow_pairs():
            for k in np.flatnonzero(which >= 0):
                r, w = rec[which[k]], wait[k]
                fid += 1
                for ph, d, row in (("s", sd, r), ("f", wd, w)):
                    ev = {"name": label or "notify", "cat": "notify", "ph": ph, "id": fid,
                          "pid": f"device {d}",
                          "tid": self.traces[d].stream_name(row["sq"]),
                          "ts": int(row["start"]) / 1000.0}
                    if ph == "f":
                        ev["bp"] = "e"
                    out.append(ev)
        return out

    def _flow_parts(self) -> list:
        """:meth:`_flow_events` as text, a column at a time per bridge."""
        parts, fid = [], 0
        for label, sd, rec, wd, wait, which in self.flow_pairs():
            k = np.flatnonzero(which >= 0)
            if len(k) == 0:
                continue
            r, w = rec[which[k]], wait[k]
            ids = np.arange(fid + 1, fid + 1 + len(k), dtype=np.int64)
            fid += len(k)
            # one event after the other: s, f, s, f ... (the order of the reference)
            both = np.empty(2 * len(k), [("sq", np.int64), ("start", np.int64),
                                         ("side", np.int64), ("id", np.int64)])
            both["sq"][0::2], both["sq"][1::2] = r["sq"], w["sq"]
            both["start"][0::2], both["start"][1::2] = r["start"], w["start"]
            both["side"][0::2], both["side"][1::2] = 0, 1
            both["id"][0::2] = both["id"][1::2] = ids
            sqs = np.unique(both["sq"] * 2 + both["side"])
            name = ',{"name":' + json.dumps(label or "notify") + ',"cat":"notify","ph":'
            heads, tails = [], []
            for code in sqs.tolist():          # (stream, side): its head and its track
                sq, side = divmod(code, 2)
                d = wd if side else sd
                heads.append(name + ('"f","id":' if side else '"s","id":'))
                tails.append(',"pid":' + json.dumps(f"device {d}") + ',"tid":'
                             + json.dumps(self.traces[d].stream_name(sq)) + ',"ts":')
            inv = np.searchsorted(sqs, both["sq"] * 2 + both["side"])
            out = _Text(len(both))
            out.table(heads, inv)
            out.num(both["id"])
            out.table(tails, inv)
            out.num(both["start"])
            out.table(["e-3}", 'e-3,"bp":"e"}'], both["side"])
            parts.append(out.text())
        return parts

    def _metas(self) -> list[dict]:
        out = []
        for d, t in self.traces.items():
            out.append(t._meta_event())
            out.append({"name": "process_sort_index", "ph": "M", "pid": f"device {d}",
                        "args": {"sort_index": int(d)}})
        return out or [{"name": "process_name", "ph": "M", "pid": "host",
                        "args": {"name": "npusim host"}}]

    def events(self) -> list[dict]:
        """The Chrome trace events, one dict each (the per-row reference of the export)."""
        out = self._metas()
        out += [{"name": name, "ph": "X", "pid": "host", "tid": "API calls", "ts": t0 / 1000.0,
                 "dur": (t1 - t0) / 1000.0} for name, t0, t1 in self.host]
        out += [Trace._marker_event(m) for m in self.markers]
        for t in self.traces.values():
            out += t._row_events()
        if self.flows:
            out += self._flow_events()
        return out

    def chrome_json(self) -> str:
        """The same events as :meth:`events`, built a column at a time per device."""
        return b"".join(self._chrome_parts()).decode("ascii")

    def _chrome_parts(self) -> list:
        return _document(self._metas(), _host_parts(self.host, self.markers),
                         *(t._row_parts() for t in self.traces.values()),
                         self._flow_parts() if self.flows else [])

    def to_chrome(self, path) -> str:
        """Write one ``{"traceEvents": [...]}`` of every device (chrome://tracing,
        ui.perfetto.dev)."""
        with open(path, "wb") as f:
            f.writelines(self._chrome_parts())
        return str(path)

    def summary(self) -> str:
        """Per device and stream: tasks, busy, waiting, first start and last end (simulated
        µs), as :meth:`Trace.summary`; then the markers' ranges."""
        lines = [f"{'device':<8}{'stream':<28}{_HEAD}"]
        for d, t in self.traces.items():
            lines += [f"{d:<8}{name:<28}{cols}" for name, cols in t._stream_lines()]
        if len(lines) == 1:
            return "(empty trace)"
        return "\n".join(lines + _range_lines(self.markers, 36))


class _Text:
    """Rows of JSON text built a column at a time: each column is a block of ``n`` rows of equal
    width, shorter entries padded with spaces — JSON whitespace, so padding sits only where
    whitespace may (after a comma or a colon, before a closing brace: a table entry ends with
    one of those, a number is right-aligned after one); ``text`` lays the blocks side by side
    (one copy, no pass to drop the padding)."""

    __slots__ = ("n", "blocks")

    def __init__(self, n: int):
        self.n = n
        self.blocks: list = []

    def const(self, s: str) -> None:
        self.blocks.append(s.encode("ascii"))       # the same bytes in every row

    def table(self, strings, codes) -> None:
        """Row i gets ``strings[codes[i]]``."""
        enc = [x.encode("ascii") for x in strings]
        w = max((len(e) for e in enc), default=0)
        if w == 0:
            return
        tab = np.full((len(enc), w), 32, np.uint8)
        for i, e in enumerate(enc):
            tab[i, :len(e)] = np.frombuffer(e, np.uint8)
        self.blocks.append(tab[np.asarray(codes)])

    def num(self, v, present=None) -> None:
        """Integers in decimal (rows where ``present`` is False get nothing)."""
        v = np.asarray(v).astype(np.int64)
        neg = v < 0
        a = np.abs(v)
        top = int(a.max()) if len(a) else 0
        w = max(1, len(str(top))) + (1 if neg.any() else 0)
        block = np.empty((self.n, w), np.uint8)
        nd = np.ones(self.n, np.int64)               # digits of each value
        p = 10
        while p <= top:
            nd += a >= p
            p *= 10
        q = a.astype(np.uint32 if top < 1 << 32 else np.uint64)     # 32-bit division when it can
        for j in range(w - 1, -1, -1):               # right to left
            q, d = np.divmod(q, 10)
            d = d.astype(np.uint8)
            d += 48
            if j < w - 1:
                d[w - j > nd] = 32                   # left of the first digit: padding
            block[:, j] = d
        if neg.any():
            rows = np.flatnonzero(neg)
            block[rows, w - 1 - nd[rows]] = ord("-")
        if present is not None:
            block[~np.asarray(present)] = 32
        self.blocks.append(block)

    def text(self) -> memoryview:
        """The rows, one after the other (a buffer over the matrix: joined without a copy)."""
        widths = [len(b) if isinstance(b, bytes) else b.shape[1] for b in self.blocks]
        row = np.zeros(sum(widths), np.uint8)       # the constant parts, laid out once
        c = 0
        for b, w in zip(self.blocks, widths):
            if isinstance(b, bytes):
                row[c:c + w] = np.frombuffer(b, np.uint8)
            c += w
        out = np.empty((self.n, len(row)), np.uint8)
        out[:] = row
        c = 0
        for b, w in zip(self.blocks, widths):
            if not isinstance(b, bytes):
                out[:, c:c + w] = b
            c += w
        return out.reshape(-1).data
