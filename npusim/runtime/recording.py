"""What the analysis tools record while a program runs: source sites and device access logs.

``REC`` is the process-wide switch board (``npusim.analysis.record()`` and
``npusim.configure(record_accesses=True)`` set it):

* ``REC.on`` — tag every submitted or captured SQE: ``a5`` = the *site* (the Python source line
  outside npusim that issued it, an index into ``REC.sites``), and for eager SQEs ``a4`` = the
  host epoch (how many device observations the host had made when it submitted the task). The
  engine ignores ``a4``/``a5``; they travel with the SQE into the access log's task rows. With
  recording off ``Stream.submit`` and ``CaptureStream.append`` pay one attribute test.
* ``REC.accesses`` — every device opened gets an ``AccessLog`` (``npusim.device.recording``).

``site()`` walks out of the npusim package with ``sys._getframe`` (about a microsecond), and is
also what the capture linter and the deadlock explainer use to name the offending call.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from ..device.recording import AccessLog

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True)
class Site:
    """A Python source line that issued a call into npusim (``api`` is the npusim entry point
    it called; ``via`` the line that called that line's function, when it is user code too)."""
    file: str
    line: int
    func: str
    api: str
    via: str = ""

    def __str__(self) -> str:
        s = f"{_short(self.file)}:{self.line}"
        if self.func and self.func != "<module>":
            s += f" in {self.func}()"
        if self.via:
            s += f" (called from {self.via})"
        return s


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


_info: dict = {}    # id(code) -> (inside npusim, entry-point label or None, the code object)
# keyed by id: a code object hashes its bytecode at every lookup; the value keeps it alive


def _code_info(code):
    v = _info.get(id(code))
    if v is None:
        name = getattr(code, "co_qualname", code.co_name)
        inside = code.co_filename.startswith(_PKG)
        # wrappers (facade tracing, fault injection) are closures: not an entry point
        v = _info[id(code)] = (inside, name if inside and "<locals>" not in name else None, code)
    return v


class Recording:
    def __init__(self):
        self.on = False              # tag SQEs with their site (and host epoch)
        self.accesses = False        # devices keep an access log
        self.sites: list[Site | None] = [None]     # id 0: unknown
        self._ids: dict = {}

    # ---- sites ----
    def site_id(self, depth: int = 1) -> int:
        """Id of the first caller frame outside npusim (0 when there is none)."""
        f = sys._getframe(depth)
        api = ""
        info = _info
        while f is not None:
            v = info.get(id(f.f_code)) or _code_info(f.f_code)
            if not v[0]:
                break
            if v[1] is not None:
                api = v[1]
            f = f.f_back
        if f is None:
            return 0
        code, line = f.f_code, f.f_lineno
        g = f.f_back
        via = (g.f_code, g.f_lineno) if g is not None and \
            not (info.get(id(g.f_code)) or _code_info(g.f_code))[0] else None
        # ids, not code objects (kept alive by _info, so an id is never reused)
        key = (id(code), line, id(via[0]) if via else 0, via[1] if via else 0, api)
        sid = self._ids.get(key)
        if sid is None:
            v = f"{_short(via[0].co_filename)}:{via[1]}" if via else ""
            sid = self._ids[key] = len(self.sites)
            self.sites.append(Site(code.co_filename, line, code.co_name, api, v))
        return sid

    def site(self, depth: int = 1) -> Site | None:
        return self.sites[self.site_id(depth + 1)]

    def site_of(self, sid: int) -> Site | None:
        return self.sites[sid] if 0 < sid < len(self.sites) else None

    def tag(self, dev) -> tuple[int, int]:
        """(a4, a5) of an eager SQE being submitted: host epoch, site."""
        log = dev.state.access_log
        return (log.epoch if log is not None else 0), self.site_id(2)

    # ---- switching ----
    def attach(self, dev) -> None:
        """Give a device an access log (recording accesses)."""
        if dev.state.access_log is None:
            dev.state.access_log = AccessLog(dev.state)

    def detach(self, dev) -> None:
        log = dev.state.access_log
        if log is not None:
            log.close()
            dev.state.access_log = None


REC = Recording()


def site() -> Site | None:
    """The user source line that is calling into npusim right now."""
    return REC.site(2)
