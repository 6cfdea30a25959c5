"""The facade against the facts kept from Huawei's pyACL reference (``npusim.acl.pyacl_reference``):
every documented function exists under its pyACL name, takes the page's arguments in the page's
order, answers in the page's return shape (outputs first, the code ``ret`` last) and, in an area
npusim does not simulate, answers 207000 naming the area; docs/pyacl.md's table cites the page."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from npusim import acl
from npusim.acl import pyacl
from npusim.acl.pyacl_reference import PAGES, PTR_TO_NUMPY_TYPES, SOURCES

DOCUMENTED = PAGES + SOURCES      # a page of the reference, or pyACL's documentation source

ROWS = {r[0]: r for r in pyacl.rows(acl)}


def _full(mod: str, name: str) -> str:
    return f"acl.{name}" if mod == "acl" else f"acl.{mod}.{name}"


def _parse(form: str) -> tuple[list[str], list[str]]:
    """(outputs, arguments) of a page's Python form ``a, b, ret = acl.x.f(p, q)``."""
    lhs, call = (s.strip() for s in form.split("=", 1))
    args = re.fullmatch(r"[\w.]+\((.*)\)", call).group(1)
    return [o.strip() for o in lhs.split(",")], [a.strip() for a in args.split(",") if a.strip()]


def _fn(mod: str, name: str):
    return getattr(acl if mod == "acl" else vars(acl)[mod], name)   # refused areas answer too


def test_the_reference_rows_are_unique_and_well_formed():
    assert len({(m, n) for m, n, *_ in PAGES}) == len(PAGES)
    for mod, name, c, form, page, edition in PAGES:
        outs, _ = _parse(form)
        assert re.search(rf"\b{_full(mod, name)}\(", form), form
        assert re.fullmatch(r"(aclpythondevg|atlasprofiling)_\d\d_\d{4}", page), page
        assert re.fullmatch(r"(zh|en)/\w+/[\w.]+", edition), edition
        assert c == "-" or c.startswith("acl"), c
        assert "ret" not in outs[:-1]


@pytest.mark.parametrize("entry", PAGES, ids=lambda e: _full(e[0], e[1]))
def test_every_documented_function_is_a_table_row_citing_its_page(entry):
    mod, name, c, form, page, edition = entry
    row = ROWS.get(_full(mod, name))
    assert row is not None, f"{_full(mod, name)} (pyACL reference {page}) is not in the table"
    assert c == "-" or row[1] == c
    assert row[3] == form and page in row[5] and edition in row[5]


def test_the_documentation_source_rows_are_unique_well_formed_and_have_no_page():
    assert len({(m, n) for m, n, *_ in DOCUMENTED}) == len(DOCUMENTED)
    for mod, name, c, form, path, commit in SOURCES:
        _parse(form)
        assert re.search(rf"\b{_full(mod, name)}\(", form), form
        assert re.fullmatch(r"\w+/function-\w+\.md", path) and name in path, path
        assert re.fullmatch(r"[0-9a-f]{40}", commit) and c.startswith("acl")


@pytest.mark.parametrize("entry", SOURCES, ids=lambda e: _full(e[0], e[1]))
def test_every_documentation_source_row_is_a_table_row_citing_its_file(entry):
    mod, name, c, form, path, commit = entry
    row = ROWS[_full(mod, name)]
    assert row[1] == c and row[3] == form
    assert row[5].startswith(pyacl.SRC) and path in row[5] and commit[:8] in row[5]


@pytest.mark.parametrize("entry", DOCUMENTED, ids=lambda e: _full(e[0], e[1]))
def test_every_documented_function_takes_the_page_s_arguments_in_its_order(entry):
    mod, name, _, form, _, _ = entry
    _, args = _parse(form)
    inspect.signature(_fn(mod, name)).bind(*range(len(args)))


# acl.init / acl.finalize change the process's state; acl.util's pointer helpers raise on misuse
# (as pyACL's do): their shapes are checked by test_pyacl.py's calls with real values
_NOT_CALLED_HOSTILE = {"acl.init", "acl.finalize", "acl.util.ptr_to_numpy", "acl.util.numpy_to_ptr",
                       "acl.util.numpy_contiguous_to_ptr", "acl.util.bytes_to_ptr",
                       "acl.util.ptr_to_bytes"}


@pytest.mark.parametrize("entry",
                         [e for e in DOCUMENTED if _full(e[0], e[1]) not in _NOT_CALLED_HOSTILE],
                         ids=lambda e: _full(e[0], e[1]))
def test_every_documented_function_answers_in_the_page_s_return_shape(entry):
    """Called with ``None`` for every argument (no device set: a fresh simulator), each function
    still answers in its page's shape: a bare code, or the outputs then the code."""
    mod, name, _, form, _, _ = entry
    outs, args = _parse(form)
    r = _fn(mod, name)(*[None] * len(args))
    if outs[-1] != "ret":                     # returns the object itself, no code
        assert not isinstance(r, tuple) or len(r) == len(outs)
    elif len(outs) == 1:
        assert isinstance(r, int) and not isinstance(r, bool)
    else:
        assert isinstance(r, tuple) and len(r) == len(outs) and isinstance(r[-1], int)
    if ROWS[_full(mod, name)][2] != "simulated":
        code = r[-1] if isinstance(r, tuple) else r
        assert code in (acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT, None)


def test_the_pointer_helpers_answer_in_the_page_s_shapes(acl):
    arr = np.arange(6, dtype=np.int32)
    ptr = acl.util.numpy_to_ptr(arr)
    assert isinstance(ptr, int)
    assert isinstance(acl.util.ptr_to_numpy(ptr, (6,), 5), np.ndarray)
    assert isinstance(acl.util.ptr_to_bytes(ptr, 24), bytes)
    data = b"abcd"
    assert isinstance(acl.util.bytes_to_ptr(data), int)
    p2, out = acl.util.numpy_contiguous_to_ptr(arr)
    assert (p2, out) == (ptr, arr) and out is arr


def test_numpy_contiguous_to_ptr_copies_a_non_contiguous_array_and_points_at_the_copy(acl):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    ptr, out = acl.util.numpy_contiguous_to_ptr(a.T)
    assert out is not a and out.flags.c_contiguous and (out == a.T).all()
    dev, ret = acl.rt.malloc(48, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    assert ret == 0
    assert acl.rt.memcpy(dev, 48, ptr, 48, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    back = np.zeros((4, 3), dtype=np.int32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(back), 48, dev, 48,
                         acl.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert (back == a.T).all()
    with pytest.raises(ValueError):
        acl.util.numpy_contiguous_to_ptr([1, 2, 3])


def test_the_rows_without_a_page_say_so():
    paged = {_full(m, n) for m, n, *_ in DOCUMENTED}
    for full, row in ROWS.items():
        assert (row[5] == pyacl.RULE) == (full not in paged), full


def test_ptr_to_numpy_takes_the_type_numbers_its_page_lists(acl):
    buf = np.zeros(8, dtype=np.uint8)
    ptr = acl.util.numpy_to_ptr(buf)
    for number, name in PTR_TO_NUMPY_TYPES.items():
        assert acl.util.ptr_to_numpy(ptr, (1,), number).dtype == np.dtype(name), number


def test_the_page_s_prose_counts_the_reference_rows():
    import pathlib
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "pyacl.md").read_text()
    assert f"of the {len(PAGES)} functions\nchecked against a page" in text
    assert f"{len(PAGES)} pages:" in text
