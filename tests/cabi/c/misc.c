/* npusim cabi test: the hand-marshalled functions (virtual memory with a physical-memory
   property struct and access descriptors, the in/out capture mode, the error-info struct) and
   the exception callback with its info handle. Written for npusim's tests. argv[1]: the ELF. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

static int g_exc_calls, g_exc_dev = -1, g_exc_thread_ok;
static pthread_t g_main;

static void on_exception(aclrtExceptionInfo *info)
{
    g_exc_calls++;
    g_exc_dev = (int)aclrtGetDeviceIdFromExceptionInfo(info);
    g_exc_thread_ok = pthread_equal(pthread_self(), g_main);
}

int main(int argc, char **argv)
{
    g_main = pthread_self();
    SAY("set_device", aclrtSetDevice(0));

    /* virtual memory: a property struct in, a granularity out, access descriptors in */
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t gran = 0;
    SAY("granularity", aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    SAY("granularity_positive", gran > 0);
    SAY("granularity_null", aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, NULL));
    aclrtDrvMemHandle h = NULL;
    SAY("malloc_physical", aclrtMallocPhysical(&h, gran, &prop, 0));
    SAY("malloc_physical_null_prop", aclrtMallocPhysical(&h, gran, NULL, 0));
    void *va = NULL;
    SAY("reserve", aclrtReserveMemAddress(&va, gran, 0, NULL, 0));
    SAY("map", aclrtMapMem(va, gran, 0, h, 0));
    aclrtMemAccessDesc desc;
    memset(&desc, 0, sizeof(desc));
    desc.flags = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
    desc.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = 0;
    SAY("set_access", aclrtMemSetAccess(va, gran, &desc, 1));
    int in[4] = {1, 2, 3, 4}, out[4] = {0};
    SAY("h2d", aclrtMemcpy(va, sizeof(in), in, sizeof(in), ACL_MEMCPY_HOST_TO_DEVICE));
    SAY("d2h", aclrtMemcpy(out, sizeof(out), va, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST));
    SAY("vmm_bytes", memcmp(in, out, sizeof(in)) == 0);
    aclrtMemLocation where;
    uint64_t flag = 99;
    SAY("get_access", aclrtMemGetAccess(va, &where, &flag));
    SAY("access_read", where.type == ACL_MEM_LOCATION_TYPE_DEVICE && where.id == 0
                       && flag == ACL_RT_MEM_ACCESS_FLAGS_READWRITE);
    aclrtPhysicalMemProp back;
    memset(&back, 0xFF, sizeof(back));
    SAY("prop_from_handle", aclrtMemGetAllocationPropertiesFromHandle(h, &back));
    SAY("prop_read", back.memAttr == prop.memAttr && back.location.type == prop.location.type
                     && back.allocationType == prop.allocationType);
    void *addrs[1] = {va};
    uint32_t check = 7;
    SAY("check_mem_type", aclrtCheckMemType(addrs, 1, ACL_RT_MEM_TYPE_DEV, &check, 0));
    SAY("check_result", check);
    SAY("unmap", aclrtUnmapMem(va));
    SAY("release", aclrtReleaseMemAddress(va));
    SAY("free_physical", aclrtFreePhysical(h));

    /* the in/out capture mode */
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    SAY("exchange", aclmdlRICaptureThreadExchangeMode(&mode));
    SAY("old_mode", mode);
    SAY("exchange_back", aclmdlRICaptureThreadExchangeMode(&mode));
    SAY("new_mode", mode);
    SAY("exchange_null", aclmdlRICaptureThreadExchangeMode(NULL));

    aclrtErrorInfo ei;
    memset(&ei, 0xFF, sizeof(ei));
    SAY("error_verbose", aclrtGetErrorVerbose(0, &ei));
    SAY("error_type", ei.errorType);

    int32_t major = -1, minor = -1, patch = -1;
    SAY("get_version", aclrtGetVersion(&major, &minor, &patch));
    SAY("version_set", major >= 0 && minor >= 0 && patch >= 0);

    aclrtStream s = NULL;
    SAY("create_stream", aclrtCreateStream(&s));
    aclrtStreamAttrValue av;
    memset(&av, 0, sizeof(av));
    av.failureMode = 1;
    SAY("set_stream_attr", aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &av));
    SAY("set_stream_attr_null", aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, NULL));
    av.failureMode = 99;
    SAY("get_stream_attr", aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &av));
    SAY("failure_mode", av.failureMode);

    /* a kernel by name with host arguments */
    aclrtBinHandle bin = NULL;
    aclrtFuncHandle fn = NULL, easy = NULL;
    SAY("load", aclrtBinaryLoadFromFile(argv[1], NULL, &bin));
    SAY("get_easy", aclrtBinaryGetFunction(bin, "EasyOPf", &easy));
    /* the same ELF from memory: copied byte for byte at the call */
    FILE *fp = fopen(argv[1], "rb");
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *elf = (char *)malloc((size_t)len);
    SAY("read_elf", fread(elf, 1, (size_t)len, fp) == (size_t)len ? 0 : 1);
    fclose(fp);
    aclrtBinHandle bin2 = NULL;
    aclrtFuncHandle easy2 = NULL;
    SAY("load_from_data", aclrtBinaryLoadFromData(elf, (size_t)len, NULL, &bin2));
    memset(elf, 0, (size_t)len);
    free(elf);
    SAY("get_easy2", aclrtBinaryGetFunction(bin2, "EasyOPf", &easy2));
    SAY("load_from_data_empty", aclrtBinaryLoadFromData(argv[1], 0, NULL, &bin2));
    SAY("unload2", aclrtBinaryUnLoad(bin2));
    aclrtNotify nt[2] = {NULL, NULL};
    SAY("notify0", aclrtCreateNotify(&nt[0], 0));
    SAY("notify1", aclrtCreateNotify(&nt[1], 0));
    SAY("notify_batch_reset", aclrtNotifyBatchReset(nt, 2));
    SAY("notify_batch_reset_zero", aclrtNotifyBatchReset(nt, 0));
    SAY("destroy_notify0", aclrtDestroyNotify(nt[0]));
    SAY("destroy_notify1", aclrtDestroyNotify(nt[1]));
    char name[64];
    SAY("function_name", aclrtGetFunctionName(easy, sizeof(name), name));
    SAY("function_name_ok", strcmp(name, "EasyOPf") == 0);
    SAY("function_name_short", aclrtGetFunctionName(easy, 3, name));
    uint32_t *x = NULL;
    SAY("malloc_x", aclrtMalloc((void **)&x, 4 * sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("memset_x", aclrtMemset(x, 16, 0, 16));
    aclrtPtrAttributes pa;
    memset(&pa, 0xFF, sizeof(pa));
    SAY("pointer_attributes", aclrtPointerGetAttributes(x, &pa));
    SAY("pointer_is_device", pa.location.type == ACL_MEM_LOCATION_TYPE_DEVICE && pa.location.id == 0);
    void *host_args[1] = {x};
    SAY("launch_host_args", aclrtLaunchKernelWithHostArgs(easy, 4, s, NULL, host_args,
                                                          sizeof(host_args), NULL, 0));
    SAY("sync_host_args", aclrtSynchronizeStream(s));
    uint32_t hx[4] = {0};
    SAY("d2h_x", aclrtMemcpy(hx, 16, x, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    SAY("host_args_result", hx[0] == 1 && hx[3] == 1);

    /* the exception callback: a trapping kernel */
    SAY("set_exception_cb", aclrtSetExceptionInfoCallback(on_exception));
    SAY("get_function", aclrtBinaryGetFunction(bin, "ErrorOPf", &fn));
    void *args = NULL;
    SAY("malloc_args", aclrtMalloc(&args, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("launch", aclrtLaunchKernel(fn, 1, args, 8, s));
    SAY("sync_failed", aclrtSynchronizeStream(s) != 0);
    SAY("exception_calls", g_exc_calls);
    SAY("exception_device", g_exc_dev);
    SAY("exception_thread", g_exc_thread_ok);
    return 0;
}
