"""aclrtDestroyStreamForce acts one dispatch later (fidelity row 500), and a synchronous
aclrtMemcpy moves its bytes at the copy's end (row 501): what the runtime's memory samples
(``example/1_basic_features/memory/1_h2d_sync_memory_copy`` ... ``6_d2d_async``) rely on when they
launch ``ReadDo`` and force-destroy the stream without synchronizing, or ``WriteDo`` then
``aclrtMemcpy`` without synchronizing."""
from __future__ import annotations

import numpy as np

from npusim import acl

from helpers.acl import LONG_NS, host_ns, launch, read
from helpers.kernel import dev_alloc, dev_args, func, load_samples, write

OK = acl.ACL_SUCCESS


def test_a_kernel_launched_just_before_runs_and_prints(dev0, stream, sink):
    lib = load_samples()
    p = dev_alloc(4)
    write(p, np.array([123], np.int32))
    assert acl.rt.launch_kernel(func(lib, "DeviceRead"), 1, dev_args(p), 8, stream) == OK
    assert acl.rt.destroy_stream_force(stream) == OK
    assert sink.take() == ["Destination data: 123\n"]


def test_the_task_launched_just_before_runs_the_ones_behind_it_are_dropped(dev0, stream, buf):
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK       # not started at the call
    assert acl.rt.destroy_stream_force(stream) == OK
    assert acl.rt.synchronize_device() == OK
    assert read(buf, 1)[0] == 2


def test_the_running_task_is_not_waited_for(dev0, stream, buf):
    assert launch(stream, "LongOPf", 1, (buf,)) == OK
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.destroy_stream_force(stream) == OK
    assert host_ns() < LONG_NS
    assert acl.rt.synchronize_device() == OK
    assert read(buf, 1)[0] == 1


def test_an_idle_stream_costs_no_handshake(dev0, stream, buf):
    assert launch(stream, "EasyOPf", 1, (buf,)) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    other, ret = acl.rt.create_stream()
    assert ret == OK
    t = host_ns()
    assert acl.rt.destroy_stream(other) == OK
    plain = host_ns() - t
    t = host_ns()
    assert acl.rt.destroy_stream_force(stream) == OK
    assert host_ns() - t <= max(plain, 1_000)             # no recycle task, no dispatch wait
