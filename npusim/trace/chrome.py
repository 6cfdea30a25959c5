"""Trace export: the engine's trace rows as Chrome trace / Perfetto JSON.

One row per executed SQE: which SQ (stream), opcode, unit, start and end in simulated ns. The
Chrome format wants microseconds; ``ph: "X"`` complete events, one ``tid`` per stream.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..device.kernels import TABLE, UNIT_NAMES
from ..device.sqe import OP_KERNEL, OP_NAME, OP_TASK_TYPE
from ..runtime.runtime import RT


@dataclass
class Trace:
    rows: np.ndarray              # engine TRACE_DTYPE rows
    stream_names: dict            # sq -> display name
    device_id: int = 0
    host: tuple = ()              # (api name, host start ns, host end ns)

    @classmethod
    def from_device(cls, dev) -> "Trace":
        names = {sq: s.describe() for sq, s in dev.streams.items()}
        names.update({sq: cs.describe() for sq, cs in dev.streams_by_sq_model.items()})
        return cls(dev.state.trace_rows().copy(), names, dev.id, tuple(RT.host_trace))

    def __len__(self):
        return len(self.rows)

    def name_of(self, r) -> str:
        if r["op"] == OP_KERNEL and 0 <= r["a0"] < len(TABLE.entries):
            return TABLE.name(int(r["a0"]))
        return OP_NAME[int(r["op"])]

    def events(self) -> list[dict]:
        out = [{"name": name, "ph": "X", "pid": "host", "tid": "API calls", "ts": t0 / 1000.0,
                "dur": (t1 - t0) / 1000.0} for name, t0, t1 in self.host]
        for r in self.rows:
            sq = int(r["sq"])
            out.append({
                "name": self.name_of(r), "ph": "X", "pid": f"device {self.device_id}",
                "tid": self.stream_names.get(sq, f"sq{sq}"),
                "ts": int(r["start"]) / 1000.0, "dur": (int(r["end"]) - int(r["start"])) / 1000.0,
                "args": {"task_type": OP_TASK_TYPE[int(r["op"])], "task_id": int(r["task_id"]),
                         "unit": UNIT_NAMES[int(r["unit"])], "blocks": int(r["blocks"]),
                         "position": int(r["pos"])},
            })
            if int(r["op"]) in (14, 16):          # COND_FIRST / COND_JUMP_BACK
                out[-1]["args"]["branch" if int(r["op"]) == 14 else "value"] = int(r["val"])
        return out

    def to_chrome(self, path) -> str:
        """Write ``{"traceEvents": [...]}`` (opens in chrome://tracing and ui.perfetto.dev)."""
        with open(path, "w") as f:
            json.dump({"traceEvents": self.events(), "displayTimeUnit": "ns"}, f)
        return str(path)

    def summary(self) -> str:
        """A few lines: per stream, tasks, busy time, first start, last end (simulated µs)."""
        if len(self.rows) == 0:
            return "(empty trace)"
        lines = [f"{'stream':<28}{'tasks':>7}{'busy us':>11}{'start us':>11}{'end us':>11}"]
        for sq in np.unique(self.rows["sq"]):
            r = self.rows[self.rows["sq"] == sq]
            busy = int((r["end"] - r["start"]).sum())
            lines.append(f"{self.stream_names.get(int(sq), f'sq{sq}'):<28}{len(r):>7}"
                         f"{busy / 1e3:>11.1f}{r['start'].min() / 1e3:>11.1f}"
                         f"{r['end'].max() / 1e3:>11.1f}")
        return "\n".join(lines)
