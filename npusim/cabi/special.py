"""Hand-written marshallers of C functions the generic rule of ``build.plan`` cannot map (C
structs, in/out pointers, arrays the caller owns). Each handler returns (cdef lines, the C
wrapper, the Python extern) for :func:`build.generate`. The C side reads the structs by field
name (the compiler knows their layout, whatever headers the library is built against) and passes
integers; the Python side builds the facade's dict / tuple shapes and calls the facade.

The per-thread output array (``cabi_out_``, ``TL.q`` in Python), the NULL-output answer
(``cabi_py_null_``) and ``NULLS`` are :mod:`build`'s.
"""
from __future__ import annotations

# facade parameters of kind "any" that C passes as a plain pointer (user data)
ANY_AS_INT = {"userData", "args", "userdata", "hostData", "arg", "fnData"}

C_SUPPORT = ""

_OUT = "    try:\n        o = TL.q\n    except AttributeError:\n        o = OUTBUF()\n"


def _ext(e, idx, args: str, body: str, nulls=()) -> tuple[list, str, str]:
    """The extern's cdef, its Python definition (``body`` under ``def``), NULLS entries."""
    name = e.func.name
    cdef = [f'extern "Python" int64_t cabi_py_{name}({args});']
    n = len([a for a in args.split(",") if a.strip() and a.strip() != "void"])
    params = ", ".join(f"a{i}" for i in range(n))
    py = ""
    if nulls:
        py += f"NULLS[{idx}] = {[(name, x) for x in nulls]!r}\n"
    py += (f"@ffi.def_extern(name='cabi_py_{name}', onerror=ONERROR)\n"
           f"def _x{idx}({params}):\n{body}")
    return cdef, py


def exchange_mode(e, idx):
    """aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode): the mode in, the old one
    written back (the facade returns it)."""
    c = f"""aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{{
    if (mode == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[1] = 0;
    aclError r_ = (aclError)cabi_py_aclmdlRICaptureThreadExchangeMode((int64_t)*mode);
    if (o_[1] & 1) *mode = (aclmdlRICaptureMode)o_[0];
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "int64_t", f"""    r = F{idx}(a0)
{_OUT}    v = r[0]
    o[1] = 0
    if v is not None:
        o[0] = v
        o[1] = 1
    return r[-1]
""", nulls=("mode",))
    return cdef, c, py


def error_verbose(e, idx):
    """aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo): the facade's dict
    {"errorType", "tryRepair", "hasDetail"} into the struct (the rest zeroed)."""
    c = f"""aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)
{{
    if (errorInfo == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[3] = 0;
    aclError r_ = (aclError)cabi_py_aclrtGetErrorVerbose((int64_t)deviceId);
    if (o_[3] & 1) {{
        memset(errorInfo, 0, sizeof(*errorInfo));
        errorInfo->errorType = (aclrtErrorType)o_[0];
        errorInfo->tryRepair = (uint8_t)o_[1];
        errorInfo->hasDetail = (uint8_t)o_[2];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "int64_t", f"""    r = F{idx}(a0)
{_OUT}    v = r[0]
    o[3] = 0
    if isinstance(v, dict):
        o[0] = int(v.get("errorType", 0))
        o[1] = int(v.get("tryRepair", 0))
        o[2] = int(v.get("hasDetail", 0))
        o[3] = 1
    return r[-1]
""", nulls=("errorInfo",))
    return cdef, c, py


def utilization(e, idx):
    """aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo): the
    acl layer's checks (NULL info, a non-NULL reserved ``utilizationExtend``: 100000), then the
    facade's dict into the four percentages (``utilizationExtend`` left as it was: NULL)."""
    c = f"""aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo)
{{
    if (utilizationInfo == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[4] = 0;
    aclError r_ = (aclError)cabi_py_aclrtGetDeviceUtilizationRate(
        (int64_t)deviceId, utilizationInfo->utilizationExtend != NULL);
    if (o_[4] & 1) {{
        utilizationInfo->cubeUtilization = (int32_t)o_[0];
        utilizationInfo->vectorUtilization = (int32_t)o_[1];
        utilizationInfo->aicpuUtilization = (int32_t)o_[2];
        utilizationInfo->memoryUtilization = (int32_t)o_[3];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "int64_t, int64_t", f"""    if a1:
        _set_recent_error("aclrtGetDeviceUtilizationRate returned 100000 "
                          "ACL_ERROR_INVALID_PARAM: utilizationInfo->utilizationExtend is "
                          "reserved and must be NULL")
        return 100000
    r = F{idx}(a0)
{_OUT}    v = r[0]
    o[4] = 0
    if isinstance(v, dict):
        o[0] = int(v.get("cubeUtilization", -1))
        o[1] = int(v.get("vectorUtilization", -1))
        o[2] = int(v.get("aicpuUtilization", -1))
        o[3] = int(v.get("memoryUtilization", -1))
        o[4] = 1
    return r[-1]
""", nulls=("utilizationInfo",))
    return cdef, c, py


def version_str(e, idx):
    """aclsysGetVersionStr(char *pkgName, char *versionStr): the acl layer's NULL checks in its
    order (``versionStr``, then ``pkgName``: 100000), then the facade's string into the caller's
    128-byte buffer (``ACL_PKG_VERSION_MAX_SIZE``; the facade refuses a longer one); on a
    failure the buffer is left as it was."""
    c = f"""aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{{
    if (versionStr == NULL) return (aclError)cabi_py_null_({idx}, 0);
    if (pkgName == NULL) return (aclError)cabi_py_null_({idx}, 1);
    return (aclError)cabi_py_aclsysGetVersionStr((uintptr_t)pkgName, (uintptr_t)versionStr);
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t, uintptr_t", f"""    r = F{idx}(STR(a0))
    if r[0] is not None:
        WRITE_STRING(a1, r[0], 128)
    return r[-1]
""", nulls=("versionStr", "pkgName"))
    return cdef, c, py


def cann_attribute_list(e, idx):
    """aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num): the NULL checks in
    the acl layer's order, then the available attributes into a static array of the library
    (the runtime hands out its own static array too) and its address and count out."""
    c = f"""aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)
{{
    static aclCannAttr attrs_[8];
    if (cannAttrList == NULL) return (aclError)cabi_py_null_({idx}, 0);
    if (num == NULL) return (aclError)cabi_py_null_({idx}, 1);
    int64_t *o_ = cabi_out_;
    o_[9] = 0;
    aclError r_ = (aclError)cabi_py_aclGetCannAttributeList();
    if (o_[9] & 1) {{
        size_t n_ = (size_t)o_[8];
        for (size_t i_ = 0; i_ < n_ && i_ < 8; i_++) attrs_[i_] = (aclCannAttr)o_[i_];
        *cannAttrList = attrs_;
        *num = n_;
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "void", f"""    r = F{idx}()
{_OUT}    o[9] = 0
    if r[0] is not None:
        for i, a in enumerate(r[0][:8]):
            o[i] = int(a)
        o[8] = min(int(r[1]), 8)
        o[9] = 1
    return r[-1]
""", nulls=("cannAttrList", "num"))
    return cdef, c, py


def _allocator_func(func_type: str):
    def make(e, idx):
        """``aclError f(aclrtAllocatorDesc allocatorDesc, <func_type> func)``: the caller's
        function pointer kept as the address it is (npusim never calls it; GetByStream hands it
        back), not wrapped as a Python callback."""
        name = e.func.name
        c = f"""aclError {name}(aclrtAllocatorDesc allocatorDesc, {func_type} func)
{{
    return (aclError)cabi_py_{name}((uintptr_t)allocatorDesc, (uintptr_t)func);
}}
"""
        cdef, py = _ext(e, idx, "uintptr_t, uintptr_t", f"""    return F{idx}(OBJ(a0), a1 or None)
""")
        return cdef, c, py
    return make


def create_label_list(e, idx):
    """aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList): the
    ``num`` label handles read from the caller's array (capped at the runtime's 65535: a larger
    ``num`` is refused before the array is read), the list's handle out."""
    c = f"""aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList)
{{
    if (labelList == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[1] = 0;
    aclError r_ = (aclError)cabi_py_aclrtCreateLabelList((uintptr_t)labels, (uint64_t)num);
    if (o_[1] & 1) *labelList = (aclrtLabelList)(uintptr_t)o_[0];
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t, uint64_t", f"""    n = int(a1)
    r = F{idx}(U64S(a0, n if 0 < n <= 65535 else 0), n)
{_OUT}    o[1] = 0
    if r[0] is not None:
        o[0] = PTR(r[0])
        o[1] = 1
    return r[-1]
""", nulls=("labelList",))
    return cdef, c, py


def allocator_get_by_stream(e, idx):
    """aclrtAllocatorGetByStream(stream, *allocatorDesc, *allocator, *allocFunc, *freeFunc,
    *allocAdviseFunc, *getAddrFromBlockFunc): the desc output must not be NULL (checked first,
    100000); the other five are optional, a NULL one skipped (``allocator.cpp``). The facade's
    six values are pointers the caller gave (or npusim's desc handle)."""
    c = f"""aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
    aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc, aclrtAllocatorFreeFunc *freeFunc,
    aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
    aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{{
    if (allocatorDesc == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[6] = 0;
    aclError r_ = (aclError)cabi_py_aclrtAllocatorGetByStream((uintptr_t)stream);
    if (o_[6] & 1) {{
        *allocatorDesc = (aclrtAllocatorDesc)(uintptr_t)o_[0];
        if (allocator) *allocator = (aclrtAllocator)(uintptr_t)o_[1];
        if (allocFunc) *allocFunc = (aclrtAllocatorAllocFunc)(uintptr_t)o_[2];
        if (freeFunc) *freeFunc = (aclrtAllocatorFreeFunc)(uintptr_t)o_[3];
        if (allocAdviseFunc) *allocAdviseFunc = (aclrtAllocatorAllocAdviseFunc)(uintptr_t)o_[4];
        if (getAddrFromBlockFunc)
            *getAddrFromBlockFunc = (aclrtAllocatorGetAddrFromBlockFunc)(uintptr_t)o_[5];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t", f"""    r = F{idx}(OBJ(a0))
{_OUT}    o[6] = 0
    if r[-1] == 0:
        for i in range(6):
            o[i] = PTR(r[i])
        o[6] = 1
    return r[-1]
""", nulls=("allocatorDesc",))
    return cdef, c, py


# aclrtPhysicalMemProp's fields as the C wrapper passes them (present, then the fields)
_PROP_C = ("prop != NULL, prop ? (int64_t)prop->handleType : 0, "
           "prop ? (int64_t)prop->allocationType : 0, prop ? (int64_t)prop->memAttr : 0, "
           "prop ? (int64_t)prop->location.type : 0, prop ? (int64_t)prop->location.id : 0, "
           "prop ? (uint64_t)prop->reserve : 0")
_PROP_ARGS = "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, uint64_t"
_PROP_PY = ("    prop = PROP(a{0}, a{1}, a{2}, a{3}, a{4}, a{5}, a{6})\n")


def malloc_physical(e, idx):
    """aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp
    *prop, uint64_t flags): the prop as the facade's dict."""
    c = f"""aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                             const aclrtPhysicalMemProp *prop, uint64_t flags)
{{
    if (handle == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[1] = 0;
    aclError r_ = (aclError)cabi_py_aclrtMallocPhysical((uint64_t)size, {_PROP_C},
                                                        (uint64_t)flags);
    if (o_[1] & 1) *handle = (aclrtDrvMemHandle)(uintptr_t)o_[0];
    return r_;
}}
"""
    cdef, py = _ext(e, idx, f"uint64_t, {_PROP_ARGS}, uint64_t",
                    _PROP_PY.format(1, 2, 3, 4, 5, 6, 7) + f"""    r = F{idx}(a0, prop, a8)
{_OUT}    v = r[0]
    o[1] = 0
    if v is not None:
        o[0] = I64(v)
        o[1] = 1
    return r[-1]
""", nulls=("handle",))
    return cdef, c, py


def granularity(e, idx):
    """aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, option, size_t *g)."""
    c = f"""aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option,
                                          size_t *granularity)
{{
    if (granularity == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[1] = 0;
    aclError r_ = (aclError)cabi_py_aclrtMemGetAllocationGranularity({_PROP_C},
                                                                    (int64_t)option);
    if (o_[1] & 1) *granularity = (size_t)o_[0];
    return r_;
}}
"""
    cdef, py = _ext(e, idx, f"{_PROP_ARGS}, int64_t",
                    _PROP_PY.format(0, 1, 2, 3, 4, 5, 6) + f"""    r = F{idx}(prop, a7)
{_OUT}    v = r[0]
    o[1] = 0
    if v is not None:
        o[0] = I64(v)
        o[1] = 1
    return r[-1]
""", nulls=("granularity",))
    return cdef, c, py


def set_access(e, idx):
    """aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count):
    the descriptors read from C memory with the compiler's layout (size and offsets passed)."""
    c = """aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc,
                           size_t count)
{
    return (aclError)cabi_py_aclrtMemSetAccess(
        (uintptr_t)virPtr, (uint64_t)size, (uintptr_t)desc, (uint64_t)count,
        (uint64_t)sizeof(aclrtMemAccessDesc), (uint64_t)offsetof(aclrtMemAccessDesc, flags),
        (uint64_t)offsetof(aclrtMemAccessDesc, location.type),
        (uint64_t)offsetof(aclrtMemAccessDesc, location.id));
}
"""
    cdef, py = _ext(e, idx, "uintptr_t, uint64_t, uintptr_t, uint64_t, uint64_t, uint64_t, "
                            "uint64_t, uint64_t", f"""    descs = ACCESS(a2, a3, a4, a5, a6, a7)
    return F{idx}(a0, a1, descs, a3)
""")
    return cdef, c, py


def add_cond_task(e, idx):
    """aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags):
    the struct's fields in; the sub-model handles the facade returns written into the caller's
    ``modelRIArray`` (``size`` of them)."""
    c = """aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream,
                             uint32_t flags)
{
    return (aclError)cabi_py_aclmdlRIAddCondTask(
        (uintptr_t)params.handle, (int64_t)params.type, (uint64_t)params.size,
        (uintptr_t)params.modelRIArray, (uintptr_t)stream, (uint64_t)flags);
}
"""
    cdef, py = _ext(e, idx, "uintptr_t, int64_t, uint64_t, uintptr_t, uintptr_t, uint64_t",
                    f"""    r = F{idx}(a0, a1, a2, a4, a5)
    WRITE_HANDLES(a3, r[0], a2)
    return r[-1]
""")
    return cdef, c, py


def _string_out(handle_type: str, handle: str):
    def make(e, idx):
        """``aclError f(<handle>, uint32_t maxLen, char *name)``: the facade's str written
        into the caller's buffer with its NUL (the facade checks maxLen against the length)."""
        name = e.func.name
        c = f"""aclError {name}({handle_type} {handle}, uint32_t maxLen, char *name)
{{
    if (name == NULL) return (aclError)cabi_py_null_({idx}, 0);
    return (aclError)cabi_py_{name}((uintptr_t){handle}, (uint64_t)maxLen, (uintptr_t)name);
}}
"""
        cdef, py = _ext(e, idx, "uintptr_t, uint64_t, uintptr_t", f"""    r = F{idx}(a0, a1)
    if r[0] is not None:
        WRITE_STRING(a2, r[0], a1)
    return r[-1]
""", nulls=("name",))
        return cdef, c, py
    return make


def get_stream_attribute(e, idx):
    """aclrtGetStreamAttribute(stream, attr, aclrtStreamAttrValue *value): the member the
    attribute selects written (failureMode 64 bits, the others 32)."""
    c = f"""aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue *value)
{{
    if (value == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[1] = 0;
    aclError r_ = (aclError)cabi_py_aclrtGetStreamAttribute((uintptr_t)stream,
                                                            (int64_t)stmAttrType);
    if (o_[1] & 1) {{
        if (stmAttrType == ACL_STREAM_ATTR_FAILURE_MODE) value->failureMode = (uint64_t)o_[0];
        else value->reserve[0] = (uint32_t)o_[0];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t, int64_t", f"""    r = F{idx}(a0, a1)
{_OUT}    v = r[0]
    o[1] = 0
    if v is not None:
        o[0] = I64(v)
        o[1] = 1
    return r[-1]
""", nulls=("value",))
    return cdef, c, py


def set_stream_attribute(e, idx):
    """aclrtSetStreamAttribute(stream, attr, aclrtStreamAttrValue *value): the member the
    attribute selects read (NULL: None, the facade's 107000)."""
    c = """aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                 aclrtStreamAttrValue *value)
{
    uint64_t v = 0;
    if (value != NULL)
        v = stmAttrType == ACL_STREAM_ATTR_FAILURE_MODE ? value->failureMode
                                                        : (uint64_t)value->reserve[0];
    return (aclError)cabi_py_aclrtSetStreamAttribute((uintptr_t)stream, (int64_t)stmAttrType,
                                                     (int64_t)(value != NULL), v);
}
"""
    cdef, py = _ext(e, idx, "uintptr_t, int64_t, int64_t, uint64_t",
                    f"""    return F{idx}(a0, a1, a3 if a2 else None)
""")
    return cdef, c, py


def pointer_attributes(e, idx):
    """aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes): the dict
    {"location": {"type", "id"}, "pageSize"} into the struct (the rest zeroed)."""
    c = f"""aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{{
    if (attributes == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[3] = 0;
    aclError r_ = (aclError)cabi_py_aclrtPointerGetAttributes((uintptr_t)ptr);
    if (o_[3] & 1) {{
        memset(attributes, 0, sizeof(*attributes));
        attributes->location.type = (aclrtMemLocationType)o_[0];
        attributes->location.id = (uint32_t)o_[1];
        attributes->pageSize = (uint32_t)o_[2];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t", f"""    r = F{idx}(a0)
{_OUT}    v = r[0]
    o[3] = 0
    if isinstance(v, dict):
        loc = v.get("location") or {{}}
        o[0] = int(loc.get("type", 0))
        o[1] = int(loc.get("id", 0))
        o[2] = int(v.get("pageSize", 0))
        o[3] = 1
    return r[-1]
""", nulls=("attributes",))
    return cdef, c, py


def launch_with_host_args(e, idx):
    """aclrtLaunchKernelWithHostArgs(func, numBlocks, stream, cfg, hostArgs, argsSize,
    placeHolderArray, placeHolderNum): the host arguments stay the caller's real buffer (the
    runtime patches the placeholders into it, as the real one does); the placeholders and the
    config are read from C memory."""
    c = """aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                       aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                       void *hostArgs, size_t argsSize,
                                       aclrtPlaceHolderInfo *placeHolderArray,
                                       size_t placeHolderNum)
{
    return (aclError)cabi_py_aclrtLaunchKernelWithHostArgs(
        (uintptr_t)funcHandle, (uint64_t)numBlocks, (uintptr_t)stream, (uintptr_t)cfg,
        (uintptr_t)hostArgs, (uint64_t)argsSize, (uintptr_t)placeHolderArray,
        (uint64_t)placeHolderNum);
}
"""
    cdef, py = _ext(e, idx, "uintptr_t, uint64_t, uintptr_t, uintptr_t, uintptr_t, uint64_t, "
                            "uintptr_t, uint64_t", f"""    ph = PAIRS(a6, a7)
    return F{idx}(a0, a1, a2, ATTRS(a3, "launch"), a4, a5, ph, a7)
""")
    return cdef, c, py


def _memcpy_batch(fail: bool, stream: bool):
    def make(e, idx):
        """aclrtMemcpyBatch*: the arrays read from C memory (numBatches / numAttrs entries,
        NULL arrays as None), the attributes with the compiler's layout; ``failIndex`` written
        back where the function has it."""
        name = e.func.name
        params = ("void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, "
                  "aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs" +
                  (", size_t *failIndex" if fail else "") + (", aclrtStream stream" if stream
                                                             else ""))
        pre = ""
        post = ""
        if fail:
            pre = (f"    if (failIndex == NULL) return (aclError)cabi_py_null_({idx}, 0);\n"
                   "    int64_t *o_ = cabi_out_;\n    o_[1] = 0;\n")
            post = "    if (o_[1] & 1) *failIndex = (size_t)o_[0];\n"
        c = f"""aclError {name}({params})
{{
{pre}    aclError r_ = (aclError)cabi_py_{name}(
        (uintptr_t)dsts, (uintptr_t)destMaxs, (uintptr_t)srcs, (uintptr_t)sizes,
        (uint64_t)numBatches, (uintptr_t)attrs, (uintptr_t)attrsIndexes, (uint64_t)numAttrs,
        (uintptr_t){"stream" if stream else "0"}, (uint64_t)sizeof(aclrtMemcpyBatchAttr),
        (uint64_t)offsetof(aclrtMemcpyBatchAttr, dstLoc),
        (uint64_t)offsetof(aclrtMemcpyBatchAttr, srcLoc),
        (uint64_t)offsetof(aclrtMemcpyBatchAttr, rsv),
        (uint64_t)sizeof(((aclrtMemcpyBatchAttr *)0)->rsv),
        (uint64_t)offsetof(aclrtMemLocation, id), (uint64_t)offsetof(aclrtMemLocation, type));
{post}    return r_;
}}
"""
        call = f"F{idx}(U64S(a0, a4), U64S(a1, a4), U64S(a2, a4), U64S(a3, a4), a4, " \
               f"BATCH_ATTRS(a5, a7, a9, a10, a11, a12, a13, a14, a15), U64S(a6, a7), a7" + \
               (", a8)" if stream else ")")
        if fail:
            body = f"""    r = {call}
{_OUT}    v = r[0]
    o[1] = 0
    if v is not None:
        o[0] = I64(v)
        o[1] = 1
    return r[-1]
"""
        else:
            body = f"    return {call}\n"
        cdef, py = _ext(e, idx, "uintptr_t, uintptr_t, uintptr_t, uintptr_t, uint64_t, "
                                "uintptr_t, uintptr_t, uint64_t, uintptr_t, uint64_t, uint64_t, "
                                "uint64_t, uint64_t, uint64_t, uint64_t, uint64_t", body,
                        nulls=("failIndex",) if fail else ())
        return cdef, c, py
    return make



# aclmdlRITaskParams: the fields by task type (acl_base.h aclmdlRITaskParams' union); C passes /
# receives seven integers whose meaning the type selects
_EVENT_FLAG = {"ACL_MODEL_RI_TASK_EVENT_RECORD": ("eventRecordTaskParams", "recordFlag",
                                                  "record_flag"),
               "ACL_MODEL_RI_TASK_EVENT_WAIT": ("eventWaitTaskParams", "waitFlag", "wait_flag"),
               "ACL_MODEL_RI_TASK_EVENT_RESET": ("eventResetTaskParams", "resetFlag",
                                                 "reset_flag")}


def task_set_params(e, idx):
    """aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params): the struct as the
    facade's dict (the union read as the type says; NULL params: None)."""
    ev = "".join(f"""    case {ty}:
        f[0] = (uintptr_t)params->{m}.event; f[1] = params->{m}.eventFlag;
        f[2] = params->{m}.{flag};
        break;
""" for ty, (m, flag, _) in _EVENT_FLAG.items())
    c = f"""aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{{
    uint64_t f[6] = {{0, 0, 0, 0, 0, 0}};
    int64_t type = 0;
    uint64_t grp = 0, op = 0, opsize = 0;
    if (params != NULL) {{
        type = (int64_t)params->type;
        grp = (uintptr_t)params->taskGrp;
        op = (uintptr_t)params->opInfoPtr;
        opsize = (uint64_t)params->opInfoSize;
        switch (params->type) {{
        case ACL_MODEL_RI_TASK_KERNEL:
            f[0] = (uintptr_t)params->kernelTaskParams.funcHandle;
            f[1] = (uintptr_t)params->kernelTaskParams.cfg;
            f[2] = (uintptr_t)params->kernelTaskParams.args;
            f[3] = params->kernelTaskParams.isHostArgs;
            f[4] = params->kernelTaskParams.argsSize;
            f[5] = params->kernelTaskParams.numBlocks;
            break;
        case ACL_MODEL_RI_TASK_VALUE_WRITE:
            f[0] = (uintptr_t)params->valueWriteTaskParams.devAddr;
            f[1] = params->valueWriteTaskParams.value;
            break;
        case ACL_MODEL_RI_TASK_VALUE_WAIT:
            f[0] = (uintptr_t)params->valueWaitTaskParams.devAddr;
            f[1] = params->valueWaitTaskParams.value;
            f[2] = params->valueWaitTaskParams.flag;
            break;
{ev}        default:
            break;
        }}
    }}
    return (aclError)cabi_py_aclmdlRITaskSetParams((uintptr_t)task, (int64_t)(params != NULL),
                                                   type, grp, op, opsize, f[0], f[1], f[2],
                                                   f[3], f[4], f[5]);
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t, int64_t, int64_t, uint64_t, uint64_t, uint64_t, "
                            "uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t",
                    f"""    return F{idx}(a0, TASK_PARAMS(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10,
                                  a11))
""")
    return cdef, c, py


def task_get_params(e, idx):
    """aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params): the facade's dict
    into the struct (zeroed first; the union member the type selects)."""
    ev = "".join(f"""        case {ty}:
            params->{m}.event = (aclrtEvent)(uintptr_t)o_[1];
            params->{m}.eventFlag = (uint32_t)o_[2];
            params->{m}.{flag} = (uint32_t)o_[3];
            break;
""" for ty, (m, flag, _) in _EVENT_FLAG.items())
    c = f"""aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{{
    if (params == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[7] = 0;
    aclError r_ = (aclError)cabi_py_aclmdlRITaskGetParams((uintptr_t)task);
    if (o_[7] & 1) {{
        memset(params, 0, sizeof(*params));
        params->type = (aclmdlRITaskType)o_[0];
        switch (params->type) {{
        case ACL_MODEL_RI_TASK_KERNEL:
            params->kernelTaskParams.funcHandle = (aclrtFuncHandle)(uintptr_t)o_[1];
            params->kernelTaskParams.args = (void *)(uintptr_t)o_[2];
            params->kernelTaskParams.argsSize = (size_t)o_[3];
            params->kernelTaskParams.numBlocks = (uint32_t)o_[4];
            params->kernelTaskParams.isHostArgs = (uint32_t)o_[5];
            break;
        case ACL_MODEL_RI_TASK_VALUE_WRITE:
            params->valueWriteTaskParams.devAddr = (void *)(uintptr_t)o_[1];
            params->valueWriteTaskParams.value = (uint64_t)o_[2];
            break;
        case ACL_MODEL_RI_TASK_VALUE_WAIT:
            params->valueWaitTaskParams.devAddr = (void *)(uintptr_t)o_[1];
            params->valueWaitTaskParams.value = (uint64_t)o_[2];
            params->valueWaitTaskParams.flag = (uint32_t)o_[3];
            break;
{ev}        default:
            break;
        }}
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t", f"""    r = F{idx}(a0)
{_OUT}    o[7] = 0
    if isinstance(r[0], dict):
        TASK_PARAMS_OUT(r[0], o)
        o[7] = 1
    return r[-1]
""", nulls=("params",))
    return cdef, c, py


def _array_out(handle_type, handle, item_type, arr, num, facade_takes_count: bool):
    def make(e, idx):
        """``aclError f(<handle>, <T> *arr, uint32_t *num)``: the facade's list written into the
        caller's array (``*num`` entries; the rest NULL), ``*num`` the count written; a NULL
        array asks for the count (``Stream::StreamGetTasks`` / ``Model::ModelGetStreams``); a
        NULL count pointer 107000 (the rt layer's ``NULL_PTR_RETURN``)."""
        name = e.func.name
        c = f"""aclError {name}({handle_type} {handle}, {item_type} *{arr}, uint32_t *{num})
{{
    return (aclError)cabi_py_{name}((uintptr_t){handle}, (uintptr_t){arr}, (uintptr_t){num});
}}
"""
        call = (f"F{idx}(a0, None if not a1 or not a2 else CAST('uint32_t *', a2)[0])"
                if facade_takes_count else f"F{idx}(a0)")
        cdef, py = _ext(e, idx, "uintptr_t, uintptr_t, uintptr_t", f"""    r = {call}
    return ARRAY_OUT({name!r}, {num!r}, r[0], r[-1], a1, a2)
""")
        return cdef, c, py
    return make


def _one_out(sig: str, args: str, exprs: str, call: str, out: str,
             ctype: str):
    """A wrapper with one scalar output ``out`` (of C type ``ctype``) and a custom call."""
    def make(e, idx):
        name = e.func.name
        c = f"""aclError {name}({sig})
{{
    if ({out} == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[1] = 0;
    aclError r_ = (aclError)cabi_py_{name}({exprs});
    if (o_[1] & 1) *{out} = ({ctype})(uintptr_t)o_[0];
    return r_;
}}
"""
        cdef, py = _ext(e, idx, args, f"""    r = {call.format(idx=idx)}
{_OUT}    v = r[0]
    o[1] = 0
    if v is not None:
        o[0] = I64(PTR(v))
        o[1] = 1
    return r[-1]
""", nulls=(out,))
        return cdef, c, py
    return make


def notify_batch_reset(e, idx):
    """aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num): the array read (num entries)."""
    c = """aclError aclrtNotifyBatchReset(aclrtNotify *notifies, size_t num)
{
    return (aclError)cabi_py_aclrtNotifyBatchReset((uintptr_t)notifies, (uint64_t)num);
}
"""
    cdef, py = _ext(e, idx, "uintptr_t, uint64_t", f"""    return F{idx}(U64S(a0, a1), a1)
""")
    return cdef, c, py


def mem_get_access(e, idx):
    """aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)."""
    c = f"""aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)
{{
    if (location == NULL) return (aclError)cabi_py_null_({idx}, 0);
    if (flag == NULL) return (aclError)cabi_py_null_({idx}, 1);
    int64_t *o_ = cabi_out_;
    o_[3] = 0;
    aclError r_ = (aclError)cabi_py_aclrtMemGetAccess((uintptr_t)virPtr);
    if (o_[3] & 1) {{
        location->type = (aclrtMemLocationType)o_[0];
        location->id = (uint32_t)o_[1];
        *flag = (uint64_t)o_[2];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t", f"""    r = F{idx}(a0)
{_OUT}    o[3] = 0
    if isinstance(r[0], dict) and r[1] is not None:
        o[0] = int(r[0].get("type", 0))
        o[1] = int(r[0].get("id", 0))
        o[2] = I64(r[1])
        o[3] = 1
    return r[-1]
""", nulls=("location", "flag"))
    return cdef, c, py


def prop_from_handle(e, idx):
    """aclrtMemGetAllocationPropertiesFromHandle(handle, aclrtPhysicalMemProp *prop)."""
    c = f"""aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle,
                                                   aclrtPhysicalMemProp *prop)
{{
    if (prop == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[6] = 0;
    aclError r_ = (aclError)cabi_py_aclrtMemGetAllocationPropertiesFromHandle((uintptr_t)handle);
    if (o_[6] & 1) {{
        memset(prop, 0, sizeof(*prop));
        prop->handleType = (aclrtMemHandleType)o_[0];
        prop->allocationType = (aclrtMemAllocationType)o_[1];
        prop->memAttr = (aclrtMemAttr)o_[2];
        prop->location.type = (aclrtMemLocationType)o_[3];
        prop->location.id = (uint32_t)o_[4];
        prop->reserve = (uint64_t)o_[5];
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t", f"""    r = F{idx}(a0)
{_OUT}    o[6] = 0
    v = r[0]
    if isinstance(v, dict):
        loc = v.get("location") or {{}}
        for i, x in enumerate((v.get("handleType"), v.get("allocationType"), v.get("memAttr"),
                               loc.get("type"), loc.get("id"), v.get("reserve"))):
            o[i] = I64(x or 0)
        o[6] = 1
    return r[-1]
""", nulls=("prop",))
    return cdef, c, py


def kernel_task_attribute(e, idx):
    """aclmdlRIKernelTaskGetAttribute(task, attrId, aclrtLaunchKernelAttrValue *attrValue): the
    value written at the width of the member the id selects (runtime_side.LAUNCH_ATTR_WIDTH)."""
    c = f"""aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task,
                                        aclrtLaunchKernelAttrId attrId,
                                        aclrtLaunchKernelAttrValue *attrValue)
{{
    if (attrValue == NULL) return (aclError)cabi_py_null_({idx}, 0);
    int64_t *o_ = cabi_out_;
    o_[2] = 0;
    aclError r_ = (aclError)cabi_py_aclmdlRIKernelTaskGetAttribute((uintptr_t)task,
                                                                   (int64_t)attrId);
    if (o_[2] & 1) {{
        size_t w = (size_t)o_[1];
        uint64_t v = (uint64_t)o_[0];
        memcpy(attrValue, &v, w <= sizeof(*attrValue) && w <= 8 ? w : 4);
    }}
    return r_;
}}
"""
    cdef, py = _ext(e, idx, "uintptr_t, int64_t", f"""    r = F{idx}(a0, a1)
{_OUT}    o[2] = 0
    v = r[0]
    if v is not None:
        o[0] = I64(ATTR_WORD(v))
        o[1] = ATTR_WIDTH(a1)
        o[2] = 1
    return r[-1]
""", nulls=("attrValue",))
    return cdef, c, py


def random_num(e, idx):
    """aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo, aclrtStream stream,
    void *reserve): the struct's bytes as they are (``sizeof`` of the headers built against; the
    facade takes the 104-byte form and refuses another size), copied at the call; NULL: None
    (100000)."""
    c = """aclError aclrtRandomNumAsync(const aclrtRandomNumTaskInfo *taskInfo,
                             const aclrtStream stream, void *reserve)
{
    return (aclError)cabi_py_aclrtRandomNumAsync((uintptr_t)taskInfo,
                                                 (uint64_t)sizeof(*taskInfo),
                                                 (uintptr_t)stream, (uintptr_t)reserve);
}
"""
    cdef, py = _ext(e, idx, "uintptr_t, uint64_t, uintptr_t, uintptr_t",
                    f"    return F{idx}(BYTES(a0, a1), a2, a3)\n")
    return cdef, c, py


HANDLERS = {"aclmdlRICaptureThreadExchangeMode": exchange_mode,
            "aclrtBinaryLoadFromData": _one_out(
                "const void *data, size_t length, const aclrtBinaryLoadOptions *options, "
                "aclrtBinHandle *binHandle", "uintptr_t, uint64_t, uintptr_t",
                "(uintptr_t)data, (uint64_t)length, (uintptr_t)options",
                "F{idx}(BYTES(a0, a1), ATTRS(a2, 'options'), a1)", "binHandle",
                "aclrtBinHandle"),
            "aclrtCheckMemType": _one_out(
                "void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult, "
                "uint32_t reserve", "uintptr_t, uint64_t, uint64_t, uint64_t",
                "(uintptr_t)addrList, (uint64_t)size, (uint64_t)memType, (uint64_t)reserve",
                "F{idx}(U64S(a0, a1), a1, a2, a3)", "checkResult", "uint32_t"),
            "aclrtNotifyBatchReset": notify_batch_reset,
            "aclrtMemGetAccess": mem_get_access,
            "aclrtMemGetAllocationPropertiesFromHandle": prop_from_handle,
            "aclmdlRIKernelTaskGetAttribute": kernel_task_attribute,
            "aclmdlRIGetTasksByStream": _array_out("aclrtStream", "stream", "aclmdlRITask",
                                                   "tasks", "numTasks", False),
            "aclmdlRIGetStreams": _array_out("aclmdlRI", "modelRI", "aclrtStream", "streams",
                                             "numStreams", True),
            "aclmdlRITaskSetParams": task_set_params,
            "aclmdlRITaskGetParams": task_get_params,
            "aclrtMemcpyBatch": _memcpy_batch(True, False),
            "aclrtMemcpyBatchAsync": _memcpy_batch(True, True),
            "aclrtMemcpyBatchV2": _memcpy_batch(False, False),
            "aclrtMemcpyBatchAsyncV2": _memcpy_batch(False, True),
            "aclrtGetFunctionName": _string_out("aclrtFuncHandle", "funcHandle"),
            "aclmdlRIGetName": _string_out("aclmdlRI", "modelRI"),
            "aclrtGetStreamAttribute": get_stream_attribute,
            "aclrtSetStreamAttribute": set_stream_attribute,
            "aclrtPointerGetAttributes": pointer_attributes,
            "aclrtLaunchKernelWithHostArgs": launch_with_host_args,
            "aclrtGetErrorVerbose": error_verbose,
            "aclrtGetDeviceUtilizationRate": utilization,
            "aclsysGetVersionStr": version_str,
            "aclGetCannAttributeList": cann_attribute_list,
            "aclrtAllocatorGetByStream": allocator_get_by_stream,
            "aclrtCreateLabelList": create_label_list,
            **{f"aclrtAllocatorSet{what}FuncToDesc": _allocator_func(f"aclrtAllocator{what}Func")
               for what in ("Alloc", "Free", "AllocAdvise", "GetAddrFromBlock")},
            "aclrtMallocPhysical": malloc_physical,
            "aclrtMemGetAllocationGranularity": granularity,
            "aclrtMemSetAccess": set_access,
            "aclmdlRIAddCondTask": add_cond_task,
            "aclrtRandomNumAsync": random_num}
