/* npusim cabi test: kernel argument handles (aclrtKernelArgsInit / Append / Finalize)
   marshalled from C memory, aclrtLaunchKernelWithConfig with a launch attribute, replays, an
   async copy into pinned memory. Written for npusim's tests. argv[1]: the ELF path. */
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

int main(int argc, char **argv)
{
    SAY("set_device", aclrtSetDevice(0));
    aclrtStream s = NULL;
    SAY("create_stream", aclrtCreateStream(&s));
    aclrtBinHandle bin = NULL;
    aclrtFuncHandle fn = NULL;
    SAY("load", aclrtBinaryLoadFromFile(argv[1], NULL, &bin));
    SAY("get_function", aclrtBinaryGetFunction(bin, "EasyOPf", &fn));
    uint32_t *x = NULL;
    SAY("malloc", aclrtMalloc((void **)&x, 8 * sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("memset", aclrtMemset(x, 32, 0, 32));

    /* arguments appended by value from C memory */
    aclrtArgsHandle ah = NULL;
    aclrtParamHandle ph = NULL;
    SAY("args_init", aclrtKernelArgsInit(fn, &ah));
    SAY("args_append", aclrtKernelArgsAppend(ah, &x, sizeof(x), &ph));
    SAY("args_append_null", aclrtKernelArgsAppend(ah, NULL, sizeof(x), &ph));
    SAY("args_finalize", aclrtKernelArgsFinalize(ah));
    aclrtLaunchKernelAttr attr;
    memset(&attr, 0, sizeof(attr));
    attr.id = ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT;
    attr.value.timeout = 5;
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    SAY("launch_cfg", aclrtLaunchKernelWithConfig(fn, 8, s, &cfg, ah, NULL));
    SAY("launch_nocfg", aclrtLaunchKernelWithConfig(fn, 8, s, NULL, ah, NULL));
    attr.id = (aclrtLaunchKernelAttrId)77;
    SAY("launch_bad_attr", aclrtLaunchKernelWithConfig(fn, 8, s, &cfg, ah, NULL));

    /* capture and replay */
    aclmdlRI ri = NULL;
    SAY("capture_begin", aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    SAY("launch_captured", aclrtLaunchKernelWithConfig(fn, 8, s, NULL, ah, NULL));
    SAY("capture_end", aclmdlRICaptureEnd(s, &ri));
    SAY("execute", aclmdlRIExecuteAsync(ri, s));
    SAY("execute2", aclmdlRIExecuteAsync(ri, s));
    SAY("sync", aclrtSynchronizeStream(s));

    uint32_t *pinned = NULL;
    SAY("malloc_host", aclrtMallocHost((void **)&pinned, 32));
    memset(pinned, 0xEE, 32);
    SAY("memcpy_async", aclrtMemcpyAsync(pinned, 32, x, 32, ACL_MEMCPY_DEVICE_TO_HOST, s));
    SAY("sync2", aclrtSynchronizeStream(s));
    int ok = 1;
    for (int b = 0; b < 8; b++) ok &= pinned[b] == 4;   /* cfg, nocfg, two replays */
    SAY("result", ok);
    SAY("ri_destroy", aclmdlRIDestroy(ri));
    SAY("free_host", aclrtFreeHost(pinned));
    SAY("free", aclrtFree(x));
    SAY("destroy_stream", aclrtDestroyStream(s));
    SAY("reset", aclrtResetDevice(0));
    return 0;
}
