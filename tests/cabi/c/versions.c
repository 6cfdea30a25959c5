/* npusim cabi test: aclsysGetVersionStr / aclsysGetVersionNum as 0_quickstart/2_system_info
   calls them (docs/cabi_samples.md B1), with ASCEND_HOME_PATH set by the test, and the CANN
   attributes 0_runtime_compatibility lists. Written for
   npusim's tests. */
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

int main(void)
{
    SAY("init", aclInit(NULL));
    char buf[128];
    memset(buf, 'x', sizeof(buf));
    SAY("str", aclsysGetVersionStr((char *)"runtime", buf));
    SAY("str_is_9_1_0", strcmp(buf, "9.1.0") == 0);
    int32_t n = 0;
    SAY("num", aclsysGetVersionNum((char *)"runtime", &n));
    SAY("number", n);
    SAY("str_missing", aclsysGetVersionStr((char *)"no-such-package", buf));
    SAY("str_unchanged", strcmp(buf, "9.1.0") == 0);
    SAY("str_null_out", aclsysGetVersionStr((char *)"runtime", NULL));
    SAY("str_null_name", aclsysGetVersionStr(NULL, buf));
    SAY("num_null_out", aclsysGetVersionNum((char *)"runtime", NULL));

    /* the CANN attributes, found from the library's directory (0_runtime_compatibility) */
    const aclCannAttr *attrs = NULL;
    size_t count = 99;
    SAY("list", aclGetCannAttributeList(&attrs, &count));
    SAY("count", count);
    for (size_t i = 0; i < count && attrs != NULL; i++) {
        char name[16];
        snprintf(name, sizeof(name), "attr%zu", i);
        SAY(name, attrs[i]);
        int32_t v = -1;
        snprintf(name, sizeof(name), "get%zu", i);
        SAY(name, aclGetCannAttribute(attrs[i], &v));
        snprintf(name, sizeof(name), "value%zu", i);
        SAY(name, v);
    }
    SAY("list_null", aclGetCannAttributeList(NULL, &count));
    SAY("list_num_null", aclGetCannAttributeList(&attrs, NULL));
    int32_t v = 0;
    SAY("get_bad", aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &v));
    SAY("get_null", aclGetCannAttribute(ACL_CANN_ATTR_BF16, NULL));
    SAY("finalize", aclFinalize());
    return 0;
}
