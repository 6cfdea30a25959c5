/* npusim's own declarations of the Ascend Computing Language interface (acl_dump.h).
 * Written from the runtime's API reference by scripts/gen_cabi_headers.py; not CANN's header.
 * SPDX-License-Identifier: same as npusim. */
#ifndef NPUSIM_ACL_ACL_DUMP_H_
#define NPUSIM_ACL_ACL_DUMP_H_
#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif
ACL_FUNC_VISIBILITY aclError acldumpGetExceptionInfoPath(char *path, size_t maxLen);
ACL_FUNC_VISIBILITY const char *acldumpGetPath(acldumpType dumpType);
ACL_FUNC_VISIBILITY aclError acldumpRegCallback(int32_t (* const messageCallback)(const acldumpChunk *, int32_t), int32_t flag);
ACL_FUNC_VISIBILITY aclError acldumpSaveExceptionInfo(const char *fileName, const char *userTag, const acldumpTensorInfo *tensors, size_t tensorCount);
ACL_FUNC_VISIBILITY void acldumpUnregCallback(void);
ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump(void);
ACL_FUNC_VISIBILITY aclError aclmdlInitDump(void);
ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath);
ACL_FUNC_VISIBILITY aclError aclopStartDumpArgs(uint32_t dumpType, const char *path);
ACL_FUNC_VISIBILITY aclError aclopStopDumpArgs(uint32_t dumpType);

#ifdef __cplusplus
}
#endif
#endif /* NPUSIM_ACL_ACL_DUMP_H_ */
