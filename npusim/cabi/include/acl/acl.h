/* npusim's own declarations of the Ascend Computing Language interface (acl.h).
 * Written from the runtime's API reference by scripts/gen_cabi_headers.py; not CANN's header.
 * SPDX-License-Identifier: same as npusim. */
#ifndef NPUSIM_ACL_ACL_H_
#define NPUSIM_ACL_ACL_H_
#include "acl_base.h"
#include "acl_mdl.h"
#include "acl_rt_allocator.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc, void *userData);
ACL_FUNC_VISIBILITY aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc);
ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount);
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc, void *userData);
ACL_FUNC_VISIBILITY aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc);

#ifdef __cplusplus
}
#endif
#endif /* NPUSIM_ACL_ACL_H_ */
