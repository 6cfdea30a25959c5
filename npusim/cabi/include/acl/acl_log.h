/* npusim's own declarations of the Ascend Computing Language interface (acl_log.h).
 * Written from the runtime's API reference by scripts/gen_cabi_headers.py; not CANN's header.
 * SPDX-License-Identifier: same as npusim. */
#ifndef NPUSIM_ACL_ACL_LOG_H_
#define NPUSIM_ACL_ACL_LOG_H_
#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif
ACL_FUNC_VISIBILITY int32_t acllogCheckDebugLevel(int32_t moduleId, int32_t logLevel);
ACL_FUNC_VISIBILITY void acllogRecord(int32_t moduleId, int32_t level, const char *fmt, ...);
ACL_FUNC_VISIBILITY int32_t acllogRegisterCallback(acllogRecordCallback callbackFunc, void *userData, uint32_t outputLogType, acllogCallbackHandle *callbackHandle);
ACL_FUNC_VISIBILITY int32_t acllogUnregisterCallback(acllogCallbackHandle callback);
ACL_FUNC_VISIBILITY void acllogVaList(int32_t moduleId, int32_t level, const char *fmt, va_list list);

#ifdef __cplusplus
}
#endif
#endif /* NPUSIM_ACL_ACL_LOG_H_ */
