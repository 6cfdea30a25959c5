/* npusim cabi test: C threads (per-thread current context and recent error), callbacks called on
   the right thread (aclrtLaunchCallback + aclrtSubscribeReport / aclrtProcessReport on a report
   thread; aclrtLaunchHostFunc), a kernel launched by handle with argsData from a shipped ELF,
   and capture / replay (aclmdlRICaptureBegin / End, aclmdlRIExecute). Written for npusim's tests.
   argv[1]: the ELF path. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

static aclrtContext g_ctx[2];
static int g_same[2];
static int g_err_own[2];

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    aclrtSetCurrentContext(g_ctx[i]);
    /* a failure on this thread only */
    if (i == 1)
        aclrtGetDevice(NULL);
    for (int k = 0; k < 200; k++) {
        aclrtContext cur = NULL;
        aclrtGetCurrentContext(&cur);
        if (cur != g_ctx[i]) return NULL;
    }
    g_same[i] = 1;
    const char *m = aclGetRecentErrMsg();
    g_err_own[i] = i == 1 ? (m != NULL && strstr(m, "deviceId") != NULL) : (m == NULL);
    return NULL;
}

static pthread_t g_main_thread, g_report_thread;
static volatile int g_stop;
static int g_cb_count, g_cb_thread_ok, g_host_count;

static void *report_loop(void *arg)
{
    (void)arg;
    aclrtSetCurrentContext(g_ctx[0]);
    while (!g_stop)
        aclrtProcessReport(50);
    return NULL;
}

static void on_callback(void *user)
{
    g_cb_count += *(int *)user;
    g_cb_thread_ok = pthread_equal(pthread_self(), g_report_thread);
}

static void on_host(void *user)
{
    g_host_count += *(int *)user;
}

int main(int argc, char **argv)
{
    g_main_thread = pthread_self();
    SAY("set_device", aclrtSetDevice(0));
    SAY("ctx0", aclrtCreateContext(&g_ctx[0], 0));
    SAY("ctx1", aclrtCreateContext(&g_ctx[1], 0));
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    SAY("thread0_context", g_same[0]);
    SAY("thread1_context", g_same[1]);
    SAY("thread0_no_error", g_err_own[0]);
    SAY("thread1_own_error", g_err_own[1]);
    SAY("main_no_error", aclGetRecentErrMsg() == NULL);

    SAY("set_ctx", aclrtSetCurrentContext(g_ctx[0]));
    aclrtStream s = NULL;
    SAY("create_stream", aclrtCreateStream(&s));

    /* callbacks on the subscribed report thread */
    pthread_create(&g_report_thread, NULL, report_loop, NULL);
    SAY("subscribe", aclrtSubscribeReport((uint64_t)g_report_thread, s));
    int one = 1, ten = 10;
    SAY("launch_callback", aclrtLaunchCallback(on_callback, &one, ACL_CALLBACK_BLOCK, s));
    SAY("launch_callback2", aclrtLaunchCallback(on_callback, &ten, ACL_CALLBACK_BLOCK, s));
    SAY("sync_cb", aclrtSynchronizeStream(s));
    SAY("callback_sum", g_cb_count);
    SAY("callback_thread", g_cb_thread_ok);
    SAY("unsubscribe", aclrtUnSubscribeReport((uint64_t)g_report_thread, s));
    g_stop = 1;
    pthread_join(g_report_thread, NULL);
    SAY("host_func", aclrtLaunchHostFunc(s, on_host, &ten));
    SAY("sync_host", aclrtSynchronizeStream(s));
    SAY("host_sum", g_host_count);

    /* a kernel by handle: EasyOPf(u32 *x): x[block] += 1 */
    aclrtBinHandle bin = NULL;
    aclrtFuncHandle fn = NULL;
    SAY("load", aclrtBinaryLoadFromFile(argv[1], NULL, &bin));
    SAY("get_function", aclrtBinaryGetFunction(bin, "EasyOPf", &fn));
    SAY("get_function_bad", aclrtBinaryGetFunction(bin, "NoSuchKernel", &fn));
    uint32_t *x = NULL;
    SAY("malloc", aclrtMalloc((void **)&x, 8 * sizeof(uint32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("memset", aclrtMemset(x, 8 * sizeof(uint32_t), 0, 8 * sizeof(uint32_t)));
    /* aclrtLaunchKernel's argsData is device memory holding the argument block */
    void *host_args[1] = {x};
    void *args = NULL;
    SAY("malloc_args", aclrtMalloc(&args, sizeof(host_args), ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("args_h2d", aclrtMemcpy(args, sizeof(host_args), host_args, sizeof(host_args),
                                ACL_MEMCPY_HOST_TO_DEVICE));
    SAY("launch", aclrtLaunchKernel(fn, 8, args, sizeof(host_args), s));
    SAY("launch_null_args", aclrtLaunchKernel(fn, 8, NULL, sizeof(host_args), s));
    SAY("sync_launch", aclrtSynchronizeStream(s));

    /* capture: two launches recorded, replayed three times */
    aclmdlRI ri = NULL;
    SAY("capture_begin", aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    SAY("launch_captured", aclrtLaunchKernel(fn, 8, args, sizeof(host_args), s));
    SAY("launch_captured2", aclrtLaunchKernel(fn, 8, args, sizeof(host_args), s));
    SAY("capture_end", aclmdlRICaptureEnd(s, &ri));
    SAY("ri_nonnull", ri != NULL);
    for (int k = 0; k < 3; k++)
        SAY("execute", aclmdlRIExecuteAsync(ri, s));
    SAY("sync_ri", aclrtSynchronizeStream(s));
    uint32_t host[8];
    SAY("d2h", aclrtMemcpy(host, sizeof(host), x, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    int ok = 1;
    for (int b = 0; b < 8; b++) ok &= host[b] == 7;    /* 1 + 3 replays x 2 */
    SAY("kernel_result", ok);
    SAY("ri_destroy", aclmdlRIDestroy(ri));
    SAY("unload", aclrtBinaryUnLoad(bin));
    SAY("free", aclrtFree(x));
    SAY("free_args", aclrtFree(args));
    SAY("destroy_stream", aclrtDestroyStream(s));
    SAY("destroy_ctx1", aclrtDestroyContext(g_ctx[1]));
    SAY("destroy_ctx0", aclrtDestroyContext(g_ctx[0]));
    SAY("reset", aclrtResetDevice(0));
    return 0;
}
