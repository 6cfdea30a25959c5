"""Kernel exceptions: a trap or an out-of-bounds access is reported as the stream's error at the
next synchronize, never as a crash, and leaves the simulator usable (docs/eager_api_checks.md §4.7,
design.md §3.3)."""
from __future__ import annotations

import numpy as np

import npusim
from npusim import acl
from npusim.runtime.runtime import RT
from helpers.acl import launch, read, write

VECTOR_CORE_EXCEPTION = acl.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION


def _neighbours():
    """Two 64-byte buffers filled with a pattern; the first one's allocation ends before the
    second one starts, with unallocated padding between them."""
    a, _ = acl.rt.malloc(64, 0)
    b, _ = acl.rt.malloc(64, 0)
    assert b > a
    for p in (a, b):
        write(p, np.full(16, 0xA5A5A5A5, np.uint32))
    return a, b


def _raw(addr: int, n: int) -> np.ndarray:
    """Bytes of simulated device memory, whatever is (not) allocated there."""
    return RT.devices[0].state.mem.view(addr, n).copy()


def test_error_op_trap_returns_507035_at_synchronize(stream):
    assert launch(stream, "ErrorOPf") == acl.ACL_SUCCESS           # the launch itself succeeds
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION == 507035


def test_out_of_bounds_write_returns_507035_at_synchronize(stream):
    a, b = _neighbours()
    assert launch(stream, "EasyOPf", 1, (a + 256,)) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION


def test_out_of_bounds_write_leaves_memory_untouched(stream):
    a, b = _neighbours()
    gap = _raw(a + 64, b - a - 64)
    launch(stream, "EasyOPf", 1, (a + 256,))
    acl.rt.synchronize_stream(stream)
    assert (read(a, 16) == 0xA5A5A5A5).all()
    assert (read(b, 16) == 0xA5A5A5A5).all()
    assert (_raw(a + 64, b - a - 64) == gap).all()


def test_write_just_past_the_padded_allocation_faults(stream):
    a, _ = _neighbours()
    size = 96                      # 64 bytes + the A2 malloc padding (ALIGN_UP(64, 32) + 32)
    launch(stream, "EasyOPf", 1, (a + size - 4,))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    launch(stream, "EasyOPf", 1, (a + size,))
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION


def test_unmapped_pointer_write_returns_507035(stream):
    launch(stream, "EasyOPf", 1, (0x1000,))
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION


def test_freed_buffer_write_returns_507035(stream, buf):
    launch(stream, "EasyOPf", 1, (buf,))        # the stream's args area exists before the free
    p, _ = acl.rt.malloc(64, 0)
    acl.rt.free(p)
    launch(stream, "EasyOPf", 1, (p,))
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION


def test_out_of_bounds_read_returns_507035_and_writes_nothing(stream):
    a, b = _neighbours()
    dst, _ = acl.rt.malloc(64, 0)
    acl.rt.memset(dst, 64, 0, 64)
    launch(stream, "AddKernel", 1, (a, b, dst, 4096))               # 4096 floats: far too many
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
    assert (read(dst, 16) == 0).all()


def test_launches_after_a_fault_work(stream, buf):
    launch(stream, "EasyOPf", 1, (0x1000,))
    acl.rt.synchronize_stream(stream)
    launch(stream, "EasyOPf", 4, (buf,))
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert list(read(buf, 4)) == [1, 1, 1, 1]


def test_fault_on_one_stream_does_not_disturb_another(stream, buf):
    other, _ = acl.rt.create_stream()
    for _ in range(3):
        launch(stream, "EasyOPf", 1, (0x1000,))
        launch(other, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(other) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 3
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION


def test_many_faults_are_reported_once_per_synchronize(stream, buf):
    for _ in range(5):
        launch(stream, "ErrorOPf")
        launch(stream, "EasyOPf", 1, (buf,))
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert read(buf, 1)[0] == 5


def test_cube_kernel_fault_returns_507015(stream):
    """[inferred] rule of eager_api_checks.md §4.7: an AIC (cube/mix) kernel fault is 507015."""
    from npusim.device.kernels import TABLE, UNIT_AIC
    TABLE.register("TestCubeTrap", TABLE.body(TABLE.id("ErrorOPf")), 1_000, unit=UNIT_AIC)
    launch(stream, "TestCubeTrap")
    assert acl.rt.synchronize_stream(stream) == acl.ACL_ERROR_RT_AICORE_EXCEPTION == 507015


def _faulting_easy() -> tuple[int, int, int]:
    """(binary, its EasyOPf, an args area whose x pointer is 0): every launch with those args
    faults (an out-of-bounds access)."""
    lib, _ = acl.rt.binary_load_from_file(npusim.samples.binary_path(), None)
    f, _ = acl.rt.binary_get_function(lib, "EasyOPf")
    bad, _ = acl.rt.malloc(8, 0)
    assert acl.rt.memset(bad, 8, 0, 8) == acl.ACL_SUCCESS
    return lib, f, bad


def test_faulting_replays_keep_no_fault_log_and_report_every_fault(stream):
    """A graph whose kernels all fault, replayed again and again (a bad pointer in a decode
    loop): every replay's synchronize reports the fault, the exception callback sees every
    faulting task, and the device's fault log holds nothing once the host has read it — it used
    to keep every fault ever logged (~185 B each, without bound)."""
    seen = []
    assert acl.rt.set_exception_info_callback(seen.append) == acl.ACL_SUCCESS
    _, f, args = _faulting_easy()
    assert acl.mdl.ri_capture_begin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED) == 0
    for _ in range(10):
        assert acl.rt.launch_kernel(f, 1, args, 8, stream) == acl.ACL_SUCCESS
    model, ret = acl.mdl.ri_capture_end(stream)
    assert ret == 0
    dev = RT.devices[0]
    for replay in range(1, 4):
        assert acl.mdl.ri_execute_async(model, stream) == acl.ACL_SUCCESS
        assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
        assert len(seen) == 10 * replay
        assert dev.state.faults == [] and len(dev.new_faults) == 10
        assert "EasyOPf" in dev.last_error_detail
    assert acl.rt.synchronize_stream(stream) == acl.ACL_SUCCESS
    assert acl.rt.set_exception_info_callback(None) == acl.ACL_SUCCESS
    assert acl.mdl.ri_destroy(model) == acl.ACL_SUCCESS


def test_a_run_inside_an_exception_callback_loses_and_repeats_no_fault(stream):
    """A binary's exception callback that launches a faulting kernel on another stream and
    synchronizes it runs the engine while the device's after-run hooks are running. The
    process's exception-info callback must still see each fault once, in the device's order:
    the three of the first stream, then the other stream's (each run's faults are handed to the
    hooks after the current batch, not in place of it)."""
    other, _ = acl.rt.create_stream()
    info = []
    assert acl.rt.set_exception_info_callback(info.append) == acl.ACL_SUCCESS
    lib, f, args = _faulting_easy()
    seen = []

    def on_binary_fault(exc, user_data):
        if not seen:
            assert acl.rt.launch_kernel(f, 1, args, 8, other) == acl.ACL_SUCCESS
            acl.rt.synchronize_stream(other)
        seen.append(acl.rt.get_stream_id_from_exception_info(exc))

    assert acl.rt.binary_set_exception_callback(lib, on_binary_fault, None) == acl.ACL_SUCCESS
    for _ in range(3):
        assert acl.rt.launch_kernel(f, 1, args, 8, stream) == acl.ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
    sid, oid = acl.rt.stream_get_id(stream)[0], acl.rt.stream_get_id(other)[0]
    order = [(acl.rt.get_stream_id_from_exception_info(i),
              acl.rt.get_task_id_from_exception_info(i)) for i in info]
    assert order == [(sid, 0), (sid, 1), (sid, 2), (oid, 0)]
    assert seen == [sid, sid, sid, oid]
    assert acl.rt.set_exception_info_callback(None) == acl.ACL_SUCCESS


def _most_pending_with_a_nested_launch(stream, bad_at: int) -> tuple[int, int]:
    """Launch EasyOPf on ``stream`` 3 x its task limit + 1 times, the launch at ``bad_at``
    faulting (x at address 0); the binary's exception callback, at the first fault, launches
    once more on the same stream. Returns (the most tasks the stream held, its limit)."""
    lib, f, bad = _faulting_easy()
    buf, _ = acl.rt.malloc(64, 0)
    good, _ = acl.rt.malloc(8, 0)
    write(good, np.array([buf], np.uint64).view(np.uint32))
    dev = RT.devices[0]
    s = RT.handles.stream(stream)
    fired = []

    def on_binary_fault(exc, user_data):
        if not fired:
            fired.append(1)
            assert acl.rt.launch_kernel(f, 1, good, 8, stream) == acl.ACL_SUCCESS

    assert acl.rt.binary_set_exception_callback(lib, on_binary_fault, None) == acl.ACL_SUCCESS
    most = 0
    for i in range(3 * s.depth + 1):
        assert acl.rt.launch_kernel(f, 1, bad if i == bad_at else good, 8,
                                    stream) == acl.ACL_SUCCESS
        most = max(most, dev.state.pending(s.sq))
    assert fired
    assert acl.rt.synchronize_stream(stream) == VECTOR_CORE_EXCEPTION
    return most, s.depth


def test_a_push_from_an_exception_callback_keeps_the_stream_within_its_task_limit(stream):
    """A full stream's next launch runs the device up to the host's time; a faulting task there
    calls the binary's exception callback, which launches on the same stream before the outer
    launch is pushed. The room the nested launch counted does not include the outer one, so the
    outer launch must not keep it: the stream never holds more than its task limit."""
    most, limit = _most_pending_with_a_nested_launch(stream, bad_at=0)
    assert most <= limit


def test_a_push_from_an_exception_callback_during_a_full_ring_wait_is_counted():
    """The host far ahead of the device (launches that cost it 1 ns): a full stream's launch
    waits for one slot, and the run of that wait reaches a faulting task whose binary exception
    callback launches on the same stream, into the slot just freed. The outer launch then finds
    the ring full again and waits once more: the stream never holds more than its task limit."""
    npusim.configure(timing={"host_kernel_launch_ns": 1})
    assert acl.init() == acl.ACL_SUCCESS and acl.rt.set_device(0) == acl.ACL_SUCCESS
    stream, _ = acl.rt.create_stream()
    most, limit = _most_pending_with_a_nested_launch(stream, bad_at=2)
    assert most <= limit
