"""The npusim pytest plugin: a fresh simulator per test, leak checks, simulated-time benchmarks.

Registered through the ``pytest11`` entry point (``pyproject.toml``), so installing npusim makes
it available; ``-p no:npusim`` turns it off. See docs/testing.md.

* Options (and ini keys): ``--npusim-profile`` (``npusim_profile``), ``--npusim-strict``
  (``npusim_strict``), ``npusim_leaks`` (``warn`` / ``error`` / ``off``), ``npusim_autouse``
  (fresh simulator for every test), ``--npusim-trace-dir`` (``npusim_trace_dir``),
  ``--npusim-save`` / ``--npusim-compare`` / ``--npusim-fail-over``.
* Marker ``@pytest.mark.npusim(profile=..., strict=...)`` on a test, class or module.
* Fixtures ``npusim`` (the package, initialised with device 0 set, torn down after the test),
  ``acl`` (the facade), ``npu`` (the Pythonic ``Device``), ``npusim_trace`` (the test's trace,
  of one device or of every device, written to ``<trace dir>/<test>.json`` when the test fails)
  and ``npusim_benchmark``.

The leak check compares ``npusim.census()`` (``runtime/census.py``) after the test with the one
taken when the fixture was set up; the sites come from a profile hook that watches only the
facade's creating functions (``acl.rt.create_*``, ``malloc*``, ``acl.mdl.ri_capture_begin``) while
a test holds the ``npusim`` fixture.

This module sits beside the ``npusim`` package, not in it: importing anything under ``npusim``
runs ``npusim/__init__.py``, which loads numba. Importing this module imports neither numba nor
the engine (``npusim`` is imported inside the fixtures), so a suite that never requests them
pays nothing.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field

import pytest

_PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npusim") + os.sep
_RESULTS_KEY = pytest.StashKey[list]()
_REPORT_KEY = pytest.StashKey[dict]()
_BENCH_DIR = ".npusim-benchmarks"


class NpusimLeakWarning(UserWarning):
    """A test left simulator resources (streams, events, models, allocations, a capture) behind."""


# ---------------------------------------------------------------- options


def pytest_addoption(parser):
    g = parser.getgroup("npusim", "npusim simulator")
    g.addoption("--npusim-profile", default=None, metavar="NAME",
                help="chip profile of the npusim fixtures (default: the simulator's default)")
    g.addoption("--npusim-strict", action="store_true", default=None,
                help="capture-lint warnings, races and leaks fail the test that caused them")
    g.addoption("--npusim-trace-dir", default=None, metavar="DIR",
                help="where npusim_trace writes a failed test's trace (default npusim-traces)")
    g.addoption("--npusim-save", default=None, metavar="NAME",
                help=f"store the npusim_benchmark results as {_BENCH_DIR}/NAME.json")
    g.addoption("--npusim-compare", default=None, metavar="NAME",
                help="compare npusim_benchmark results with a stored run")
    g.addoption("--npusim-fail-over", default=None, metavar="PCT",
                help="with --npusim-compare: fail a benchmark whose device time grew by more")
    parser.addini("npusim_profile", "chip profile of the npusim fixtures", default="")
    parser.addini("npusim_strict", "strict mode (see --npusim-strict)", type="bool",
                  default=False)
    parser.addini("npusim_leaks", "leak check at teardown: warn, error or off", default="warn")
    parser.addini("npusim_autouse", "give every test a fresh simulator (npusim.reset())",
                  type="bool", default=False)
    parser.addini("npusim_trace_dir", "where failed tests' traces go", default="npusim-traces")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "npusim(profile=None, strict=None): npusim simulator settings for the test "
        "(gives it a fresh simulator)")
    config.stash[_RESULTS_KEY] = []


@dataclass
class Settings:
    profile: str | None
    strict: bool
    leaks: str          # warn / error / off


def _settings(item) -> Settings:
    cfg = item.config
    profile = cfg.getoption("--npusim-profile") or cfg.getini("npusim_profile") or None
    strict = cfg.getoption("--npusim-strict")
    strict = bool(cfg.getini("npusim_strict")) if strict is None else True
    for m in reversed(list(item.iter_markers("npusim"))):    # closest marker wins
        profile = m.kwargs.get("profile", profile)
        if m.kwargs.get("strict") is not None:
            strict = bool(m.kwargs["strict"])
    leaks = str(cfg.getini("npusim_leaks")).strip().lower() or "warn"
    if leaks not in ("warn", "error", "off"):
        raise pytest.UsageError(f"npusim_leaks must be warn, error or off, not {leaks!r}")
    if strict and leaks == "warn":
        leaks = "error"
    return Settings(profile, strict, leaks)


# ---------------------------------------------------------------- creation sites


def _user_site(frame) -> str:
    """``file:line in func()`` of the first frame outside the npusim package."""
    f = frame
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    if f is None:
        return "?"
    path = f.f_code.co_filename
    try:
        rel = os.path.relpath(path)
        path = rel if not rel.startswith("..") else path
    except ValueError:
        pass
    func = f.f_code.co_name
    return f"{path}:{f.f_lineno}" + (f" in {func}()" if func != "<module>" else "")


_TRACKED = {"context", "stream", "event", "notify", "model", "binary", "cond", "malloc"}
"""What a test creates and must free: handles of these kinds, and its allocations."""


class SiteTracker:
    """Where each handle and allocation of the test was created: a creation hook of the runtime
    (``npusim.runtime.handles.CREATE_HOOKS``), so nothing else the test runs is slowed down."""

    def __init__(self):
        self.created: list = []          # (kind, value, facade API, site)

    def _hook(self, kind: str, value: int) -> None:
        if kind in _TRACKED:
            frame = sys._getframe(1)
            self.created.append((kind, value, _facade_api(frame), _user_site(frame)))

    def start(self) -> None:
        from npusim.runtime.handles import CREATE_HOOKS     # deferred with the package
        CREATE_HOOKS.append(self._hook)

    def stop(self) -> None:
        from npusim.runtime.handles import CREATE_HOOKS
        if self._hook in CREATE_HOOKS:
            CREATE_HOOKS.remove(self._hook)


def _facade_api(frame) -> str:
    """The ``acl.*`` function the creation happened in: the outermost facade wrapper on the
    stack (a generated wrapper keeps its API name in its globals as ``_name``)."""
    api, f = "", frame
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        name = f.f_globals.get("_name")
        if name.__class__ is str and name.startswith("acl."):
            api = name
        f = f.f_back
    return api


def _still_live(RT, kind: str, value) -> bool:
    if kind == "malloc":
        return any(d.state.mem.allocation_of(value) is not None for d in RT.devices.values())
    return RT.handles.entry(value) is not None


def _describe(RT, kind: str, value, api: str, site: str) -> str:
    if kind == "model":
        m = RT.handles.entry(value)[1]
        if m.is_capturing:
            origin = m.streams[0].user_stream if m.streams else None
            on = f" on stream 0x{origin.handle:x}" if origin is not None and origin.handle else ""
            return f"  open capture{on} ({api or 'aclmdlRICaptureBegin'}) at {site}"
    what = "allocation 0x%x" % value if kind == "malloc" else f"{kind} 0x{value:x}"
    by = f" by {api}" if api else ""
    return f"  {what} created{by} at {site}"


# ---------------------------------------------------------------- the session of one test


@dataclass
class _Session:
    """What the ``npusim`` fixture set up for one test."""
    settings: Settings
    base: object = None                 # npusim.Census after setup
    tracker: SiteTracker | None = None
    problems: list = field(default_factory=list)
    threads: frozenset = frozenset()    # the threads alive when the test began


def _start(request, trace: bool) -> _Session:
    import npusim   # deferred: imports numba and the engine, only for tests that use npusim

    st = _Session(_settings(request.node))
    npusim.reset()
    npusim.configure(profile=st.settings.profile, trace=trace or None,
                     **({"record_accesses": True} if st.settings.strict else {}))
    acl = npusim.acl
    assert acl.init() == acl.ACL_SUCCESS, "aclInit failed"
    assert acl.rt.set_device(0) == acl.ACL_SUCCESS, "aclrtSetDevice(0) failed"
    npusim.analysis.clear_errors()
    st.base = npusim.census()
    st.threads = frozenset(threading.enumerate())
    if st.settings.leaks != "off":
        st.tracker = SiteTracker()
        st.tracker.start()
    return st


# census kinds only a test's own calls create; the others (function handles of by-name kernels,
# the device printf buffer, sync slots...) also grow by the simulator's lazy caches, so they
# count as a leak only through a tracked creation that is still live
_USER_KINDS = ("contexts", "streams", "capture streams", "models", "cond handles", "events",
               "notifies")


def _leak_report(npusim, st: _Session) -> str:
    from npusim.runtime.runtime import RT
    diff = {k: v for k, v in npusim.census().diff(st.base).items() if v > 0}
    if not diff:
        return ""
    sites = [_describe(RT, kind, value, api, site)
             for kind, value, api, site in (st.tracker.created if st.tracker else ())
             if _still_live(RT, kind, value)]
    if not sites and not any(k.split(" ", 2)[-1] in _USER_KINDS for k in diff):
        return ""
    return "\n".join(["npusim: the test left resources behind: "
                      + ", ".join(f"{k} +{v}" for k, v in sorted(diff.items()))] + sites)


_THREAD_GRACE_S = 0.5
"""How long teardown waits, in all, for the test's threads to end before it reports them."""


def _stray_threads(st: _Session) -> list:
    """Threads the test started that are still running after it (and after the simulator was
    reset under them): each keeps calling the facade with the handles of a test that is over,
    into the next test's simulator."""
    deadline = time.monotonic() + _THREAD_GRACE_S
    out = []
    dummy = getattr(threading, "_DummyThread", ())      # a foreign thread: cannot be joined
    for t in threading.enumerate():
        if t in st.threads or t is threading.current_thread() or isinstance(t, dummy):
            continue
        t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            out.append(t)
    return out


def _describe_thread(t) -> str:
    """``thread 'name' (daemon) running fn() defined at file:line, now at file:line``: the
    target's definition (where the test's code made it) and the frame it runs in now."""
    target = getattr(t, "_target", None)        # threading.Thread keeps its target there
    code = getattr(target, "__code__", None)
    what = ""
    if code is not None:
        what = f" running {getattr(target, '__qualname__', code.co_name)}() defined at " \
               f"{_rel(code.co_filename)}:{code.co_firstlineno}"
    frame = sys._current_frames().get(t.ident)
    while frame is not None and frame.f_code.co_filename == threading.__file__:
        frame = frame.f_back                    # waiting in threading (an Event, a join)
    now = f", now at {_user_site(frame)}" if frame is not None else ""
    return f"  thread {t.name!r}{' (daemon)' if t.daemon else ''}{what}{now}"


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path


def _thread_report(st: _Session) -> str:
    stray = _stray_threads(st)
    if not stray:
        return ""
    return "\n".join([f"npusim: the test left {len(stray)} thread(s) running (join them before "
                      "the test ends: the simulator is reset under them, and they go on "
                      "calling it in the next test):"] + [_describe_thread(t) for t in stray])


def _finish(st: _Session, failed: bool) -> str:
    """Teardown checks (unless the test failed already), then a clean simulator. Returns the
    strict-mode failure message, or ""."""
    import npusim   # deferred: see _start
    if st.tracker is not None:
        st.tracker.stop()
    errors = []
    try:
        if not failed:
            if st.settings.strict:      # outside strict mode a refused call is the test's own
                errors += [f"npusim: capture lint: {e}" for e in npusim.analysis.last_errors()]
                from npusim.runtime.runtime import RT
                for dev_id, dev in list(RT.devices.items()):
                    if dev.state.access_log is not None:
                        rep = npusim.analysis.races_in_eager(dev_id)
                        if rep:
                            errors.append(f"npusim: races on device {dev_id}:\n{rep}")
            if st.settings.leaks != "off":
                rep = _leak_report(npusim, st)
                if rep:
                    if st.settings.leaks == "error":
                        errors.append(rep)
                    else:
                        warnings.warn(NpusimLeakWarning(rep), stacklevel=1)
    finally:
        npusim.reset()
    if not failed and st.settings.leaks != "off":
        rep = _thread_report(st)
        if rep:
            if st.settings.leaks == "error":
                errors.append(rep)
            else:
                warnings.warn(NpusimLeakWarning(rep), stacklevel=1)
    return "\n".join(errors)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    if rep.when == "call":
        item.stash[_REPORT_KEY] = {"failed": rep.failed}
    return rep


def _test_failed(request) -> bool:
    return request.node.stash.get(_REPORT_KEY, {}).get("failed", True)


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def npusim(request):
    """The ``npusim`` package with a fresh simulator: ``acl.init``, device 0 set on the test's
    thread; after the test the leak / lint (/ race, strict) checks, then ``npusim.reset()``."""
    trace = bool({"npusim_trace", "npusim_benchmark"} & set(request.fixturenames))
    st = _start(request, trace)
    import npusim as pkg    # already imported by _start
    yield pkg
    msg = _finish(st, _test_failed(request))
    if msg:
        pytest.fail(msg, pytrace=False)


@pytest.fixture
def acl(npusim):
    """``npusim.acl``, the pyACL-style facade, on the test's simulator."""
    return npusim.acl


@pytest.fixture
def npu(npusim):
    """``npusim.Device(id=0)``: the Pythonic device of the test's simulator."""
    return npusim.Device(id=0)


@pytest.fixture
def npusim_trace(request, npusim):
    """A callable returning the trace so far: ``npusim_trace()`` device 0's
    (``npusim.trace.Trace``), ``npusim_trace(1)`` device 1's, ``npusim_trace(None)`` every
    device's (``npusim.trace.WorldTrace``). When the test fails the trace is written to
    ``<npusim_trace_dir>/<test name>.json`` (Chrome format): of every device that ran, in one
    file, when the test used several."""
    from npusim.trace import Trace, WorldTrace   # deferred with the package
    from npusim.runtime.runtime import RT

    def current(device: int | None = 0):
        if device is None:
            return WorldTrace.from_devices()
        return Trace.from_device(RT.devices[device])

    yield current
    ran = [d for d, dev in RT.devices.items() if len(dev.state.trace_rows())]
    if _test_failed(request) and (0 in RT.devices or ran):
        d = request.config.getoption("--npusim-trace-dir") or \
            request.config.getini("npusim_trace_dir")
        d = os.path.join(str(request.config.rootpath), d) if not os.path.isabs(d) else d
        os.makedirs(d, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid).strip("_")
        path = os.path.join(d, name + ".json")
        tr = WorldTrace.from_devices(ran) if len(ran) > 1 else current(ran[0] if ran else 0)
        tr.to_chrome(path)
        request.node.add_report_section("teardown", "npusim trace", f"trace written to {path}")


def pytest_collection_modifyitems(config, items):
    """A test with the ``npusim`` marker (or every test, ``npusim_autouse = true``) that does not
    request the ``npusim`` fixture still gets a fresh simulator before and after it
    (``_npusim_fresh``). Added here, per test that needs it, rather than as an autouse fixture:
    a suite that does not use npusim pays nothing per test."""
    every = config.getini("npusim_autouse")
    for item in items:
        names = getattr(item, "fixturenames", None)     # pytest Function items only
        if names is None or "npusim" in names:
            continue
        if every or item.get_closest_marker("npusim") is not None:
            names.insert(0, "_npusim_fresh")


@pytest.fixture
def _npusim_fresh(request):
    """The fresh simulator of a marked test that does not request ``npusim``."""
    import npusim   # deferred: only for marked tests
    npusim.reset()
    npusim.configure(profile=_settings(request.node).profile)
    yield
    npusim.reset()


# ---------------------------------------------------------------- simulated-time benchmarks


@dataclass
class BenchResult:
    """One measured call of ``npusim_benchmark``. Simulated figures (``device_ns``,
    ``per_stream_ns``, ``api_calls``, ``sqes``) are deterministic; ``wall_s`` is not."""
    name: str
    device_ns: int
    per_stream_ns: dict
    api_calls: int
    sqes: int
    wall_s: float

    def as_dict(self) -> dict:
        return {"name": self.name, "device_ns": self.device_ns,
                "per_stream_ns": {str(k): v for k, v in self.per_stream_ns.items()},
                "api_calls": self.api_calls, "sqes": self.sqes, "wall_s": self.wall_s}


def _measure(name, fn, args, kwargs) -> BenchResult:
    from npusim.runtime.runtime import RT   # deferred with the package
    from npusim import acl
    dev = RT.devices[0]
    n_rows, n_host = len(dev.state.trace_rows()), len(RT.host_trace)
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    wall = time.perf_counter() - t0
    api_calls = len(RT.host_trace) - n_host
    acl.rt.synchronize_device()             # run what fn left queued: it counts, not this call
    rows = dev.state.trace_rows()[n_rows:]
    per = {}
    for r in rows:
        sq = int(r["sq"])
        lo, hi = per.get(sq, (int(r["start"]), int(r["end"])))
        per[sq] = (min(lo, int(r["start"])), max(hi, int(r["end"])))
    total = (max(h for _, h in per.values()) - min(lo for lo, _ in per.values())) if per else 0
    names = {sq: s.describe() for sq, s in dev.streams.items()}
    names.update({sq: cs.describe() for sq, cs in dev.streams_by_sq_model.items()})
    return BenchResult(name, total, {names.get(sq, f"sq{sq}"): h - lo
                                     for sq, (lo, h) in sorted(per.items())},
                       api_calls, len(rows), wall)


def _threshold(config) -> float | None:
    s = config.getoption("--npusim-fail-over")
    if s is None:
        return None
    try:
        return float(str(s).rstrip("%")) / 100.0
    except ValueError:
        raise pytest.UsageError(f"--npusim-fail-over wants a percentage like 5%, not {s!r}")


def _pct(fraction: float) -> str:
    """A threshold as the user wrote it: 0.005 -> "0.5%", 0.05 -> "5%" (``:.0%`` printed 0.5 %
    as "0%")."""
    return f"{fraction * 100:.6g}%"


def _stored(config, name) -> dict:
    path = os.path.join(str(config.rootpath), _BENCH_DIR, name + ".json")
    if not os.path.exists(path):
        raise pytest.UsageError(f"--npusim-compare {name}: no stored run at {path}")
    with open(path) as f:
        return {r["name"]: r for r in json.load(f)["benchmarks"]}


@pytest.fixture
def npusim_benchmark(request, npusim):
    """``npusim_benchmark(fn, *args, **kwargs)``: call ``fn`` once to warm up, then once more
    measured; returns a ``BenchResult`` (``.device_ns``, ``.api_calls``, ``.sqes``, ``.wall_s``).
    Call it more than once in a test with ``name=``-distinct labels via ``.named(label)``."""
    config = request.config
    results = config.stash[_RESULTS_KEY]
    compare = config.getoption("--npusim-compare")
    before = _stored(config, compare) if compare else {}
    over = _threshold(config)
    mine: list = []

    def run(fn, *args, _label=None, **kwargs):
        fn(*args, **kwargs)                                     # warm-up (compiles, caches)
        npusim.acl.rt.synchronize_device()
        name = request.node.nodeid + (f"[{_label}]" if _label else "")
        r = _measure(name, fn, args, kwargs)
        results.append(r.as_dict())
        mine.append(r)
        if "benchmark" in request.fixturenames:                 # pytest-benchmark is in use
            bm = request.getfixturevalue("benchmark")
            key = "npusim" if not _label else f"npusim[{_label}]"
            bm.extra_info[key] = r.as_dict()
        return r

    yield run
    if before and over is not None and not _test_failed(request):
        bad = []
        for r in mine:
            b = before.get(r.name)
            if b and b["device_ns"] and (r.device_ns - b["device_ns"]) / b["device_ns"] > over:
                bad.append(f"  {r.name}: device_ns {b['device_ns']} -> {r.device_ns} "
                           f"({(r.device_ns - b['device_ns']) / b['device_ns']:+.1%})")
        if bad:
            pytest.fail(f"npusim: simulated time regressed over {_pct(over)} "
                        f"against {compare!r}:\n" + "\n".join(bad), pytrace=False)


# ---------------------------------------------------------------- xdist merge and summary


def pytest_sessionfinish(session):
    config = session.config
    results = config.stash.get(_RESULTS_KEY, [])
    workeroutput = getattr(config, "workeroutput", None)     # set by pytest-xdist on a worker
    if workeroutput is not None:
        workeroutput["npusim_benchmarks"] = json.dumps(results)
        return
    name = config.getoption("--npusim-save")
    if name and results:
        d = os.path.join(str(config.rootpath), _BENCH_DIR)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump({"benchmarks": sorted(results, key=lambda r: r["name"])}, f, indent=1)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: merge a worker's benchmark results into the controller's."""
    out = getattr(node, "workeroutput", {}).get("npusim_benchmarks")
    if out:
        node.config.stash[_RESULTS_KEY].extend(json.loads(out))


def pytest_terminal_summary(terminalreporter, config):
    results = config.stash.get(_RESULTS_KEY, [])
    if not results or getattr(config, "workeroutput", None) is not None:
        return
    compare = config.getoption("--npusim-compare")
    try:
        before = _stored(config, compare) if compare else {}
    except pytest.UsageError:
        before = {}
    tr = terminalreporter
    tr.write_sep("-", "npusim simulated-time benchmarks (deterministic: same figure every run "
                      "and on every machine; wall time is not)")
    w = max(len("benchmark"), *(len(r["name"]) for r in results))
    head = f"{'benchmark':<{w}} {'device_ns':>12} {'api_calls':>9} {'sqes':>6} {'wall_ms':>9}"
    if before:
        head += f" {'before_ns':>12} {'change':>8}"
    tr.write_line(head)
    for r in sorted(results, key=lambda r: r["name"]):
        line = (f"{r['name']:<{w}} {r['device_ns']:>12} {r['api_calls']:>9} "
                f"{r['sqes']:>6} {r['wall_s'] * 1e3:>9.2f}")
        b = before.get(r["name"])
        if before:
            if b and b["device_ns"]:
                line += f" {b['device_ns']:>12} {(r['device_ns'] - b['device_ns']) / b['device_ns']:>+8.1%}"
            else:
                line += f" {'-':>12} {'new':>8}"
        tr.write_line(line)
