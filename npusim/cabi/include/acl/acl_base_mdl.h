/* npusim's own declarations of the Ascend Computing Language interface (acl_base_mdl.h).
 * Written from the runtime's API reference by scripts/gen_cabi_headers.py; not CANN's header.
 * SPDX-License-Identifier: same as npusim. */
#ifndef NPUSIM_ACL_ACL_BASE_MDL_H_
#define NPUSIM_ACL_ACL_BASE_MDL_H_
#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif


#ifdef __cplusplus
}
#endif
#endif /* NPUSIM_ACL_ACL_BASE_MDL_H_ */
