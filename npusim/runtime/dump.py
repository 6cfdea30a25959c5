"""Model dumps: aclmdlRIDebugPrint log lines, aclmdlRIDebugJsonPrint Chrome-trace records (the
formats of ``spec/aclgraph.md`` §10), and a Graphviz DOT of the captured DAG.

Both runtime dumps walk the model's streams in reverse creation order and each stream's tasks in
submission order, reading the SQEs the capture wrote. The JSON is always valid (the runtime leaves a
trailing comma when the last stream is empty — a defect no program should rely on).
"""
from __future__ import annotations

import json
import logging
import os

import numpy as np

from ..device import engine as E
from ..device import sqe as S
from ..device.kernels import TABLE, UNIT_AIC, UNIT_AICPU

LOG = logging.getLogger("npusim.aclgraph")
_EVENT_OPS = (S.OP_EVENT_RECORD, S.OP_EVENT_WAIT, S.OP_EVENT_RESET)
_NOTIFY_OPS = (S.OP_NOTIFY_RECORD, S.OP_NOTIFY_WAIT, S.OP_END_GRAPH, S.OP_COND_NOTIFY_WAIT)


def task_type(row, model=None) -> str:
    """The task-type name of an SQE row; with its ``model``, a software capture event's
    MEM_WRITE_VALUE / MEM_WAIT_VALUE says EVENT_RECORD / EVENT_WAIT / EVENT_RESET (§9.2)."""
    op = int(row["op"]) if model is None else model.event_task(row)[0]
    if op == S.OP_KERNEL:
        k = int(row["a0"])
        unit = TABLE.entries[k].unit if 0 <= k < len(TABLE.entries) else None
        return {UNIT_AIC: "KERNEL_AICORE", UNIT_AICPU: "KERNEL_AICPU"}.get(unit, "KERNEL_AIVEC")
    return S.OP_TASK_TYPE[op]


def task_name(row, model=None) -> str:
    op, ce = (int(row["op"]), None) if model is None else model.event_task(row)
    if op == S.OP_KERNEL:
        k = int(row["a0"])
        return TABLE.name(k) if 0 <= k < len(TABLE.entries) else "KERNEL"
    t = task_type(row, model)
    if ce is not None:
        return f"{t}_{ce.id}"
    if op in _EVENT_OPS or op in _NOTIFY_OPS:
        return f"{t}_{int(row['a0'])}"
    if op in (S.OP_MEM_WRITE_VALUE, S.OP_MEM_WAIT_VALUE):
        return f"{t}_{int(row['a0'])}"
    return t


def tasks(cs):
    """The SQE rows of a capture stream, in submission order."""
    st = cs.model.device.state
    st.flush()
    base = int(st.sqs[cs.sq, E.Q_BASE])
    return st.pool[base:base + cs.tail]


# The NotifyWait and JumpBack SQEs of a cond task belong to its one CONDITION_OP task
# (spec/aclgraph.md §8.3 step 10: one task of 2 or 3 SQEs; §10: the dumps list tasks).
_COND_TAIL_OPS = (S.OP_COND_NOTIFY_WAIT, S.OP_COND_JUMP_BACK)


def task_rows(cs):
    """The rows of a capture stream that start a task (what the runtime's dumps list)."""
    rows = tasks(cs)
    return rows[~np.isin(rows["op"], _COND_TAIL_OPS)]


def _line(dev_id, cs, row) -> str:
    t = task_type(row, cs.model)
    head = (f"device_id={dev_id}, stream_id={cs.id}, task_id={int(row['task_id'])}, "
            f"task_type={t}")
    op, ce = cs.model.event_task(row)
    if op in _EVENT_OPS:
        return head + f", event_id={ce.id if ce is not None else int(row['a0'])}."
    if op in _NOTIFY_OPS:
        return head + f", notify_id={int(row['a0'])}."
    if t in ("KERNEL_AICORE", "KERNEL_AIVEC"):     # §10: not for AICPU kernels
        return head + ", mix_type=NO_MIX."
    return head + "."


def debug_lines(model) -> list[str]:
    dev_id = model.device.id
    out = [f"model dot print begin, device_id={dev_id}, model_id={model.id}."]
    for cs in reversed(model.streams):
        for row in task_rows(cs):
            out.append(_line(dev_id, cs, row))
    for i, g in enumerate(model.task_groups):
        out.extend(g.debug_lines(dev_id, model.id, i))
    out.append(f"model dot print end, device_id={dev_id}, model_id={model.id}.")
    return out


def debug_print(model) -> list[str]:
    lines = debug_lines(model)
    for ln in lines:
        LOG.info(ln)
    model.last_debug_lines = lines
    return lines


def _dur(t: str):
    if t == "NOP":
        return 0.5, 1
    if "RECORD" in t:
        return 4.5, 5
    if "WAIT" in t:
        return 14.5, 15
    return 9.5, 10


def json_records(model, verbose: bool) -> list[dict]:
    mem = model.device.state.mem
    out = []
    for cs in reversed(model.streams):
        ts = 0
        for row in task_rows(cs):
            t = task_type(row, model)
            dur, step = _dur(t)
            args = {"Model Id": model.id, "Stream Id": cs.id, "Task Id": int(row["task_id"]),
                    "Task Type": t}
            op = int(row["op"])
            if op == S.OP_STREAM_ACTIVE:
                tgt = model.device.streams_by_sq_model.get(int(row["a0"]))
                args["Active Stream Id"] = tgt.id if tgt is not None else int(row["a0"])
            if op == S.OP_KERNEL:
                args["Numblocks"] = int(row["blocks"])
                args["Schem Mode"] = 0
                if verbose and t in ("KERNEL_AICORE", "KERNEL_AIVEC"):   # §10: not AICPU
                    n = int(row["a2"])
                    words = (mem.view(int(row["a1"]), n - n % 8).view(np.uint64)
                             if mem.check_range(int(row["a1"]), n) else [])
                    args["Kernel Args"] = " ".join(f"0x{int(w):016x}" for w in words)
                    args["Kernel Args Size"] = n
            out.append({"name": task_name(row, model), "pid": f"{os.getpid()} aclGraph",
                        "tid": f"stream{cs.id}", "ts": ts, "dur": dur, "ph": "X", "args": args})
            ts += step
    return out


def debug_json_print(model, path: str, flags: int) -> None:
    """Write the Chrome-trace JSON (one record per line, as the runtime does); also logs the
    dot-print lines. OSError propagates (the API maps it to 107000)."""
    records = json_records(model, bool(flags & 1))
    with open(path, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r, separators=(",", ":")) for r in records) + "]")
    debug_print(model)


# ---- Graphviz DOT of the captured DAG ----
def to_dot(model) -> str:
    """One node per task; edges for stream order, cascade hops, event/notify dependencies and
    cond branches (each sub-model is drawn as its own cluster inside the graph)."""
    nodes, edges = [], []
    records: dict[int, list[str]] = {}     # sync slot -> record nodes
    waits: list[tuple[int, str]] = []
    models = model.all_models()
    by_sq = {cs.sq: cs for m in models for cs in m.streams}
    conds = model.device.conds
    for m in models:
        clusters = []
        for cs in m.streams:
            lines, prev = [], None
            for i, row in enumerate(tasks(cs)):
                nid = f"s{cs.id}_{i}"
                op = m.event_task(row)[0]     # software capture events: as event tasks
                lines.append(f'      {nid} [label="{_dot_label(row, conds, m)}", '
                             f'shape={_DOT_SHAPES.get(op, "ellipse")}];')
                if prev is not None:
                    edges.append(f"  {prev} -> {nid};")
                if op in (S.OP_EVENT_RECORD, S.OP_NOTIFY_RECORD, S.OP_END_GRAPH):
                    records.setdefault(int(row["a0"]), []).append(nid)
                elif op in (S.OP_EVENT_WAIT, S.OP_NOTIFY_WAIT, S.OP_COND_NOTIFY_WAIT):
                    waits.append((int(row["a0"]), nid))
                elif op == S.OP_STREAM_ACTIVE and int(row["a0"]) in by_sq:
                    nxt = by_sq[int(row["a0"])]
                    edges.append(f'  {nid} -> s{nxt.id}_0 [style=dashed, label="cascade"];')
                elif op == S.OP_COND_JUMP_BACK and i >= 2:
                    edges.append(f'  {nid} -> s{cs.id}_{i - 2} [style=dotted, label="loop"];')
                elif op == S.OP_COND_FIRST and 0 <= int(row["a0"]) < len(conds):
                    for k, sub in enumerate(conds[int(row["a0"])].sub_models):
                        head = next((c for c in sub.streams if c.original), None)
                        if head is not None and head.task_count:
                            edges.append(f'  {nid} -> s{head.id}_0 [color=darkgreen, '
                                         f'label="branch {k}"];')
                prev = nid
            clusters.append(f"    subgraph cluster_s{cs.id} {{\n      label=\"{cs.describe()}\";\n"
                            + "\n".join(lines) + "\n    }")
        nodes.append(f"  subgraph cluster_m{m.id} {{\n    label=\"{m.describe()}\";\n"
                     + "\n".join(clusters) + "\n  }")
    for slot, w in waits:
        for r in records.get(slot, []):
            edges.append(f'  {r} -> {w} [color=blue, label="sync"];')
    return ("digraph model_%d {\n  rankdir=TB;\n  node [fontsize=10];\n" % model.id
            + "\n".join(nodes) + "\n" + "\n".join(edges) + "\n}\n")


_DOT_SHAPES = {S.OP_KERNEL: "box", S.OP_EVENT_RECORD: "cds", S.OP_EVENT_WAIT: "invhouse",
               S.OP_NOTIFY_RECORD: "cds", S.OP_NOTIFY_WAIT: "invhouse",
               S.OP_COND_NOTIFY_WAIT: "invhouse", S.OP_END_GRAPH: "doublecircle",
               S.OP_COND_FIRST: "diamond", S.OP_COND_JUMP_BACK: "diamond"}


def _dot_label(row, conds, model) -> str:
    op = int(row["op"])
    label = task_name(row, model)
    if op == S.OP_KERNEL:
        label += f"\\nblocks={int(row['blocks'])}"
    elif op == S.OP_END_GRAPH:
        label = "EndGraph"
    elif op in (S.OP_COND_FIRST, S.OP_COND_JUMP_BACK) and 0 <= int(row["a0"]) < len(conds):
        kind = {0: "IF", 1: "WHILE", 2: "SWITCH"}.get(conds[int(row["a0"])].type, "?")
        label = f"{kind} {'first' if op == S.OP_COND_FIRST else 'jump back'}"
    return label


def to_dot_streams(model) -> str:
    """A compact DOT for big graphs: one node per capture stream (with its task count), edges
    for cascade hops, cross-stream event/notify dependencies and cond branches."""
    models = model.all_models()
    by_sq = {cs.sq: cs for m in models for cs in m.streams}
    records: dict[int, set] = {}
    waits: dict[int, set] = {}
    edges: set = set()
    conds = model.device.conds
    lines = []
    for cs in by_sq.values():
        lines.append(f'  s{cs.id} [shape=box, label="{cs.describe()}\\n{cs.task_count:,} tasks"];')
        rows = tasks(cs)
        ops, a0 = rows["op"], rows["a0"]
        for slot in a0[(ops == S.OP_EVENT_RECORD) | (ops == S.OP_NOTIFY_RECORD) |
                       (ops == S.OP_END_GRAPH)]:
            records.setdefault(int(slot), set()).add(cs.id)
        for slot in a0[(ops == S.OP_EVENT_WAIT) | (ops == S.OP_NOTIFY_WAIT) |
                       (ops == S.OP_COND_NOTIFY_WAIT)]:
            waits.setdefault(int(slot), set()).add(cs.id)
        for t in a0[ops == S.OP_STREAM_ACTIVE]:
            if int(t) in by_sq:
                edges.add(f'  s{cs.id} -> s{by_sq[int(t)].id} [style=dashed, label="cascade"];')
        for c in a0[ops == S.OP_COND_FIRST]:
            if 0 <= int(c) < len(conds):
                for k, sub in enumerate(conds[int(c)].sub_models):
                    for h in sub.streams:
                        if h.original and h.parent is None:
                            edges.add(f'  s{cs.id} -> s{h.id} [color=darkgreen, '
                                      f'label="branch {k}"];')
    for slot, ws in waits.items():
        for r in records.get(slot, ()):
            for w in ws:
                if r != w:
                    edges.add(f"  s{r} -> s{w} [color=blue];")
    return (f"digraph model_{model.id}_streams {{\n  rankdir=LR;\n  node [fontsize=10];\n"
            + "\n".join(lines) + "\n" + "\n".join(sorted(edges)) + "\n}\n")
