"""What a schedule costs: HCCL's alpha-beta model (spec/hccl.md §5; ``hccl``
``docs/zh/user_guide/coll_algo_intro/``), layer 0.

:func:`step_ns` is one step's time (alpha + n*beta of its link for a link copy, + n*gamma for a
reduce; local copies at the local copy bandwidth and no alpha; notifies 0: the engine charges
its own); :func:`critical_path_ns` runs every stream of a schedule in order with the waits, one
reduce unit per rank; :func:`closed_form` is the docs' table (Mesh.md, Ring.md, RHD.md),
optionally plus the local copies npusim's schedules make (:func:`local_copy_bytes`). The
schedules themselves are ``algo.py``'s (docs/fidelity.md rows 384-385).
"""
from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from .algo import DeadlockError, Schedule, Step, _pow2

__all__ = ["step_ns", "critical_path_ns", "closed_form", "local_copy_bytes"]


# ------------------------------------------------------------------ cost
def _bw(timing, link: str) -> int:
    if link == "rdma":
        return timing.hccl_rdma_bytes_per_us
    if link == "local":
        return timing.hccl_local_copy_bytes_per_us
    return timing.hccl_hccs_bytes_per_us


def _per(nbytes: int, bytes_per_us: int) -> int:
    return -(-int(nbytes) * 1000 // max(1, int(bytes_per_us)))


def _xfer_ns(st: Step, timing) -> int:
    if st.kind not in ("copy", "reduce"):
        return 0
    alpha = 0 if st.link == "local" else timing.hccl_alpha_ns
    return alpha + _per(st.nbytes, _bw(timing, st.link))


def _gamma_ns(st: Step, timing) -> int:
    return _per(st.nbytes, timing.hccl_reduce_bytes_per_us) if st.kind == "reduce" else 0


def step_ns(st: Step, timing) -> int:
    """alpha + n*beta(link) for a copy over a link, + n*gamma for a reduce; a local step has no
    alpha and moves at ``hccl_local_copy_bytes_per_us``; notifies 0 (the engine charges them)."""
    return _xfer_ns(st, timing) + _gamma_ns(st, timing)


def critical_path_ns(sched: Schedule, timing) -> int:
    """The schedule's time when every stream runs its steps in order from 0, a wait ends at its
    matching post, and each rank has one reduce unit: a reduce moves its bytes (alpha + n*beta)
    and then reduces them (n*gamma) when its rank's unit is free. Returns the last step's end."""
    queues = {}
    for r, steps in enumerate(sched.per_rank):
        for st in steps:
            queues.setdefault((r, st.stream), deque()).append(st)
    t = {rs: 0 for rs in queues}
    posts: dict = {}
    blocked: dict = {}
    unit = [0] * sched.n_ranks
    heap: list = []
    end = 0

    def key(r, st):
        if st.kind == "post":
            return ("n", r, st.peer, st.tag)
        if st.kind == "wait":
            return ("n", st.peer, r, st.tag)
        return ("l", r, st.tag)

    def push(rs):
        q = queues[rs]
        if not q:
            return
        st = q[0]
        if st.kind in ("wait", "local_wait"):
            kk = key(rs[0], st)
            if kk not in posts:
                blocked[kk] = rs
                return
            heapq.heappush(heap, (max(t[rs], posts[kk]), rs))
        else:
            heapq.heappush(heap, (t[rs], rs))

    for rs in sorted(queues):
        push(rs)
    while heap:
        start, rs = heapq.heappop(heap)
        st = queues[rs].popleft()
        r = rs[0]
        if st.kind in ("post", "local_post"):
            kk = key(r, st)
            posts[kk] = start
            finish = start
            w = blocked.pop(kk, None)
            if w is not None:
                push(w)
        elif st.kind in ("wait", "local_wait"):
            posts.pop(key(r, st))
            finish = start
        elif st.kind == "copy":
            finish = start + _xfer_ns(st, timing)
        else:
            moved = start + _xfer_ns(st, timing)
            finish = max(unit[r], moved) + _gamma_ns(st, timing)
            unit[r] = finish
        t[rs] = finish
        end = max(end, finish)
        push(rs)
    if any(queues.values()):
        raise DeadlockError("critical_path_ns: the schedule deadlocks")
    return end


def local_copy_bytes(kind: str, algorithm: str, nbytes: int, p: int) -> int:
    """Bytes copied inside one NPU on the critical path of npusim's schedule (user buffer <->
    CCL buffer), which HCCL's closed forms leave out. ``nbytes`` as :func:`closed_form`'s."""
    n, c = nbytes, nbytes // max(p, 1)
    table = {
        ("all_reduce", "mesh"): n + c, ("all_reduce", "ring"): 2 * n,
        ("all_reduce", "rhd"): 2 * n,
        ("reduce_scatter", "mesh"): n + c, ("reduce_scatter", "ring"): n + c,
        ("reduce_scatter", "rhd"): n + c,
        ("all_gather", "mesh"): 2 * c, ("all_gather", "ring"): c + n,
        ("all_gather", "rhd"): c + n,
        ("broadcast", "mesh"): 2 * n, ("reduce", "mesh"): n + c, ("scatter", "mesh"): n + c,
    }
    return table[(kind, algorithm)]


def closed_form(kind: str, algorithm: str, nbytes: int, p: int, timing, *, link: str = "",
                servers: int = 1, local_copies: bool = False) -> int:
    """HCCL's alpha-beta time of one collective (coll_algo_intro/Mesh.md, Ring.md, RHD.md;
    spec/hccl.md §5), in ns. ``nbytes`` = n of the docs: the data of one rank (AllReduce,
    Broadcast, Reduce: the buffer; ReduceScatter: the input; AllGather: the output; Scatter: the
    root's input). ``link``: the beta used (default "hccs" inside one server; across servers
    the slower of HCCS and RDMA: a ring over both moves in lockstep, so its slowest link paces
    it -- on 910B that is HCCS, 18.3 < 20 GB/s; without ``link`` RHD's sum is taken step by step
    with each step's own link, ranks placed ``r * servers // p``). Hierarchical AllReduce: mesh
    ReduceScatter and AllGather inside the servers (p/servers ranks, HCCS) around an
    inter-server AllReduce of n*servers/p bytes (RHD for a power-of-2 server count, else ring,
    RDMA).
    ``local_copies``: add the copies inside each NPU npusim's schedules make
    (:func:`local_copy_bytes`) at ``hccl_local_copy_bytes_per_us``."""
    a = timing.hccl_alpha_ns
    explicit = bool(link)
    if not link:
        slow = "hccs" if timing.hccl_hccs_bytes_per_us <= timing.hccl_rdma_bytes_per_us \
            else "rdma"
        link = "hccs" if algorithm == "mesh" or servers <= 1 else \
            "rdma" if servers >= p else slow    # one rank per server: every hop is RDMA
    beta = 1000.0 / _bw(timing, link)
    gamma = 1000.0 / timing.hccl_reduce_bytes_per_us
    n, f = float(nbytes), (p - 1) / p
    lg = float(np.log2(p)) if p > 0 else 0.0
    if p <= 1:
        return int(round(n * 1000.0 / timing.hccl_local_copy_bytes_per_us)) if local_copies else 0
    if kind == "all_reduce" and algorithm == "hierarchical":
        m = p // servers
        intra = closed_form("reduce_scatter", "mesh", nbytes, m, timing) + \
            closed_form("all_gather", "mesh", nbytes, m, timing)
        inter = closed_form("all_reduce", "rhd" if _pow2(servers) else "ring", nbytes // m,
                            servers, timing, link="rdma")
        return intra + inter
    if algorithm == "rhd" and servers > 1 and not explicit and kind in (
            "all_reduce", "reduce_scatter", "all_gather"):
        # the docs' sum step by step, each step with its own link: ranks r*servers//p share a
        # server, so distances d >= p/servers cross servers (RDMA), shorter ones stay (HCCS)
        steps, d, seg = [], p // 2, n / 2
        while d >= 1:
            lk = "rdma" if d >= p // servers else "hccs"
            steps.append(a + seg * 1000.0 / _bw(timing, lk))
            d, seg = d // 2, seg / 2
        moved = sum(steps)
        out = {"all_reduce": 2 * moved + f * n * gamma, "reduce_scatter": moved + f * n * gamma,
               "all_gather": moved}[kind]
        if local_copies:
            out += local_copy_bytes(kind, algorithm, nbytes, p) * 1000.0 / \
                timing.hccl_local_copy_bytes_per_us
        return int(round(out))
    table = {
        ("all_reduce", "mesh"): 2 * a + 2 / p * n * beta + f * n * gamma,
        ("all_reduce", "ring"): 2 * (p - 1) * a + 2 * f * n * beta + f * n * gamma,
        ("all_reduce", "rhd"): 2 * lg * a + 2 * f * n * beta + f * n * gamma,
        ("reduce_scatter", "mesh"): a + n / p * beta + f * n * gamma,
        ("reduce_scatter", "ring"): (p - 1) * a + f * n * beta + f * n * gamma,
        ("reduce_scatter", "rhd"): lg * a + f * n * beta + f * n * gamma,
        ("all_gather", "mesh"): a + n / p * beta,
        ("all_gather", "ring"): (p - 1) * a + f * n * beta,
        ("all_gather", "rhd"): lg * a + f * n * beta,
        ("broadcast", "mesh"): 2 * a + 2 / p * n * beta,
        ("reduce", "mesh"): 2 * a + 2 / p * n * beta + f * n * gamma,
        ("scatter", "mesh"): a + n / p * beta,
    }
    if (kind, algorithm) not in table:
        raise ValueError(f"no closed form for {kind} / {algorithm}")
    out = table[(kind, algorithm)]
    if local_copies:
        out += local_copy_bytes(kind, algorithm, nbytes, p) * 1000.0 / \
            timing.hccl_local_copy_bytes_per_us
    return int(round(out))
