/* npusim cabi test: codes, outputs written back, device / context / stream / event lifecycle,
   copies with malloc'd and aclrtMallocHost memory, the recent error message. Written for npusim's
   tests (not from any sample). Prints one "name value" line per check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

int main(void)
{
    SAY("init", aclInit(NULL));
    SAY("set_device", aclrtSetDevice(0));
    int32_t dev = -1;
    SAY("get_device", aclrtGetDevice(&dev));
    SAY("device", dev);
    SAY("get_device_null", aclrtGetDevice(NULL));
    const char *msg = aclGetRecentErrMsg();
    printf("msg_null_output %d\n", msg != NULL && strstr(msg, "deviceId") != NULL);
    uint32_t count = 0;
    SAY("get_device_count", aclrtGetDeviceCount(&count));
    SAY("count_positive", count > 0);

    aclrtContext ctx = NULL, cur = NULL;
    SAY("create_context", aclrtCreateContext(&ctx, 0));
    SAY("get_current_context", aclrtGetCurrentContext(&cur));
    SAY("same_context", ctx == cur && ctx != NULL);

    aclrtStream s = NULL;
    SAY("create_stream", aclrtCreateStream(&s));
    SAY("stream_nonnull", s != NULL);
    aclrtEvent e1 = NULL, e2 = NULL;
    SAY("create_event", aclrtCreateEvent(&e1));
    SAY("create_event2", aclrtCreateEvent(&e2));

    size_t n = 4096;
    void *dev_buf = NULL;
    SAY("malloc", aclrtMalloc(&dev_buf, n, ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("malloc_zero", aclrtMalloc(&dev_buf, 0, ACL_MEM_MALLOC_HUGE_FIRST));
    unsigned char *src = (unsigned char *)malloc(n), *dst = (unsigned char *)calloc(1, n);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 7 + 3);
    SAY("record1", aclrtRecordEvent(e1, s));
    SAY("memcpy_h2d", aclrtMemcpy(dev_buf, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE));
    SAY("memset_async", aclrtMemsetAsync(dev_buf, 16, 0xAB, 16, s));
    SAY("record2", aclrtRecordEvent(e2, s));
    SAY("sync_stream", aclrtSynchronizeStream(s));
    float ms = -1.0f;
    SAY("elapsed", aclrtEventElapsedTime(&ms, e1, e2));
    SAY("elapsed_nonneg", ms >= 0.0f);
    SAY("memcpy_d2h", aclrtMemcpy(dst, n, dev_buf, n, ACL_MEMCPY_DEVICE_TO_HOST));
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= dst[i] == (i < 16 ? 0xAB : (unsigned char)(i * 7 + 3));
    SAY("d2h_bytes", ok);

    /* pinned host memory: C writes through the pointer, a D2H copy lands there */
    void *pinned = NULL;
    SAY("malloc_host", aclrtMallocHost(&pinned, n));
    memset(pinned, 0x5A, n);
    SAY("memcpy_pinned_h2d", aclrtMemcpy(dev_buf, n, pinned, n, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(dst, 0, n);
    SAY("memcpy_d2h_malloc", aclrtMemcpy(dst, n, dev_buf, n, ACL_MEMCPY_DEVICE_TO_HOST));
    SAY("pinned_bytes", dst[0] == 0x5A && dst[n - 1] == 0x5A);
    memcpy(dev_buf ? pinned : pinned, src, n);
    SAY("memcpy_h2d_again", aclrtMemcpy(dev_buf, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE));
    memset(pinned, 0, n);
    SAY("memcpy_d2pinned", aclrtMemcpy(pinned, n, dev_buf, n, ACL_MEMCPY_DEVICE_TO_HOST));
    SAY("pinned_read", memcmp(pinned, src, n) == 0);
    SAY("free_host", aclrtFreeHost(pinned));

    /* hostile arguments: the codes the facade returns to Python callers */
    SAY("bad_stream", aclrtSynchronizeStream((aclrtStream)(uintptr_t)0x7FFFFFF1));
    aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    SAY("bad_event", aclrtQueryEventStatus((aclrtEvent)(uintptr_t)0x7FFFFFF1, &st));
    SAY("query_null", aclrtQueryEventStatus(NULL, NULL));
    SAY("memcpy_null", aclrtMemcpy(NULL, n, src, n, ACL_MEMCPY_HOST_TO_DEVICE));
    SAY("memcpy_kind", aclrtMemcpy(dev_buf, n, src, n, (aclrtMemcpyKind)99));

    SAY("destroy_event", aclrtDestroyEvent(e1));
    SAY("destroy_event2", aclrtDestroyEvent(e2));
    SAY("free", aclrtFree(dev_buf));
    SAY("destroy_stream", aclrtDestroyStream(s));
    SAY("destroy_context", aclrtDestroyContext(ctx));
    SAY("reset_device", aclrtResetDevice(0));
    SAY("finalize", aclFinalize());
    free(src);
    free(dst);
    return 0;
}
