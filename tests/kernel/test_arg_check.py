"""Argument checks against the kernel's declared parameters (``npusim/runtime/argcheck.py``):
count, byte size and — where the types are known (a ``@npusim.kernel`` signature, the sample
kernels) — type, at launch and at task update. By default a warning at the call's line and the
code the runtime gives (it launches whatever it is handed); ``configure(check_args="error")``
refuses with 107000 and says why. The Pythonic launch packs by declared type."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import npusim as ns
from npusim import acl
from npusim import errors as ERR
from npusim.device import memview as V
from helpers.acl import on_threads

HERE = pathlib.Path(__file__)


def line_of(tag: str) -> int:
    for i, text in enumerate(HERE.read_text().splitlines(), 1):
        if text.rstrip().endswith(tag):
            return i
    raise AssertionError(tag)


@ns.kernel
def axpy(mem, ctx, block_idx, block_num, x: "ptr", n: "u32", alpha: "f32"):
    v = V.f32(mem, ctx, x, n)
    for i in range(n):
        v[i] = v[i] * 0 + alpha


@pytest.fixture
def dev():
    return ns.Device("Ascend910B")


def vector_add(dev):
    return ns.load_binary(ns.samples.binary_path())["VectorAddKernel"]


def _raw(dev, func, nbytes: int, stream):
    """aclrtLaunchKernel with ``nbytes`` of zeroed device args."""
    args = dev.malloc(64)
    return acl.rt.launch_kernel(func.handle, 1, args.ptr, nbytes, stream.handle)  # @case-24


def _update_one_too_few(dev):
    s, u = dev.stream(), dev.stream()
    x = dev.malloc(64)
    with ns.graph(s):
        ns.graph_task_group_begin(s)
        s.launch("VectorAddKernel", 1, args=(x, x, x, 0.5, 4))
        h = ns.graph_task_group_end(s)
    ns.graph_task_update_begin(u, h)
    try:
        u.launch("VectorAddKernel", 1, args=(x, x, x, 0.5))         # @case-update
    finally:
        acl.mdl.ri_capture_task_update_end(u.handle)


def _int_in_f32(dev):
    f = vector_add(dev)
    buf = bytearray(ns.runtime.args.pack([0, 0, 0, 101, 4]))         # 101 as an int64 slot
    code = acl.rt.launch_kernel_with_host_args(f.handle, 1, dev.stream().handle,  # @case-f32
                                               None, buf, len(buf))
    ns.errors.check(code)


CASES = {
    "missing": (lambda d: d.stream().launch("VectorAddKernel", 1, args=(0, 0, 0, 0.5)),  # @case-missing
                "missing arg4", "@case-missing"),
    "extra": (lambda d: vector_add(d).launch(d.stream(), 1, args=(0, 0, 0, 0.5, 4, 9)),  # @case-extra
              "1 argument(s) too many", "@case-extra"),
    "args_size 24": (lambda d: ns.errors.check(_raw(d, vector_add(d), 24, d.stream())),
                     "24 bytes of arguments for 5 declared parameters (40 bytes)", "@case-24"),
    "update one too few": (_update_one_too_few, "task update 0 of task group 0x",
                           "@case-update"),
    "int to f32": (_int_in_f32, "holds the integer 101", "@case-f32"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_warned_by_default_with_the_code_unchanged(dev, case):
    fn, text, tag = CASES[case]
    with pytest.warns(ERR.ArgumentWarning, match=re.escape(text)) as w:
        fn(dev)                                  # no exception: the runtime launches it
    (hit,) = [x for x in w if issubclass(x.category, ERR.ArgumentWarning)]
    assert (pathlib.Path(hit.filename).name, hit.lineno) == (HERE.name, line_of(tag))


@pytest.mark.parametrize("case", list(CASES))
def test_refused_with_107000_in_strict_mode(dev, case):
    ns.configure(check_args="error")
    fn, text, _ = CASES[case]
    with pytest.raises(ERR.ParamError) as e:
        fn(dev)
    assert e.value.code == acl.ACL_ERROR_RT_PARAM_INVALID
    # the Pythonic launches carry the reason; a raw facade call has it in the recent message
    assert text in str(e.value) or text in (acl.get_recent_err_msg() or "")


def test_strict_refusal_is_in_the_recent_error_message(dev):
    ns.configure(check_args="error")
    assert _raw(dev, vector_add(dev), 24, dev.stream()) == acl.ACL_ERROR_RT_PARAM_INVALID
    msg = acl.get_recent_err_msg()
    assert "107000" in msg and "missing arg3, arg4" in msg and "VectorAddKernel(" in msg


def test_matching_arguments_are_silent_and_off_turns_the_checks_off(dev, recwarn):
    s = dev.stream()
    x = dev.malloc(64)
    s.launch("VectorAddKernel", 1, args=(x, x, x, 0.5, 4))
    vector_add(dev).launch(s, 1, args=(x, x, x, 2, 4))               # 2 -> 2.0: packed by type
    lib = ns.load_binary(ns.samples.binary_path("placeholder"))      # data after the params
    buf = bytearray(ns.runtime.args.pack([x, x, x, 0, 0]) + bytes(8))
    assert acl.rt.launch_kernel_with_host_args(lib["add_custom"].handle, 1, s.handle, None, buf,
                                               48, [(24, 40), (32, 44)]) == 0
    add = ns.load_binary(ns.samples.binary_path())["add_custom"]      # an args handle: the
    h, _ = acl.rt.kernel_args_init(add.handle)                          # system slot follows
    big = dev.malloc(1 << 16)
    for _ in range(3):
        acl.rt.kernel_args_append(h, int(big).to_bytes(8, "little"))
    assert acl.rt.kernel_args_finalize(h) == 0
    assert acl.rt.launch_kernel_with_config(add.handle, 1, s.handle, None, h, None) == 0
    s.synchronize()
    ns.configure(check_args="off")
    s.launch("VectorAddKernel", 1, args=(x,))
    assert not [w for w in recwarn if issubclass(w.category, ERR.ArgumentWarning)]
    with pytest.raises(ValueError):
        ns.configure(check_args="loud")


def test_python_kernel_signature_and_typed_packing(dev):
    s = dev.stream()
    x = dev.malloc(16)
    f = ns.load_binary(axpy)["axpy"]
    f.launch(s, 1, args=(x, 4, 101))                                 # an int to the f32 alpha
    s.synchronize()
    assert x.read(np.float32, 4).tolist() == [101.0] * 4
    with pytest.warns(ERR.ArgumentWarning, match=r"missing alpha — axpy\(x: ptr, n: u32, "
                                                 r"alpha: f32\)"):
        f.launch(s, 1, args=(x, 4))
    s.synchronize()


def test_one_launch_method_for_table_and_loaded_kernels_with_a_duration(dev):
    ns.configure(trace=True)
    d = ns.Device("Ascend910B")
    s = d.stream()
    x = d.malloc(64)
    f = ns.load_binary(ns.samples.binary_path())["EasyOPf"]
    s.launch("EasyOPf", 1, args=(x,), duration_ns=7_000)
    s.launch(f, 1, args=(x,), duration_ns=9_000)
    f.launch(s, 1, args=(x,), duration_ns=9_000)
    s.synchronize()
    rows = d.trace().rows
    rows = rows[rows["op"] == ns.device.sqe.OP_KERNEL]
    a, b, c = (rows["end"] - rows["start"]).tolist()     # the duration plus the fixed dispatch
    assert b - a == 2_000 and b == c


@pytest.mark.parametrize("strict", [False, True])
def test_host_side_task_params_are_checked_too(dev, strict):
    s = dev.stream()
    x = dev.malloc(64)
    with ns.graph(s) as g:
        s.launch("EasyOPf", 1, args=(x,))
    (cs,) = ns.acl.mdl.ri_get_streams(g.handle)[0][:1]
    tasks, code = acl.mdl.ri_get_tasks_by_stream(cs)
    kern = [t for t in tasks if acl.mdl.ri_task_get_type(t)[0] == 1][0]
    f = vector_add(dev)
    p = {"type": 1, "func": f.handle, "args": x.ptr, "args_size": 24, "num_blocks": 1}
    if strict:
        ns.configure(check_args="error")
        assert acl.mdl.ri_task_set_params(kern, p) == acl.ACL_ERROR_RT_PARAM_INVALID
        assert "aclmdlRITaskSetParams of kernel VectorAddKernel" in acl.get_recent_err_msg()
    else:
        with pytest.warns(ERR.ArgumentWarning, match="aclmdlRITaskSetParams of kernel "
                                                     "VectorAddKernel: 24 bytes"):
            assert acl.mdl.ri_task_set_params(kern, p) == 0


def test_a_clean_launch_does_not_silence_the_next_wrong_one(dev):
    """aclrtLaunchKernel skips the check for a launch repeating the last clean kernel, body and
    size (Kernel.plain_args): a different size, eagerly or captured, is checked every time, and
    in strict mode refused before any task is queued."""
    f, s = vector_add(dev), dev.stream()
    x, args = dev.malloc(64), dev.malloc(64)
    packed = np.frombuffer(bytes(ns.runtime.args.pack([x, x, x, 0.5, 4])), np.uint8).copy()
    assert acl.rt.memcpy(args.ptr, 64, acl.util.numpy_to_ptr(packed), packed.nbytes,
                         acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    launch = acl.rt.launch_kernel
    for _ in range(2):
        assert launch(f.handle, 1, args.ptr, 40, s.handle) == 0          # clean: remembered
        with pytest.warns(ERR.ArgumentWarning, match="24 bytes of arguments"):
            assert launch(f.handle, 1, args.ptr, 24, s.handle) == 0
    s.synchronize()
    ns.configure(check_args="error")
    assert acl.mdl.ri_capture_begin(s.handle, 0) == 0
    assert launch(f.handle, 1, args.ptr, 40, s.handle) == 0
    assert launch(f.handle, 1, args.ptr, 24, s.handle) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert launch(f.handle, 1, args.ptr, 40, s.handle) == 0
    m, code = acl.mdl.ri_capture_end(s.handle)
    assert code == 0
    streams, code = acl.mdl.ri_get_streams(m)
    tasks, code2 = acl.mdl.ri_get_tasks_by_stream(streams[0])
    assert code == code2 == 0 and len(tasks) == 2     # the two clean kernels (no EndGraph: 910B)
    assert acl.mdl.ri_destroy(m) == 0


def test_each_kernel_keeps_its_own_memo_on_real_threads_over_1000_launches(dev):
    """The memo is per kernel (Kernel.plain_args): four real threads, each on its own stream,
    alternate two kernels 250 times, clean and with a wrong size, in strict mode — every wrong
    launch of either kernel is refused with 107000's code (no other thread's clean launch, nor
    the other kernel's, silences it), every clean one queues, and all of them run."""
    b = ns.load_binary(ns.samples.binary_path())
    va, ak = b["VectorAddKernel"], b["AddKernel"]
    x = dev.malloc(64)
    acl.rt.memset(x.ptr, 64, 0, 64)
    packed = {}
    for name, values in (("va", [x, x, x, 0.5, 4]), ("ak", [x, x, x, 4])):
        raw = np.frombuffer(bytes(ns.runtime.args.pack(values)), np.uint8).copy()
        a = dev.malloc(64)
        assert acl.rt.memcpy(a.ptr, 64, acl.util.numpy_to_ptr(raw), raw.nbytes,
                             acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
        packed[name] = a.ptr
    ns.configure(check_args="error")
    ctx, code = acl.rt.get_current_context()
    assert code == 0
    streams = [dev.stream(f"t{i}") for i in range(4)]
    codes: list = [None] * 4
    launch = acl.rt.launch_kernel

    def worker(i):
        assert acl.rt.set_current_context(ctx) == 0
        s, got = streams[i].handle, []
        for _ in range(250):
            got.append(launch(va.handle, 1, packed["va"], 40, s))
            got.append(launch(ak.handle, 1, packed["ak"], 32, s))
            got.append(launch(va.handle, 1, packed["va"], 24, s))
            got.append(launch(ak.handle, 1, packed["ak"], 24, s))
        codes[i] = got

    on_threads(worker, timeout=120)
    bad = acl.ACL_ERROR_RT_PARAM_INVALID
    for got in codes:
        assert got == [0, 0, bad, bad] * 250
    for s in streams:
        s.synchronize()                 # raises on a kernel fault of any of the 2,000 tasks
