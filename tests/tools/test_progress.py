"""Progress bars appear on a terminal only (a redirected log gets no carriage returns)."""
from __future__ import annotations

import sys

import npusim.progress as P


def _long_work(monkeypatch):
    monkeypatch.setattr(P, "SHOW_AFTER_S", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)        # the plain-text fallback
    p = P.Progress("device", "SQE")
    p.update(1000)
    p.update(1000)
    p.close()


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.delenv("NPUSIM_PROGRESS", raising=False)
    _long_work(monkeypatch)
    assert capsys.readouterr().err == ""


def test_npusim_progress_1_forces_the_bar(monkeypatch, capsys):
    monkeypatch.setenv("NPUSIM_PROGRESS", "1")
    _long_work(monkeypatch)
    assert "device: 2,000 SQE" in capsys.readouterr().err


def test_npusim_progress_0_turns_it_off_even_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setenv("NPUSIM_PROGRESS", "0")
    monkeypatch.setattr(P.sys.stderr, "isatty", lambda: True, raising=False)
    _long_work(monkeypatch)
    assert capsys.readouterr().err == ""
