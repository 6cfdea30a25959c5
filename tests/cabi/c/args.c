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
    aclrtStream streams[2] = {0};
    uint32_t nstreams = 2;
    SAY("get_streams", aclmdlRIGetStreams(ri, streams, &nstreams));
    SAY("streams_written", nstreams >= 1 && streams[0] != NULL);
    /* the tasks of the model's capture stream */
    uint32_t ntask = 0;
    SAY("tasks_count", aclmdlRIGetTasksByStream(streams[0], NULL, &ntask));
    SAY("ntask", ntask);
    aclmdlRITask tasks[4] = {0};
    uint32_t cap = 4;
    SAY("tasks", aclmdlRIGetTasksByStream(streams[0], tasks, &cap));
    SAY("tasks_written", cap == ntask && tasks[0] != NULL && tasks[cap] == NULL);
    SAY("tasks_null_count", aclmdlRIGetTasksByStream(streams[0], tasks, NULL));
    SAY("tasks_capturing_stream", aclmdlRIGetTasksByStream(s, tasks, &cap));
    aclmdlRITaskParams tp;
    memset(&tp, 0, sizeof(tp));
    SAY("task_get_params", aclmdlRITaskGetParams(tasks[0], &tp));
    aclrtLaunchKernelAttrValue avl;
    memset(&avl, 0xFF, sizeof(avl));
    SAY("task_attribute", aclmdlRIKernelTaskGetAttribute(tasks[0], ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, &avl));
    SAY("task_attribute_null", aclmdlRIKernelTaskGetAttribute(tasks[0], ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, NULL));
    SAY("task_is_kernel", tp.type == ACL_MODEL_RI_TASK_KERNEL
                          && tp.kernelTaskParams.funcHandle == fn
                          && tp.kernelTaskParams.numBlocks == 8);
    /* the task's arguments replaced by host arguments naming the same buffer, 4 blocks only */
    void *hargs[1] = {x};
    tp.kernelTaskParams.args = hargs;
    tp.kernelTaskParams.argsSize = sizeof(hargs);
    tp.kernelTaskParams.isHostArgs = 1;
    tp.kernelTaskParams.numBlocks = 8;
    tp.kernelTaskParams.cfg = NULL;
    SAY("task_set_params_null", aclmdlRITaskSetParams(tasks[0], NULL));
    SAY("task_set_params", aclmdlRITaskSetParams(tasks[0], &tp));
    SAY("ri_update", aclmdlRIUpdate(ri));
    SAY("task_get_params_null", aclmdlRITaskGetParams(tasks[0], NULL));
    memset(&tp, 0, sizeof(tp));
    SAY("task_get_params2", aclmdlRITaskGetParams(tasks[0], &tp));
    SAY("task_updated", tp.kernelTaskParams.argsSize == sizeof(hargs));
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
    /* a batch of two host-to-device copies with one attribute set */
    uint32_t a[2] = {11, 22}, b[2] = {33, 44}, back[4] = {0};
    void *dsts[2] = {x, x + 2};
    void *srcs[2] = {a, b};
    size_t maxs[2] = {8, 8}, sizes[2] = {8, 8}, idxs[1] = {0}, fail = 12345;
    aclrtMemcpyBatchAttr battr;
    memset(&battr, 0, sizeof(battr));
    battr.dstLoc.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    battr.dstLoc.id = 0;
    battr.srcLoc.type = ACL_MEM_LOCATION_TYPE_HOST;
    battr.srcLoc.id = 0;
    SAY("memcpy_batch", aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &battr, idxs, 1, &fail));
    SAY("batch_back", aclrtMemcpy(back, 16, x, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    SAY("batch_result", back[0] == 11 && back[1] == 22 && back[2] == 33 && back[3] == 44);
    battr.rsv[3] = 1;
    SAY("memcpy_batch_rsv", aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &battr, idxs, 1, &fail));
    SAY("memcpy_batch_null_fail", aclrtMemcpyBatch(dsts, maxs, srcs, sizes, 2, &battr, idxs, 1, NULL));

    SAY("ri_destroy", aclmdlRIDestroy(ri));
    SAY("free_host", aclrtFreeHost(pinned));
    SAY("free", aclrtFree(x));
    SAY("destroy_stream", aclrtDestroyStream(s));
    SAY("reset", aclrtResetDevice(0));
    return 0;
}
