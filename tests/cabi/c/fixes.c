/* npusim cabi test: the sample blockers fixed in the C path (docs/cabi_samples.md): the
   aclrtRandomNumTaskInfo struct read byte for byte (B6), aclrtGetResInCurrentThread (B2), aclrtQueryDeviceStatus (B3). Written for npusim's tests. */
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

static void para(aclrtRandomParaInfo *p, uint64_t v, uint8_t size)
{
    memset(p, 0, sizeof(*p));
    memcpy(p->valueOrAddr, &v, sizeof(v));
    p->size = size;
}

int main(void)
{
    SAY("init", aclInit(NULL));
    SAY("set_device", aclrtSetDevice(0));
    aclrtStream stream = NULL;
    SAY("create_stream", aclrtCreateStream(&stream));

    /* B6: a uniform INT32 distribution in [10, 20) into device memory */
    enum { N = 64 };
    void *out = NULL, *counter = NULL;
    SAY("malloc_out", aclrtMalloc(&out, N * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("malloc_counter", aclrtMalloc(&counter, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("memset_counter", aclrtMemset(counter, 16, 0, 16));
    aclrtRandomNumTaskInfo info;
    memset(&info, 0, sizeof(info));
    info.dataType = ACL_INT32;
    info.randomNumFuncParaInfo.funcType = ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS;
    para(&info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min, 10, 4);
    para(&info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.max, 20, 4);
    info.randomResultAddr = out;
    info.randomCounterAddr = counter;
    para(&info.randomSeed, 1234, 8);
    para(&info.randomNum, N, 8);
    SAY("random_num", aclrtRandomNumAsync(&info, stream, NULL));
    SAY("random_num_null", aclrtRandomNumAsync(NULL, stream, NULL));
    info.dataType = (aclDataType)1000;
    SAY("random_num_bad_type", aclrtRandomNumAsync(&info, stream, NULL));
    SAY("sync", aclrtSynchronizeStream(stream));
    int32_t host[N];
    SAY("d2h", aclrtMemcpy(host, sizeof(host), out, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    int in_range = 1, distinct = 0;
    for (int i = 0; i < N; i++) {
        in_range &= host[i] >= 10 && host[i] < 20;
        distinct |= host[i] != host[0];
    }
    SAY("random_in_range", in_range);
    SAY("random_distinct", distinct);

    /* B2: the thread's core limits: the device's, after aclrtSetDeviceResLimit */
    uint32_t cube = 0, vec = 0;
    SAY("res_cube", aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &cube));
    SAY("cube_cores", cube);
    SAY("set_res_limit", aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 3));
    SAY("res_vec", aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &vec));
    SAY("vector_cores", vec);
    SAY("res_bad_type", aclrtGetResInCurrentThread((aclrtDevResLimitType)2, &vec));
    SAY("res_null", aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, NULL));
    SAY("reset_res_limit", aclrtResetDeviceResLimit(0));

    /* B3: the device's status */
    aclrtDeviceStatus status = ACL_RT_DEVICE_STATUS_END;
    SAY("query_status", aclrtQueryDeviceStatus(0, &status));
    SAY("status_normal", status == ACL_RT_DEVICE_STATUS_NORMAL);
    SAY("query_status_bad_id", aclrtQueryDeviceStatus(1 << 20, &status));
    SAY("query_status_null", aclrtQueryDeviceStatus(0, NULL));

    SAY("free_out", aclrtFree(out));
    SAY("free_counter", aclrtFree(counter));
    SAY("destroy_stream", aclrtDestroyStream(stream));
    SAY("reset", aclrtResetDevice(0));
    SAY("finalize", aclFinalize());
    return 0;
}
