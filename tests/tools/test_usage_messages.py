"""Misuses of the Pythonic API whose message names the cause and the fix (issue 37 item 2):
a task group or task update used without ``with``, and launching a ``@npusim.kernel`` object."""
import gc
import warnings

import numpy as np
import pytest

import npusim
from npusim.errors import CaptureWarning


@pytest.fixture
def dev():
    npusim.reset()
    return npusim.Device("Ascend910B")


@npusim.kernel
def add_one(mem, ctx, b, nb, x: "ptr"):
    v = npusim.device.memview.u32(mem, ctx, x, 1)
    v[0] += 1


# ---- a @npusim.kernel object is launched as it is ----
def test_stream_launch_takes_the_decorated_kernel_object(dev):
    s, x = dev.stream(), dev.malloc(64).fill(0)
    s.launch(add_one, 1, (x,))
    s.launch("add_one", 1, (x,))                 # and by its name: the same body
    dev.launch(add_one, s, 1, (x,))
    s.synchronize()
    assert int(x.read(np.uint32, 1)[0]) == 3


def test_the_object_launches_its_own_body_when_another_kernel_took_its_name(dev):
    @npusim.kernel(name="add_one")
    def add_ten(mem, ctx, b, nb, x: "ptr"):
        v = npusim.device.memview.u32(mem, ctx, x, 1)
        v[0] += 10

    s, x = dev.stream(), dev.malloc(64).fill(0)
    s.launch(add_one, 1, (x,))
    s.launch(add_ten, 1, (x,))
    s.synchronize()
    assert int(x.read(np.uint32, 1)[0]) == 11


def test_a_decorated_kernel_is_captured_and_its_cost_set_by_the_object(dev):
    s, x = dev.stream(), dev.malloc(64).fill(0)
    npusim.set_kernel_cost(add_one, cost=lambda blocks, x: 7_000)
    try:
        with npusim.graph(stream=s) as g:
            s.launch(add_one, 1, (x,))
        g.replay(s)
        s.synchronize()
        assert int(x.read(np.uint32, 1)[0]) == 1
    finally:
        npusim.reset_kernel_cost(add_one)


def test_launching_something_else_names_what_launch_takes(dev):
    s = dev.stream()
    with pytest.raises(TypeError, match=r"a kernel name \(str\), a @npusim.kernel or a loaded"):
        s.launch(42, 1)


# ---- task groups and task updates are context managers ----
def _capture_group(s, x):
    with npusim.graph(stream=s) as g:
        with npusim.task_group(s) as tg:
            s.launch("EasyOPf", 1, args=(x,))
    return g, tg


def test_a_task_group_called_without_with_warns_at_its_line(dev):
    s, x = dev.stream(), dev.malloc(64).fill(0)
    with pytest.warns(CaptureWarning, match=r"is a context manager and was never entered — "
                      r"write `with npusim.task_group\(stream\) as tg:`") as rec:
        with npusim.graph(stream=s) as g:
            npusim.task_group(s)                 # the mistake: no `with`
            s.launch("EasyOPf", 1, args=(x,))
    assert rec[0].filename == __file__
    g.destroy()


def test_updating_a_task_group_that_was_never_entered_says_use_with(dev):
    s, u, x = dev.stream(), dev.stream(), dev.malloc(64).fill(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CaptureWarning)
        with npusim.graph(stream=s) as g:
            tg = npusim.task_group(s)
            s.launch("EasyOPf", 1, args=(x,))
        with pytest.raises(TypeError, match=r"TaskGroup made at .*test_usage_messages.py:\d+ is "
                           r"a context manager .* `with npusim.task_group\(stream\) as tg:`"):
            tg.update(u)
        with pytest.raises(TypeError, match="is a context manager"):
            npusim.task_update(u, tg)
        with pytest.raises(TypeError, match="is a context manager"):
            npusim.graph_task_update_begin(u, tg)
        del tg
        gc.collect()
    g.destroy()


def test_using_the_handle_inside_the_block_says_it_comes_at_the_end(dev):
    s, x = dev.stream(), dev.malloc(64).fill(0)
    with npusim.graph(stream=s) as g:
        with npusim.task_group(s) as tg:
            s.launch("EasyOPf", 1, args=(x,))
            with pytest.raises(ValueError, match="block has not ended yet"):
                int(tg)
    assert int(tg) == tg.handle
    g.destroy()


def test_a_task_update_called_without_with_warns(dev):
    s, u, x = dev.stream(), dev.stream(), dev.malloc(64).fill(0)
    g, tg = _capture_group(s, x)
    with pytest.warns(CaptureWarning, match=r"write `with tg.update\(stream\):`"):
        tg.update(u)                             # the mistake: the launch below runs eagerly
        u.launch("EasyOPf", 1, args=(x,))
    u.synchronize()
    g.destroy()


def test_the_functions_take_the_group_object_too(dev):
    s, u, x, y = dev.stream(), dev.stream(), dev.malloc(64).fill(0), dev.malloc(64).fill(0)
    g, tg = _capture_group(s, x)
    npusim.graph_task_update_begin(u, tg)        # the TaskGroup where a handle is expected
    u.launch("EasyOPf", 1, args=(y,))
    npusim.graph_task_update_end(u)
    u.synchronize()
    g.replay(s)
    s.synchronize()
    assert (int(x.read(np.uint32, 1)[0]), int(y.read(np.uint32, 1)[0])) == (0, 1)
    g.destroy()


def test_the_with_forms_do_not_warn(dev):
    s, u, x = dev.stream(), dev.stream(), dev.malloc(64).fill(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CaptureWarning)
        g, tg = _capture_group(s, x)
        with tg.update(u):
            u.launch("EasyOPf", 1, args=(x,))
        with npusim.task_update(u, tg):
            u.launch("EasyOPf", 1, args=(x,))
        del tg
        gc.collect()
    u.synchronize()
    g.destroy()
