/* npusim cabi test: the overflow sample's calls (docs/cabi_samples.md B10) and the device queries
   of 1_device_multi_thread (B15): aclrtSetDeviceSatMode / GetDeviceSatMode, the stream switch,
   aclrtGetOverflowStatus / ResetOverflowStatus, aclrtGetDeviceInfo,
   aclrtGetDeviceUtilizationRate. Written for npusim's tests. */
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

int main(void)
{
    SAY("init", aclInit(NULL));
    SAY("set_device", aclrtSetDevice(0));
    aclrtStream stream = NULL;
    SAY("create_stream", aclrtCreateStream(&stream));

    aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
    SAY("get_mode", aclrtGetDeviceSatMode(&mode));
    SAY("mode_default", mode);
    SAY("set_sat", aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    SAY("get_mode2", aclrtGetDeviceSatMode(&mode));
    SAY("mode_set", mode);
    SAY("set_undef", aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF));
    SAY("get_mode_null", aclrtGetDeviceSatMode(NULL));

    uint32_t sw = 0;
    SAY("set_switch", aclrtSetStreamOverflowSwitch(stream, 1));
    SAY("get_switch", aclrtGetStreamOverflowSwitch(stream, &sw));
    SAY("switch", sw);

    void *status = NULL;
    SAY("malloc", aclrtMalloc(&status, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("memset", aclrtMemset(status, 64, 0xFF, 64));
    SAY("get_status", aclrtGetOverflowStatus(status, 64, stream));
    SAY("get_status_size", aclrtGetOverflowStatus(status, 32, stream));
    SAY("get_status_null", aclrtGetOverflowStatus(NULL, 64, stream));
    SAY("sync", aclrtSynchronizeStream(stream));
    uint8_t host[64];
    memset(host, 0xEE, sizeof(host));
    SAY("d2h", aclrtMemcpy(host, sizeof(host), status, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    int zero = 1;
    for (int i = 0; i < 64; i++) zero &= host[i] == 0;
    SAY("status_zero", zero);
    SAY("reset_status", aclrtResetOverflowStatus(stream));
    SAY("sync2", aclrtSynchronizeStream(stream));
    SAY("restore", aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));

    int64_t v = 0;
    SAY("info_vector", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v));
    SAY("vector", v);
    SAY("info_aicore", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &v));
    SAY("aicore", v);
    SAY("info_l2", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_L2_CACHE_SIZE, &v));
    SAY("l2", v);
    SAY("info_bad_attr", aclrtGetDeviceInfo(0, (aclrtDevAttr)999, &v));
    SAY("info_bad_id", aclrtGetDeviceInfo(1u << 20, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v));
    SAY("info_null", aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, NULL));

    aclrtUtilizationInfo u;
    memset(&u, 0x55, sizeof(u));
    u.utilizationExtend = NULL;
    SAY("util", aclrtGetDeviceUtilizationRate(0, &u));
    SAY("cube", u.cubeUtilization);
    SAY("vec", u.vectorUtilization);
    SAY("aicpu", u.aicpuUtilization);
    SAY("mem", u.memoryUtilization);
    SAY("util_bad_id", aclrtGetDeviceUtilizationRate(99, &u));
    SAY("cube_bad", u.cubeUtilization);
    SAY("util_null", aclrtGetDeviceUtilizationRate(0, NULL));
    u.utilizationExtend = (aclrtUtilizationExtendInfo *)&u;
    SAY("util_extend", aclrtGetDeviceUtilizationRate(0, &u));

    SAY("free", aclrtFree(status));
    SAY("destroy_stream", aclrtDestroyStream(stream));
    SAY("reset", aclrtResetDevice(0));
    SAY("finalize", aclFinalize());
    return 0;
}
