/* npusim cabi test: a user allocator registered on a stream and read back (docs/cabi_samples.md
   B7; 3_memory_advanced/allocator/0_custom_allocator makes these calls). Written for npusim's
   tests. */
#include <stdio.h>
#include <stdlib.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

typedef struct { int allocs, frees; } State;

static void *my_alloc(aclrtAllocator a, size_t size) { ((State *)a)->allocs++; return malloc(size); }
static void my_free(aclrtAllocator a, aclrtAllocatorBlock b) { ((State *)a)->frees++; free(b); }
static void *my_advise(aclrtAllocator a, size_t size, aclrtAllocatorAddr addr)
{
    (void)addr;
    return my_alloc(a, size);
}
static void *my_addr(aclrtAllocatorBlock b) { return b; }

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    State state = {0, 0};
    SAY("init", aclInit(NULL));
    SAY("set_device", aclrtSetDevice(0));
    aclrtStream stream = NULL;
    SAY("create_stream", aclrtCreateStream(&stream));
    aclrtAllocatorDesc desc = aclrtAllocatorCreateDesc();
    SAY("desc_made", desc != NULL);
    SAY("register_empty", aclrtAllocatorRegister(stream, desc));
    SAY("set_obj", aclrtAllocatorSetObjToDesc(desc, (aclrtAllocator)&state));
    SAY("set_alloc", aclrtAllocatorSetAllocFuncToDesc(desc, my_alloc));
    SAY("set_free", aclrtAllocatorSetFreeFuncToDesc(desc, my_free));
    SAY("set_advise", aclrtAllocatorSetAllocAdviseFuncToDesc(desc, my_advise));
    SAY("set_addr", aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, my_addr));
    SAY("set_null_func", aclrtAllocatorSetFreeFuncToDesc(desc, NULL));
    SAY("register", aclrtAllocatorRegister(stream, desc));
    SAY("register_null_stream", aclrtAllocatorRegister(NULL, desc));

    aclrtAllocatorDesc d = NULL;
    aclrtAllocator obj = NULL;
    aclrtAllocatorAllocFunc fa = NULL;
    aclrtAllocatorFreeFunc ff = NULL;
    aclrtAllocatorAllocAdviseFunc fv = NULL;
    aclrtAllocatorGetAddrFromBlockFunc fg = NULL;
    SAY("get", aclrtAllocatorGetByStream(stream, &d, &obj, &fa, &ff, &fv, &fg));
    SAY("same", d == desc && obj == (aclrtAllocator)&state && fa == my_alloc && ff == my_free
                && fv == my_advise && fg == my_addr);
    void *b = fa(obj, 256);
    void *b2 = fv(obj, 128, NULL);
    ff(obj, b2);
    ff(obj, fg(b));
    SAY("allocs", state.allocs);
    SAY("frees", state.frees);
    SAY("get_optional_null", aclrtAllocatorGetByStream(stream, &d, NULL, NULL, NULL, NULL, NULL));
    SAY("get_desc_null", aclrtAllocatorGetByStream(stream, NULL, &obj, &fa, &ff, &fv, &fg));
    SAY("unregister", aclrtAllocatorUnregister(stream));
    SAY("get_none", aclrtAllocatorGetByStream(stream, &d, &obj, &fa, &ff, &fv, &fg));
    SAY("unregister_again", aclrtAllocatorUnregister(stream));
    SAY("destroy_desc", aclrtAllocatorDestroyDesc(desc));
    SAY("destroy_null", aclrtAllocatorDestroyDesc(NULL));
    SAY("destroy_stream", aclrtDestroyStream(stream));
    SAY("reset", aclrtResetDevice(0));
    SAY("finalize", aclFinalize());
    return 0;
}
