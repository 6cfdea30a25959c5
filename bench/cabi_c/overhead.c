/* npusim cabi benchmark: ns per call of three calls through libascendcl.so, timed inside C.
   argv[1]: the ELF path, argv[2]: calls per measurement. Prints "name ns_per_call". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "acl/acl.h"

int npusim_cabi_started(void);   /* the library's own no-op entry: the bare crossing */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[2]);
    aclrtSetDevice(0);
    aclrtStream s;
    aclrtCreateStream(&s);
    aclrtBinHandle bin;
    aclrtFuncHandle fn;
    aclrtBinaryLoadFromFile(argv[1], NULL, &bin);
    aclrtBinaryGetFunction(bin, "EasyOPf", &fn);
    void *x, *args;
    aclrtMalloc(&x, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&args, 8, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(args, 8, &x, 8, ACL_MEMCPY_HOST_TO_DEVICE);
    int32_t dev;
    aclmdlRI ri;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int round = 0; round < 6; round++) {          /* the best of 5 after a warm-up */
        double tc = now();
        for (int i = 0; i < n; i++) npusim_cabi_started();
        double t0 = now();
        for (int i = 0; i < n; i++) aclrtGetDevice(&dev);
        double t1 = now();
        aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
        double t2 = now();
        for (int i = 0; i < n; i++) aclrtMemsetAsync(x, 64, 0, 64, s);
        double t3 = now();
        for (int i = 0; i < n; i++) aclrtLaunchKernel(fn, 1, args, 8, s);
        double t4 = now();
        aclmdlRICaptureEnd(s, &ri);
        aclmdlRIDestroy(ri);
        double v[4] = {(t0 - tc) / n, (t1 - t0) / n, (t3 - t2) / n, (t4 - t3) / n};
        for (int k = 0; round && k < 4; k++)
            if (v[k] < best[k]) best[k] = v[k];
    }
    printf("crossing %.1f\nget_device %.1f\nmemset_async %.1f\nlaunch_kernel %.1f\n",
           best[0], best[1], best[2], best[3]);
    aclrtResetDevice(0);
    return 0;
}
