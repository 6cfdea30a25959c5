"""aclrtRandomNumAsync (chapter 12): the Philox4x32-10 generator against an independent numpy
reference (exact values, every distribution and data type), statistics of large draws, the
configuration read when the task runs (counter, seed and count in device memory, parameters by
address), captured and built models replaying with what device memory holds then, every code of
the acl and runtime check order, the state a failure leaves, and the chips without the task
(docs/fidelity.md rows 166-171)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from npusim import acl
from npusim import errors as E
from npusim.runtime import api_random as R

from helpers.acl import launch, read, write
from helpers.capture import begin, chip, end, new_stream, run  # noqa: F401 (fixture)

OK = acl.ACL_SUCCESS
DROPOUT, UNIFORM, NORMAL, TRUNC = (acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
                                   acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
                                   acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
                                   acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS)
P, RT_P = E.ACL_ERROR_INVALID_PARAM, E.ACL_ERROR_RT_PARAM_INVALID
UNION = {DROPOUT: ("dropoutBitmaskInfo", ("dropoutRation",)),
         UNIFORM: ("uniformDisInfo", ("min", "max")),
         NORMAL: ("normalDisInfo", ("mean", "stddev")),
         TRUNC: ("normalDisInfo", ("mean", "stddev"))}
SIZE = {acl.ACL_FLOAT: 4, acl.ACL_FLOAT16: 2, acl.ACL_BF16: 2, acl.ACL_INT32: 4,
        acl.ACL_UINT32: 4, acl.ACL_INT64: 8, acl.ACL_UINT64: 8}


# ---- an independent numpy reference of the generator ----
M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox(ctr: np.ndarray, seed: int) -> np.ndarray:
    """Philox4x32-10 of counters ``ctr`` (shape (n, 4), u32 words) under a 64-bit key."""
    c = ctr.astype(np.uint64)
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    m = np.uint64(0xFFFFFFFF)
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        p0, p1 = np.uint64(M0) * c[:, 0], np.uint64(M1) * c[:, 2]
        c = np.stack([((p1 >> np.uint64(32)) ^ c[:, 1] ^ np.uint64(k0)) & m, p1 & m,
                      ((p0 >> np.uint64(32)) ^ c[:, 3] ^ np.uint64(k1)) & m, p0 & m], axis=1)
    return c


def words(counter: int, seed: int, n_blocks: int) -> np.ndarray:
    """The word stream: block b is Philox(counter + b), 4 words each (counter 128-bit)."""
    ctr = np.array([[((counter + b) % 2 ** 128 >> (32 * j)) & 0xFFFFFFFF for j in range(4)]
                    for b in range(n_blocks)], np.uint64)
    return philox(ctr, seed).reshape(-1)


def u01(w):
    return ((w >> np.uint64(8)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


def bf16(x) -> np.ndarray:
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)


def out_type(v32: np.ndarray, dt: int) -> np.ndarray:
    if dt == acl.ACL_FLOAT:
        return v32.view(np.uint32)
    return v32.astype(np.float16).view(np.uint16) if dt == acl.ACL_FLOAT16 else bf16(v32)


def ref_uniform_float(counter, seed, n, lo, hi, dt):
    lo32, hi32 = np.float32(lo), np.float32(hi)
    w = words(counter, seed, (n + 3) // 4)[:n]
    return out_type((u01(w) * np.float32(hi32 - lo32) + lo32).astype(np.float32), dt)


def ref_uniform_int(counter, seed, n, lo, hi, bits):
    w = words(counter, seed, (n + 3) // 4 if bits == 32 else (n + 1) // 2)
    x = [int(v) for v in w[:n]] if bits == 32 else \
        [int(w[2 * i]) | int(w[2 * i + 1]) << 32 for i in range(n)]
    return [lo + xi % (hi - lo) for xi in x]


def normal_stream(counter, seed, count, truncated):
    out, b = [], 0
    while len(out) < count:
        w = [int(v) for v in words(counter + b, seed, 1)]
        b += 1
        for h in range(2):
            u1, u2 = (w[2 * h] + 1.0) * 2.0 ** -32, w[2 * h + 1] * 2.0 ** -32
            r = math.sqrt(-2.0 * math.log(u1))
            for z in (r * math.cos(2.0 * math.pi * u2), r * math.sin(2.0 * math.pi * u2)):
                if len(out) < count and not (truncated and abs(z) > 2.0):
                    out.append(z)
    return out


def ref_normal(counter, seed, n, mean, std, dt, truncated=False):
    m, s = float(np.float32(mean)), float(np.float32(std))
    z = normal_stream(counter, seed, n, truncated)
    return out_type(np.array([np.float32(m + s * v) for v in z], np.float32), dt)


def ref_dropout(counter, seed, n, ratio):
    keep = u01(words(counter, seed, (n + 3) // 4)[:n]) >= np.float32(ratio)
    return np.packbits(keep, bitorder="little")


# ---- helpers ----
def dmalloc(n: int) -> int:
    p, ret = acl.rt.malloc(max(n, 64), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == OK
    assert acl.rt.memset(p, max(n, 64), 0, max(n, 64)) == OK
    return p


def counter_at(value: int = 0) -> int:
    p = dmalloc(16)
    write(p, np.frombuffer(value.to_bytes(16, "little"), np.uint8))
    return p


def para(v, size, is_addr=0):
    return {"isAddr": is_addr, "valueOrAddr": v, "size": size}


def task(dt, func, params, out, ctr, seed=0, num=16, para_addr=0, seed_addr=0, num_addr=0):
    member, names = UNION[func]
    size = SIZE[dt]
    return {"dataType": dt,
            "randomNumFuncParaInfo": {"funcType": func, "paramInfo": {member: {
                n: (v if isinstance(v, dict) else para(v, size)) for n, v in zip(names, params)}}},
            "randomParaAddr": para_addr, "randomResultAddr": out, "randomCounterAddr": ctr,
            "randomSeed": para(seed_addr or seed, 8, int(bool(seed_addr))),
            "randomNum": para(num_addr or num, 8, int(bool(num_addr)))}


def gen(stream, info) -> None:
    assert acl.rt.random_num_async(info, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK


# ---- the generator ----
def test_philox_matches_random123_known_answers():
    o = np.zeros(4, np.uint64)
    for ctr, key, want in [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
                           ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2,
                            (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
                           ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
                            (0xa4093822, 0x299f31d0), (0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                                       0x24126ea1))]:
        R.philox_block(np.array(ctr, np.uint64), np.uint64(key[0]), np.uint64(key[1]), o)
        assert tuple(int(x) for x in o) == want
        seed = key[0] | key[1] << 32
        c = sum(v << (32 * j) for j, v in enumerate(ctr))
        assert tuple(int(x) for x in words(c, seed, 1)) == want      # the reference agrees


@pytest.mark.parametrize("dt", [acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_BF16])
def test_uniform_floats_are_the_reference_s_bit_for_bit(dev0, stream, dt):
    out, ctr = dmalloc(64), counter_at(0x1234_5678_9ABC_DEF0_0000_0001_0000_0002)
    lo, hi = (-1.5, 2.25)
    gen(stream, task(dt, UNIFORM, (lo, hi), out, ctr, seed=0xDEADBEEF_01234567, num=13))
    want = ref_uniform_float(0x1234_5678_9ABC_DEF0_0000_0001_0000_0002, 0xDEADBEEF_01234567, 13,
                             lo, hi, dt)
    got = read(out, 13, np.uint32 if dt == acl.ACL_FLOAT else np.uint16)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dt, lo, hi, bits, signed", [
    (acl.ACL_INT32, -100, 27, 32, True), (acl.ACL_UINT32, 5, 3_000_000_000, 32, False),
    (acl.ACL_INT64, -2 ** 40, 2 ** 50 + 3, 64, True), (acl.ACL_UINT64, 7, 2 ** 63 + 11, 64, False)])
def test_uniform_integers_are_min_plus_the_word_modulo_the_range(dev0, stream, dt, lo, hi, bits,
                                                                 signed):
    out, ctr = dmalloc(128), counter_at(99)
    gen(stream, task(dt, UNIFORM, (lo, hi), out, ctr, seed=7, num=11))
    npt = {(32, True): np.int32, (32, False): np.uint32, (64, True): np.int64,
           (64, False): np.uint64}[bits, signed]
    got = read(out, 11, npt).tolist()
    assert got == ref_uniform_int(99, 7, 11, lo, hi, bits)
    assert all(lo <= g < hi for g in got)


def test_an_empty_integer_range_gives_min_everywhere(dev0, stream):
    out, ctr = dmalloc(64), counter_at()
    gen(stream, task(acl.ACL_INT32, UNIFORM, (5, 5), out, ctr, num=8))
    assert read(out, 8, np.int32).tolist() == [5] * 8


@pytest.mark.parametrize("dt", [acl.ACL_FLOAT, acl.ACL_FLOAT16, acl.ACL_BF16])
@pytest.mark.parametrize("func", [NORMAL, TRUNC])
def test_normal_and_truncated_normal_are_the_reference_s_bit_for_bit(dev0, stream, dt, func):
    out, ctr = dmalloc(64), counter_at(5)
    gen(stream, task(dt, func, (3.0, 2.0), out, ctr, seed=42, num=17))
    want = ref_normal(5, 42, 17, 3.0, 2.0, dt, truncated=func == TRUNC)
    got = read(out, 17, np.uint32 if dt == acl.ACL_FLOAT else np.uint16)
    assert got.tolist() == want.tolist()


def test_the_dropout_bitmask_keeps_a_bit_per_value_at_least_the_ratio_low_bit_first(dev0, stream):
    out, ctr = dmalloc(64), counter_at(3)
    gen(stream, task(acl.ACL_FLOAT, DROPOUT, (0.4,), out, ctr, seed=11, num=37))
    want = ref_dropout(3, 11, 37, 0.4)
    assert read(out, 5, np.uint8).tolist() == want.tolist()
    assert read(out + 5, 1, np.uint8)[0] == 0                  # only ceil(37 / 8) bytes written


def test_large_draws_have_the_distributions_moments(dev0, stream):
    n = 200_000
    out, ctr = dmalloc(8 * n), counter_at(0)
    gen(stream, task(acl.ACL_FLOAT, NORMAL, (3.0, 2.0), out, ctr, seed=1, num=n))
    x = read(out, n, np.float32).astype(np.float64)
    assert abs(x.mean() - 3.0) < 0.02 and abs(x.std() - 2.0) < 0.02
    gen(stream, task(acl.ACL_FLOAT, TRUNC, (0.0, 1.0), out, ctr, seed=2, num=n))
    x = read(out, n, np.float32).astype(np.float64)
    assert x.min() >= -2.0 and x.max() <= 2.0
    assert abs(x.mean()) < 0.01 and abs(x.std() - 0.8796) < 0.01    # sd of N(0,1) cut at 2
    gen(stream, task(acl.ACL_FLOAT, UNIFORM, (-1.0, 3.0), out, ctr, seed=3, num=n))
    x = read(out, n, np.float32).astype(np.float64)
    assert x.min() >= -1.0 and x.max() < 3.0
    assert abs(x.mean() - 1.0) < 0.02 and abs(x.var() - 16 / 12) < 0.02
    gen(stream, task(acl.ACL_FLOAT16, DROPOUT, (0.25,), out, ctr, seed=4, num=n))
    bits = np.unpackbits(read(out, n // 8, np.uint8), bitorder="little")
    assert abs(bits.mean() - 0.75) < 0.005


# ---- what the task reads when it runs ----
def test_the_counter_is_read_not_advanced_and_offsets_whole_blocks(dev0, stream):
    out, ctr = dmalloc(256), counter_at(0)
    info = task(acl.ACL_UINT32, UNIFORM, (0, 2 ** 32 - 1), out, ctr, seed=9, num=16)
    gen(stream, info)
    first = read(out, 16).tolist()
    gen(stream, info)
    assert read(out, 16).tolist() == first                       # same counter, same numbers
    assert read(ctr, 4).tolist() == [0, 0, 0, 0]
    write(ctr, np.array([1, 0, 0, 0], np.uint32))                # one block further
    gen(stream, info)
    assert read(out, 12).tolist() == first[4:]


def test_seed_count_and_parameters_by_address_are_read_when_the_task_runs(dev0, stream):
    out, ctr = dmalloc(64), counter_at(0)
    seed_p, num_p, lo_p = dmalloc(8), dmalloc(8), dmalloc(8)
    write(seed_p, np.array([77], np.uint64))
    write(num_p, np.array([6], np.uint64))
    write(lo_p, np.array([-10], np.int32))
    info = task(acl.ACL_INT32, UNIFORM, (para(lo_p, 8, 1), 10), out, ctr, seed_addr=seed_p,
                num_addr=num_p)
    busy = dmalloc(64)
    assert launch(stream, "EasyOPf", 1, (busy,), duration_ns=1_000_000) == OK   # runs first
    assert acl.rt.random_num_async(info, stream, None) == OK
    write(seed_p, np.array([78], np.uint64))         # written before the task ran: it sees 78
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(out, 7, np.int32).tolist() == ref_uniform_int(0, 78, 6, -10, 10, 32) + [0]


def test_a_user_parameter_block_is_written_at_the_launch_and_read_at_the_run(dev0, stream):
    out, ctr, pb = dmalloc(64), counter_at(0), dmalloc(16)
    info = task(acl.ACL_FLOAT, UNIFORM, (0.0, 1.0), out, ctr, num=8, para_addr=pb)
    busy = dmalloc(64)
    assert launch(stream, "EasyOPf", 1, (busy,), duration_ns=1_000_000) == OK   # runs first
    assert acl.rt.random_num_async(info, stream, None) == OK
    assert read(pb, 4, np.float32).tolist() == [0.0, 0.0, 1.0, 0.0]   # firstParam, secondParam
    write(pb, np.array([10.0, 0.0, 20.0, 0.0], np.float32))          # before the task runs
    assert acl.rt.synchronize_stream(stream) == OK
    assert read(out, 8).tolist() == ref_uniform_float(0, 0, 8, 10.0, 20.0,
                                                      acl.ACL_FLOAT).tolist()


def test_an_output_outside_device_memory_is_a_task_fault(dev0, stream):
    ctr = counter_at(0)
    out = dmalloc(64)
    assert acl.rt.random_num_async(task(acl.ACL_FLOAT, NORMAL, (0.0, 1.0), out, ctr, num=10 ** 6),
                                   stream, None) == OK
    assert acl.rt.synchronize_stream(stream) != OK
    assert read(out, 1, np.float32)[0] == 0.0                     # nothing written


def test_a_null_stream_is_the_default_stream_and_task_info_may_be_its_bytes(dev0):
    out, ctr = dmalloc(64), counter_at(0)
    raw = R.pack_task_info(task(acl.ACL_UINT32, UNIFORM, (0, 100), out, ctr, seed=3, num=4))
    assert len(raw) == 104
    assert acl.rt.random_num_async(raw, None, None) == OK
    assert acl.rt.synchronize_device() == OK
    assert read(out, 4).tolist() == ref_uniform_int(0, 3, 4, 0, 100, 32)


# ---- graphs ----
def test_a_captured_task_generates_at_every_replay_from_the_counter_then(dev0):
    s, ex = new_stream(), new_stream()
    out, ctr = dmalloc(64), counter_at(0)
    begin(s)
    assert acl.rt.random_num_async(task(acl.ACL_FLOAT, NORMAL, (0.0, 1.0), out, ctr, seed=5,
                                        num=8), s, None) == OK
    m = end(s)
    assert read(out, 1, np.float32)[0] == 0.0                 # capture runs nothing
    for offset in (0, 2, 7):
        write(ctr, np.array([offset, 0, 0, 0], np.uint32))
        run(m, ex)
        assert read(out, 8).tolist() == ref_normal(offset, 5, 8, 0.0, 1.0, acl.ACL_FLOAT).tolist()


def test_a_random_task_cannot_join_a_task_group(dev0):
    s = new_stream()
    out, ctr = dmalloc(64), counter_at(0)
    begin(s)
    assert acl.mdl.ri_capture_task_grp_begin(s) == OK
    assert acl.rt.random_num_async(task(acl.ACL_FLOAT, NORMAL, (0.0, 1.0), out, ctr), s,
                                   None) == E.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT


# ---- codes ----
def test_every_code_in_the_check_order_and_nothing_is_submitted(dev0, stream):
    out, ctr, pb = dmalloc(64), counter_at(0), dmalloc(16)
    write(pb, np.full(4, 7, np.uint32))

    def t(**kw):
        base = dict(dt=acl.ACL_FLOAT, func=NORMAL, params=(0.0, 1.0), out=out, ctr=ctr)
        base.update(kw)
        return task(base.pop("dt"), base.pop("func"), base.pop("params"), base.pop("out"),
                    base.pop("ctr"), **base)
    # acl layer (100000): NULL, not a task info, a data type outside kMapDataType
    assert acl.rt.random_num_async(None, stream, 1) == P
    assert acl.rt.random_num_async({"dataTyp": 0}, stream, 1) == P
    assert acl.rt.random_num_async(b"short", stream, 1) == P
    bad = t()
    bad["dataType"] = acl.ACL_INT8
    assert acl.rt.random_num_async(bad, stream, 1) == P
    # the stream handle (107017) before reserve (107000)
    assert acl.rt.random_num_async(t(), 0x7FFF_FFF1, 1) == E.ACL_ERROR_RT_INVALID_HANDLE
    assert acl.rt.random_num_async(t(), stream, 1) == RT_P
    # CheckRandomNumTaskInfo, in order
    bad_func = t(out=0)
    bad_func["randomNumFuncParaInfo"]["funcType"] = 9
    assert acl.rt.random_num_async(bad_func, stream, None) == RT_P
    assert acl.rt.random_num_async(t(dt=acl.ACL_INT32, params=(0, 1)), stream, None) == RT_P
    assert acl.rt.random_num_async(t(ctr=0), stream, None) == RT_P
    assert acl.rt.random_num_async(t(out=0), stream, None) == RT_P
    seed0 = t()
    seed0["randomSeed"]["size"] = 0
    assert acl.rt.random_num_async(seed0, stream, None) == RT_P
    num2 = t()
    num2["randomNum"]["isAddr"] = 2
    assert acl.rt.random_num_async(num2, stream, None) == RT_P
    wide = t(dt=acl.ACL_FLOAT16)
    wide["randomNumFuncParaInfo"]["paramInfo"]["normalDisInfo"]["stddev"]["size"] = 4
    assert acl.rt.random_num_async(wide, stream, None) == RT_P
    addr8 = t(params=(para(pb, 8, 1), 1.0))          # an address may take 8 bytes
    assert acl.rt.random_num_async(addr8, stream, None) == OK
    assert acl.rt.synchronize_stream(stream) == OK
    # randomParaAddr that is not 16 bytes of device memory
    host, ret = acl.rt.malloc_host(64)
    assert ret == OK
    assert acl.rt.random_num_async(t(para_addr=host), stream, None) == RT_P
    assert acl.rt.random_num_async(t(para_addr=8), stream, None) == RT_P
    # nothing was submitted by the refusals; the user's block is untouched
    assert read(pb, 4).tolist() == [7] * 4
    st, ret = acl.rt.stream_query(stream)
    assert ret == OK and st == acl.ACL_STREAM_STATUS_COMPLETE


def test_context_codes(dev0, stream):
    out, ctr = dmalloc(64), counter_at(0)
    info = task(acl.ACL_FLOAT, NORMAL, (0.0, 1.0), out, ctr)
    ctx, ret = acl.rt.create_context(0)
    assert ret == OK
    assert acl.rt.random_num_async(info, stream, None) == E.ACL_ERROR_RT_STREAM_CONTEXT
    assert acl.rt.destroy_context(ctx) == OK


@pytest.mark.parametrize("name", ["Ascend950", "Ascend310P"])
def test_chips_without_the_generator_refuse_with_207000_after_the_acl_checks(chip, name):
    chip(name)
    out, ctr = dmalloc(64), counter_at(0)
    info = task(acl.ACL_FLOAT, NORMAL, (0.0, 1.0), out, ctr)
    assert acl.rt.random_num_async(None, None, None) == P
    assert acl.rt.random_num_async(info, 0x7FFF_FFF1, 1) == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def test_the_a3_profile_has_the_generator(chip):
    chip("Ascend910_93")
    s = new_stream()
    out, ctr = dmalloc(64), counter_at(0)
    gen(s, task(acl.ACL_FLOAT, UNIFORM, (0.0, 1.0), out, ctr, num=4))
    assert read(out, 4).tolist() == ref_uniform_float(0, 0, 4, 0.0, 1.0, acl.ACL_FLOAT).tolist()


def test_a_captured_random_task_has_the_default_task_type(dev0):
    s = new_stream()
    out, ctr = dmalloc(64), counter_at(0)
    begin(s)
    assert acl.rt.random_num_async(task(acl.ACL_FLOAT, NORMAL, (0.0, 1.0), out, ctr), s,
                                   None) == OK
    m = end(s)
    streams, ret = acl.mdl.ri_get_streams(m)
    assert ret == OK
    tasks, ret = acl.mdl.ri_get_tasks_by_stream(streams[0])
    assert ret == OK
    assert acl.mdl.ri_task_get_type(tasks[0]) == (acl.ACL_MODEL_RI_TASK_DEFAULT, OK)
    assert acl.mdl.ri_task_get_params(tasks[0]) == (None, RT_P)


def test_reserve_may_be_none_or_zero(dev0, stream):
    out, ctr = dmalloc(64), counter_at(0)
    info = task(acl.ACL_FLOAT, UNIFORM, (0.0, 1.0), out, ctr, num=4)
    assert acl.rt.random_num_async(info, stream, 0) == OK
    assert acl.rt.random_num_async(info, stream) == OK
    assert acl.rt.random_num_async(info, stream, object()) == RT_P


def test_the_random_num_task_sample_prints_the_generator_s_first_values(capsys):
    from helpers.examples import load
    r = load("builtin_random_num_task").main()
    assert r["normal_float"].view(np.uint32).tolist() == \
        ref_normal(0, 0, 5, 3.0, 2.0, acl.ACL_FLOAT).tolist()
    bf = lambda b: float(np.array([b << 16], np.uint32).view(np.float32)[0])  # noqa: E731
    assert r["truncated_bf16"].tolist() == \
        ref_normal(0, 0, 5, bf(0x3F80), bf(0x4000), acl.ACL_BF16, truncated=True).tolist()
    assert r["uniform_fp16"].tolist() == ref_uniform_float(0, 0, 5, 1.0, 2.0,
                                                           acl.ACL_FLOAT16).tolist()
    assert r["uniform_int32"].tolist() == ref_uniform_int(0, 0, 5, 1, 100, 32)
    assert r["dropout"].tolist() == ref_dropout(0, 0, 40, 0.4).tolist()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Gen normal distribution random num, data type: float "
    assert out[1] == f"Random result[0] = {r['normal_float'][0]:f}"
    assert out[-1] == "Sample Run Successfully."
    assert sum(line.startswith("Random result[") for line in out) == 25
