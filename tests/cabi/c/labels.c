/* npusim cabi test: labels as 2_advanced_features/label/0_simple_label makes them (docs/
   cabi_samples.md B4), with a memset after each label so the branch taken shows. Written for
   npusim's tests. */
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

#define SAY(name, v) printf("%s %lld\n", name, (long long)(v))

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    SAY("init", aclInit(NULL));
    SAY("set_device", aclrtSetDevice(0));
    aclrtContext context = NULL;
    SAY("create_context", aclrtCreateContext(&context, 0));
    aclrtStream labelStream = NULL, executeStream = NULL;
    SAY("label_stream", aclrtCreateStreamWithConfig(&labelStream, 0, ACL_STREAM_PERSISTENT));
    SAY("execute_stream", aclrtCreateStream(&executeStream));
    aclmdlRI model = NULL;
    SAY("build_begin", aclmdlRIBuildBegin(&model, 0));
    SAY("bind", aclmdlRIBindStream(model, labelStream, 0));
    uint32_t index = 1;
    void *indexDev = NULL, *marks = NULL;
    SAY("malloc", aclrtMalloc(&indexDev, sizeof(index), ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("malloc_marks", aclrtMalloc(&marks, 2, ACL_MEM_MALLOC_HUGE_FIRST));
    SAY("zero_marks", aclrtMemset(marks, 2, 0, 2));
    SAY("h2d", aclrtMemcpy(indexDev, sizeof(index), &index, sizeof(index),
                           ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtLabel labels[2] = {NULL, NULL};
    SAY("label0", aclrtCreateLabel(&labels[0]));
    SAY("label1", aclrtCreateLabel(&labels[1]));
    aclrtLabelList list = NULL;
    SAY("list", aclrtCreateLabelList(labels, 2, &list));
    SAY("list_null", aclrtCreateLabelList(labels, 2, NULL));
    SAY("list_zero", aclrtCreateLabelList(labels, 0, &list));
    SAY("switch", aclrtSwitchLabelByIndex(indexDev, 2, list, labelStream));
    SAY("set0", aclrtSetLabel(labels[0], labelStream));
    SAY("mark0", aclrtMemsetAsync(marks, 1, 7, 1, labelStream));
    SAY("set1", aclrtSetLabel(labels[1], labelStream));
    SAY("mark1", aclrtMemsetAsync((char *)marks + 1, 1, 9, 1, labelStream));
    SAY("set_again", aclrtSetLabel(labels[1], labelStream));
    SAY("end_task", aclmdlRIEndTask(model, labelStream));
    SAY("build_end", aclmdlRIBuildEnd(model, NULL));
    SAY("execute", aclmdlRIExecuteAsync(model, executeStream));
    SAY("sync", aclrtSynchronizeStream(executeStream));
    unsigned char host[2] = {1, 1};
    SAY("d2h", aclrtMemcpy(host, 2, marks, 2, ACL_MEMCPY_DEVICE_TO_HOST));
    SAY("mark0_value", host[0]);
    SAY("mark1_value", host[1]);
    SAY("unbind", aclmdlRIUnbindStream(model, labelStream));
    SAY("destroy_model", aclmdlRIDestroy(model));
    SAY("destroy_list", aclrtDestroyLabelList(list));
    SAY("destroy1", aclrtDestroyLabel(labels[1]));
    SAY("destroy0", aclrtDestroyLabel(labels[0]));
    SAY("free", aclrtFree(indexDev));
    SAY("free_marks", aclrtFree(marks));
    SAY("destroy_label_stream", aclrtDestroyStream(labelStream));
    SAY("destroy_execute_stream", aclrtDestroyStream(executeStream));
    SAY("destroy_context", aclrtDestroyContext(context));
    SAY("reset", aclrtResetDeviceForce(0));
    SAY("finalize", aclFinalize());
    return 0;
}
