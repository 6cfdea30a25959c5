"""Device side of a program: image load, per-device validity, unload (spec/kernel.md §3).

* :func:`load_to_device` is ``Runtime::BinaryLoad``: the image (``LoadSize()`` bytes from the first
  ALLOC section's file offset; zeros past the end of the file and over NOBITS sections) is copied
  into simulated device memory. The allocation is ``devSize + 4096`` bytes (``devSize`` = size,
  + 1280 on SIMT chips) and the image goes to the base rounded up to 4 KiB (ARM ADRP); a function's
  address is that aligned base + its symbol offset. Symbols named by ``.ascend.meta``
  RUNTIME_IMPLICIT_INFO flags get an 8-byte device address patched in first
  (``RefreshSymbolAddress``): the printf FIFO symbols get the device's printf area.
* :func:`make_valid` is ``Program::CopySoAndNameToCurrentDevice``: for new-flow programs, the
  first get-function / get-function-by-entry / get-dev-address on a device loads the image there
  (unless lazy) and marks the program valid on that device; launches on a device where it is not
  valid fail with 107017 (``IsDeviceSoAndNameValid``).
* :func:`unload` frees the images on every device and invalidates the program and all of its
  function handles (107017 afterwards).

Per-device state is keyed by device id *and* the ``Device`` object, so a simulator reset (a new
``Device``) never sees a stale image.
"""
from __future__ import annotations

import numpy as np

from .. import errors as ERR
from ..device.memory import OutOfMemory
from ..runtime.runtime import RT
from . import printf as P
from .program import REG_NON_CPU, Program, runtime_features

INSTR_ALIGN = 4096          # INSTR_ALIGN_SIZE: extra bytes so the image can be 4 KiB aligned
SIMT_PADDING = 1280         # PREFETCH_INCREASE_SIZE on RT_FEATURE_DEVICE_SIMT chips
PAGE = 0xFFF


def _runtime_symbol_value(device, name: str) -> int:
    """The device address the runtime patches into a runtime-implicit symbol."""
    if name in ("g_sysPrintFifoSpace", "g_sysSimtPrintFifoSpace"):
        return P.buffer_address(device)
    return 0                 # FFTS / L2-cache-hint addresses: no such hardware here


def load_to_device(prog: Program, device) -> int:
    """Runtime::BinaryLoad on ``device`` (no-op when already loaded there); the ACL code."""
    if prog.loaded.get(device.id, (None,))[0] is device:
        return ERR.ACL_SUCCESS
    image = prog.image
    size = prog.load_size
    if image is None or size == 0:            # RT_ERROR_PROGRAM_SIZE / PROGRAM_NULL
        return ERR.ACL_ERROR_RT_INTERNAL_ERROR
    P.ensure_buffer(device)
    mem = device.state.mem
    dev_size = size + (SIMT_PADDING if runtime_features(device.profile).simt else 0)
    try:                                        # before any copy: crafted sizes stop here
        base = mem.malloc(dev_size + INSTR_ALIGN)
    except OutOfMemory:
        return ERR.ACL_ERROR_RT_MEMORY_ALLOCATION
    align = (base + PAGE) & ~PAGE
    dst = mem.view(align, size)
    start, data = image.image_offset, image.data
    n_file = max(0, min(size, len(data) - start)) if start < len(data) else 0
    if n_file:
        dst[:n_file] = np.frombuffer(data, np.uint8, n_file, start)
    if n_file < size:                           # past the file: zeros (no pages for big ones)
        mem.zero(align + n_file, size - n_file)
    for lo, hi in image.nobits:
        mem.zero(align + lo, hi - lo)
    for name, off in image.runtime_symbols.items():
        if off + 8 <= size:
            dst[off:off + 8] = np.frombuffer(
                int(_runtime_symbol_value(device, name)).to_bytes(8, "little"), np.uint8)
    prog.loaded[device.id] = (device, base, align)
    return ERR.ACL_SUCCESS


def make_valid(prog: Program, device) -> int:
    """CopySoAndNameToCurrentDevice for ``device``; the ACL code."""
    if not prog.new_flow or prog.valid.get(device.id) is device:
        return ERR.ACL_SUCCESS
    if not prog.lazy and prog.reg_type == REG_NON_CPU:
        code = load_to_device(prog, device)
        if code:
            return code
    prog.valid[device.id] = device
    return ERR.ACL_SUCCESS


def function_addresses(kernel, device) -> tuple[int, int, int]:
    """Kernel::GetFunctionDevAddr: (code, func1, func2); lazy programs load here."""
    prog = kernel.program
    if prog.lazy:
        code = load_to_device(prog, device)
        if code:
            return code, 0, 0
    base = prog.base_on(device)
    f1 = base + kernel.offset1
    f2 = base + kernel.offset2 if kernel.offset2 else 0
    return ERR.ACL_SUCCESS, f1, f2


def free_device(prog: Program, dev_id: int) -> None:
    entry = prog.loaded.pop(dev_id, None)
    prog.valid.pop(dev_id, None)
    if entry is None:
        return
    device, base, _ = entry
    if RT.devices.get(dev_id) is device:
        try:
            device.state.mem.free(base)
        except KeyError:
            pass


def unload(prog: Program) -> None:
    """BinaryUnLoad: images freed on every device, the program and its kernels invalidated."""
    for dev_id in list(prog.loaded) + list(prog.valid):
        free_device(prog, dev_id)
    for k in prog.kernels.values():
        if k.handle:
            RT.handles.remove(k.handle)
            forget_function(k)
    RT.handles.remove(prog.handle)
    prog.unloaded = True


# ---- function handles
LAST_HANDLE_OF_KID: dict[int, int] = {}
"""kernel-table id -> the function handle most recently exported for it (tasks carry only the
body id: per-task get-params and exception callbacks map it back through this)."""


def function_handle(kernel) -> int:
    """The function handle of ``kernel`` (one per Kernel, like the address of the C++ object)."""
    if not kernel.handle or RT.handles.get("function", kernel.handle)[0] is not kernel:
        RT.handles.add("function", kernel)
    LAST_HANDLE_OF_KID[kernel.kid] = kernel.handle
    return kernel.handle


def forget_function(kernel) -> None:
    if LAST_HANDLE_OF_KID.get(kernel.kid) == kernel.handle:
        del LAST_HANDLE_OF_KID[kernel.kid]

