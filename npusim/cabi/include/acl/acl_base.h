/* npusim's own declarations of the Ascend Computing Language interface (acl_base.h).
 * Written from the runtime's API reference by scripts/gen_cabi_headers.py; not CANN's header.
 * SPDX-License-Identifier: same as npusim. */
#ifndef NPUSIM_ACL_ACL_BASE_H_
#define NPUSIM_ACL_ACL_BASE_H_
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif
#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif
#ifndef ACL_DEPRECATED
#define ACL_DEPRECATED
#endif

/* return codes (npusim/errors.py; 25-01_aclError) */
typedef int aclError;
static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;
static const int ACL_RT_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_WRITE_FILE = 100004;
static const int ACL_ERROR_INVALID_FILE_SIZE = 100005;
static const int ACL_ERROR_PARSE_FILE = 100006;
static const int ACL_ERROR_FILE_MISSING_ATTR = 100007;
static const int ACL_ERROR_FILE_ATTR_INVALID = 100008;
static const int ACL_ERROR_INVALID_DUMP_CONFIG = 100009;
static const int ACL_ERROR_INVALID_PROFILING_CONFIG = 100010;
static const int ACL_ERROR_INVALID_MODEL_ID = 100011;
static const int ACL_ERROR_DESERIALIZE_MODEL = 100012;
static const int ACL_ERROR_PARSE_MODEL = 100013;
static const int ACL_ERROR_READ_MODEL_FAILURE = 100014;
static const int ACL_ERROR_MODEL_SIZE_INVALID = 100015;
static const int ACL_ERROR_MODEL_MISSING_ATTR = 100016;
static const int ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017;
static const int ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018;
static const int ACL_ERROR_MODEL_NOT_DYNAMIC = 100019;
static const int ACL_ERROR_OP_TYPE_NOT_MATCH = 100020;
static const int ACL_ERROR_OP_INPUT_NOT_MATCH = 100021;
static const int ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022;
static const int ACL_ERROR_OP_ATTR_NOT_MATCH = 100023;
static const int ACL_ERROR_OP_NOT_FOUND = 100024;
static const int ACL_ERROR_OP_LOAD_FAILED = 100025;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
static const int ACL_ERROR_FORMAT_NOT_MATCH = 100027;
static const int ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028;
static const int ACL_ERROR_KERNEL_NOT_FOUND = 100029;
static const int ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030;
static const int ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031;
static const int ACL_ERROR_INVALID_QUEUE_ID = 100032;
static const int ACL_ERROR_REPEAT_SUBSCRIBE = 100033;
static const int ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034;
static const int ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035;
static const int ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_NOT_STATIC_AIPP = 100038;
static const int ACL_ERROR_COMPILING_STUB_MODE = 100039;
static const int ACL_ERROR_GROUP_NOT_SET = 100040;
static const int ACL_ERROR_GROUP_NOT_CREATE = 100041;
static const int ACL_ERROR_PROF_ALREADY_RUN = 100042;
static const int ACL_ERROR_PROF_NOT_RUN = 100043;
static const int ACL_ERROR_DUMP_ALREADY_RUN = 100044;
static const int ACL_ERROR_DUMP_NOT_RUN = 100045;
static const int ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046;
static const int ACL_ERROR_PROF_API_CONFLICT = 148047;
static const int ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048;
static const int ACL_ERROR_INVALID_OPP_PATH = 148049;
static const int ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050;
static const int ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051;
static const int ACL_ERROR_UNSUPPORTED_JPEG = 148052;
static const int ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;
static const int ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007;
static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;
static const int ACL_ERROR_PROFILING_FAILURE = 500005;
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int ACL_ERROR_RT_MODEL_CONTEXT = 107004;
static const int ACL_ERROR_RT_STREAM_MODEL = 107005;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006;
static const int ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007;
static const int ACL_ERROR_RT_ADDR_UNALIGNED = 107008;
static const int ACL_ERROR_RT_FILE_OPEN = 107009;
static const int ACL_ERROR_RT_FILE_WRITE = 107010;
static const int ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011;
static const int ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012;
static const int ACL_ERROR_RT_GROUP_NOT_SET = 107013;
static const int ACL_ERROR_RT_GROUP_NOT_CREATE = 107014;
static const int ACL_ERROR_RT_STREAM_NO_CB_REG = 107015;
static const int ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
static const int ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018;
static const int ACL_ERROR_RT_WAIT_TIMEOUT = 107019;
static const int ACL_ERROR_RT_TASK_TIMEOUT = 107020;
static const int ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021;
static const int ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022;
static const int ACL_ERROR_RT_STREAM_ABORT = 107023;
static const int ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024;
static const int ACL_ERROR_RT_STREAM_UNJOINED = 107025;
static const int ACL_ERROR_RT_MODEL_CAPTURED = 107026;
static const int ACL_ERROR_RT_STREAM_CAPTURED = 107027;
static const int ACL_ERROR_RT_EVENT_CAPTURED = 107028;
static const int ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029;
static const int ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030;
static const int ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031;
static const int ACL_ERROR_STREAM_CAPTURE_CONFLICT = 107032;
static const int ACL_ERROR_STREAM_TASK_GROUP_STATUS = 107033;
static const int ACL_ERROR_STREAM_TASK_GROUP_INTR = 107034;
static const int ACL_ERROR_RT_TASK_ABORT_STOP = 107035;
static const int ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036;
static const int ACL_ERROR_RT_MODEL_RUNNING = 107037;
static const int ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038;
static const int ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY = 107039;
static const int ACL_ERROR_RT_MODEL_UPDATE_FAILED = 107040;
static const int ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC = 107041;
static const int ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042;
static const int ACL_ERROR_RT_INVALID_SYMBOL = 107043;
static const int ACL_ERROR_RT_INVALID_DEVICE_FUNCTION = 107044;
static const int ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING = 107045;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_MEMORY_FREE = 207002;
static const int ACL_ERROR_RT_AICORE_OVER_FLOW = 207003;
static const int ACL_ERROR_RT_NO_DEVICE = 207004;
static const int ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005;
static const int ACL_ERROR_RT_NO_PERMISSION = 207006;
static const int ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007;
static const int ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008;
static const int ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009;
static const int ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010;
static const int ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011;
static const int ACL_ERROR_RT_OVER_LIMIT = 207012;
static const int ACL_ERROR_RT_QUEUE_EMPTY = 207013;
static const int ACL_ERROR_RT_QUEUE_FULL = 207014;
static const int ACL_ERROR_RT_REPEATED_INIT = 207015;
static const int ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016;
static const int ACL_ERROR_RT_OVER_FLOW = 207017;
static const int ACL_ERROR_RT_DEVICE_OOM = 207018;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019;
static const int ACL_ERROR_RT_TIMEOUT = 207020;
static const int ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED = 207021;
static const int ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int ACL_ERROR_RT_TS_ERROR = 507001;
static const int ACL_ERROR_RT_STREAM_TASK_FULL = 507002;
static const int ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003;
static const int ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004;
static const int ACL_ERROR_RT_END_OF_SEQUENCE = 507005;
static const int ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006;
static const int ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007;
static const int ACL_ERROR_RT_SOC_VERSION = 507008;
static const int ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009;
static const int ACL_ERROR_RT_LOST_HEARTBEAT = 507010;
static const int ACL_ERROR_RT_MODEL_EXECUTE = 507011;
static const int ACL_ERROR_RT_REPORT_TIMEOUT = 507012;
static const int ACL_ERROR_RT_SYS_DMA = 507013;
static const int ACL_ERROR_RT_AICORE_TIMEOUT = 507014;
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
static const int ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016;
static const int ACL_ERROR_RT_AICPU_TIMEOUT = 507017;
static const int ACL_ERROR_RT_AICPU_EXCEPTION = 507018;
static const int ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR = 507019;
static const int ACL_ERROR_RT_AICPU_MODEL_RSP_ERR = 507020;
static const int ACL_ERROR_RT_PROFILING_ERROR = 507021;
static const int ACL_ERROR_RT_IPC_ERROR = 507022;
static const int ACL_ERROR_RT_MODEL_ABORT_NORMAL = 507023;
static const int ACL_ERROR_RT_KERNEL_UNREGISTERING = 507024;
static const int ACL_ERROR_RT_RINGBUFFER_NOT_INIT = 507025;
static const int ACL_ERROR_RT_RINGBUFFER_NO_DATA = 507026;
static const int ACL_ERROR_RT_KERNEL_LOOKUP = 507027;
static const int ACL_ERROR_RT_KERNEL_DUPLICATE = 507028;
static const int ACL_ERROR_RT_DEBUG_REGISTER_FAIL = 507029;
static const int ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL = 507030;
static const int ACL_ERROR_RT_LABEL_CONTEXT = 507031;
static const int ACL_ERROR_RT_PROGRAM_USE_OUT = 507032;
static const int ACL_ERROR_RT_DEV_SETUP_ERROR = 507033;
static const int ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034;
static const int ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035;
static const int ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036;
static const int ACL_ERROR_RT_CDQ_BATCH_ABNORMAL = 507037;
static const int ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR = 507038;
static const int ACL_ERROR_RT_DIE_SET_ERROR = 507039;
static const int ACL_ERROR_RT_INVALID_DIEID = 507040;
static const int ACL_ERROR_RT_DIE_MODE_NOT_SET = 507041;
static const int ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042;
static const int ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043;
static const int ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW = 507044;
static const int ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW = 507045;
static const int ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046;
static const int ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047;
static const int ACL_ERROR_RT_FFTS_PLUS_TIMEOUT = 507048;
static const int ACL_ERROR_RT_FFTS_PLUS_EXCEPTION = 507049;
static const int ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION = 507050;
static const int ACL_ERROR_RT_SEND_MSG = 507051;
static const int ACL_ERROR_RT_COPY_DATA = 507052;
static const int ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053;
static const int ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054;
static const int ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR = 507055;
static const int ACL_ERROR_RT_LINK_ERROR = 507056;
static const int ACL_ERROR_RT_SUSPECT_REMOTE_ERROR = 507057;
static const int ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899;
static const int ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900;
static const int ACL_ERROR_RT_SOCKET_CLOSE = 507901;
static const int ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR = 507902;
static const int ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903;
static const int ACL_ERROR_RT_COMM_OP_RETRY_FAIL = 507904;
static const int ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT = 507905;
static const int ACL_ERROR_SNAPSHOT_LOCK_FAILED = 507906;
static const int ACL_ERROR_SNAPSHOT_UNLOCK_FAILED = 507907;
static const int ACL_ERROR_SNAPSHOT_BACKUP_FAILED = 507908;
static const int ACL_ERROR_SNAPSHOT_RESTORE_FAILED = 507909;
static const int ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 507910;
static const int ACL_ERROR_HOST_MEMORY_NOT_REGISTERED = 507911;
static const int ACL_ERROR_SNAPSHOT_CALLBACK_FAILED = 507912;
static const int ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED = 507913;
static const int ACL_ERROR_RT_L3_PORT_ERROR = 507914;
static const int ACL_ERROR_RT_CCU_TIMEOUT = 507915;
static const int ACL_ERROR_RT_CCU_EXCEPTION = 507916;
static const int ACL_ERROR_GE_PARAM_INVALID = 145000;
static const int ACL_ERROR_GE_EXEC_NOT_INIT = 145001;
static const int ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID = 145002;
static const int ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003;
static const int ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID = 145006;
static const int ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID = 145007;
static const int ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID = 145008;
static const int ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED = 145009;
static const int ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID = 145011;
static const int ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID = 145012;
static const int ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID = 145013;
static const int ACL_ERROR_GE_AIPP_BATCH_EMPTY = 145014;
static const int ACL_ERROR_GE_AIPP_NOT_EXIST = 145015;
static const int ACL_ERROR_GE_AIPP_MODE_INVALID = 145016;
static const int ACL_ERROR_GE_OP_TASK_TYPE_INVALID = 145017;
static const int ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID = 145018;
static const int ACL_ERROR_GE_PLGMGR_PATH_INVALID = 145019;
static const int ACL_ERROR_GE_FORMAT_INVALID = 145020;
static const int ACL_ERROR_GE_SHAPE_INVALID = 145021;
static const int ACL_ERROR_GE_DATATYPE_INVALID = 145022;
static const int ACL_ERROR_GE_MEMORY_ALLOCATION = 245000;
static const int ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001;
static const int ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002;
static const int ACL_ERROR_GE_SUBHEALTHY = 345102;
static const int ACL_ERROR_GE_USER_RAISE_EXCEPTION = 345103;
static const int ACL_ERROR_GE_DATA_NOT_ALIGNED = 345104;
static const int ACL_ERROR_GE_INTERNAL_ERROR = 545000;
static const int ACL_ERROR_GE_LOAD_MODEL = 545001;
static const int ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED = 545002;
static const int ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED = 545003;
static const int ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED = 545004;
static const int ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED = 545005;
static const int ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA = 545006;
static const int ACL_ERROR_GE_COMMAND_HANDLE = 545007;
static const int ACL_ERROR_GE_GET_TENSOR_INFO = 545008;
static const int ACL_ERROR_GE_UNLOAD_MODEL = 545009;
static const int ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT = 545601;
static const int ACL_ERROR_GE_REDEPLOYING = 545602;

/* flags and limits (npusim/acl/constants.py and the reference pages) */
#define ACL_CONTINUE_ON_FAILURE 0U
#define ACL_DEV_FEATURE_NOT_SUPPORT 0x00000000
#define ACL_DEV_FEATURE_SUPPORT 0x00000001
#define ACL_ERROR_INVALID_EXCEPTION_INFO 4294967295U
#define ACL_ERROR_RT_DEVIDE_OOM 207018
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 2U
#define ACL_EVENT_DEVICE_USE_ONLY 16U
#define ACL_EVENT_EXTERNAL 32U
#define ACL_EVENT_IPC 64U
#define ACL_EVENT_RECORD_DEFAULT 0U
#define ACL_EVENT_RECORD_EXTERNAL 1U
#define ACL_EVENT_SYNC 1U
#define ACL_EVENT_TIME_LINE 8U
#define ACL_EVENT_WAIT_DEFAULT 0U
#define ACL_EVENT_WAIT_EXTERNAL 1U
#define ACL_HOST_REG_IOMEMORY 0x4UL
#define ACL_HOST_REG_MAPPED 0x2UL
#define ACL_HOST_REG_PINNED 0x10000000UL
#define ACL_HOST_REG_READONLY 0x8UL
#define ACL_MAJOR_VERSION 1U
#define ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY 0U
#define ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE 1U
#define ACL_MINOR_VERSION 17U
#define ACL_MODEL_STREAM_FLAG_DEFAULT 2147483647U
#define ACL_MODEL_STREAM_FLAG_HEAD 0U
#define ACL_NOTIFY_DEFAULT 0U
#define ACL_NOTIFY_DEVICE_USE_ONLY 1U
#define ACL_OP_DUMP_OP_AICORE_ARGS 0x00000001U
#define ACL_PATCH_VERSION 0U
#define ACL_RT_BINARY_MAGIC_ELF_AICORE 1129660997U
#define ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE 1095320387U
#define ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE 1094799942U
#define ACL_RT_CMO_MAX_BARRIER_NUM 6U
#define ACL_RT_CONTEXT_LEVEL 1U
#define ACL_RT_DEVS_TOPOLOGY_HCCS 0x01ULL
#define ACL_RT_DEVS_TOPOLOGY_HCCS_SW 0x40ULL
#define ACL_RT_DEVS_TOPOLOGY_PHB 0x08ULL
#define ACL_RT_DEVS_TOPOLOGY_PIB 0x04ULL
#define ACL_RT_DEVS_TOPOLOGY_PIX 0x02ULL
#define ACL_RT_DEVS_TOPOLOGY_SIO 0x20ULL
#define ACL_RT_DEVS_TOPOLOGY_SYS 0x10ULL
#define ACL_RT_EXCEPTION_AICORE 1U
#define ACL_RT_EXCEPTION_AICPU 2U
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS 1
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO 0
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x1UL
#define ACL_RT_LAUNCH_KERNEL_ATTR_LOCAL_MEMORY_SIZE 2U
#define ACL_RT_MEM_ATTACH_GLOBAL 1U
#define ACL_RT_MEM_TYPE_DEV 2U
#define ACL_RT_MEM_TYPE_DVPP 8U
#define ACL_RT_MEM_TYPE_RSVD 16U
#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20
#define ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x02UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x02UL
#define ACL_RT_VMM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
#define ACL_STOP_ON_FAILURE 1U
#define ACL_STREAM_CPU_SCHEDULE 16U
#define ACL_STREAM_DEVICE_USE_ONLY 32U
#define ACL_STREAM_FAST_LAUNCH 1U
#define ACL_STREAM_FAST_SYNC 2U
#define ACL_STREAM_HUGE 8U
#define ACL_STREAM_PERSISTENT 4U
#define ACL_STREAM_WAIT_VALUE_AND 2U
#define ACL_STREAM_WAIT_VALUE_EQ 1U
#define ACL_STREAM_WAIT_VALUE_GEQ 0U
#define ACL_STREAM_WAIT_VALUE_NOR 3U

/* types (chapter 25 of the reference and the function pages) */
typedef struct acltdtQueueRouteQueryInfo acltdtQueueRouteQueryInfo;

typedef struct acltdtQueueRouteList acltdtQueueRouteList;

typedef struct acltdtQueueRoute acltdtQueueRoute;

typedef struct acltdtQueueAttr acltdtQueueAttr;

typedef struct acltdtDataset acltdtDataset;

typedef struct acltdtDataItem acltdtDataItem;

typedef struct acltdtChannelHandle acltdtChannelHandle;

typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;

typedef struct aclrtStreamConfigHandle aclrtStreamConfigHandle;

typedef struct aclrtGroupInfo aclrtGroupInfo;

typedef struct aclrtExceptionInfo aclrtExceptionInfo;

typedef void *aclrtBinary;

typedef void *aclrtAllocatorDesc;

typedef struct aclprofSubscribeConfig aclprofSubscribeConfig;

typedef struct aclprofStepInfo aclprofStepInfo;

typedef struct aclprofConfig aclprofConfig;

typedef struct aclprofAicoreEvents aclprofAicoreEvents;

typedef struct aclDataBuffer aclDataBuffer;

#define ACL_DUMP_MAX_FILE_PATH_LENGTH 4096
typedef enum {
    ACL_SUBSCRIBE_ATTRI_THREADID = 0,
    ACL_SUBSCRIBE_ATTRI_NONE
} aclprofSubscribeOpAttri;

typedef enum aclrtTsId {
    ACL_TS_ID_AICORE  = 0,  
    ACL_TS_ID_AIVECTOR = 1, 
    ACL_TS_ID_RESERVED = 2, 
} aclrtTsId;

typedef enum {
    ACL_RT_STREAM_STATE_CREATE_POST = 1,  
    ACL_RT_STREAM_STATE_DESTROY_PRE,  
} aclrtStreamState;

typedef void *aclrtStream;

typedef void (*aclrtStreamStateCallback)(aclrtStream stm, aclrtStreamState state, void *args);

typedef struct acldumpChunk  {
    char       fileName[ACL_DUMP_MAX_FILE_PATH_LENGTH];   
    uint32_t   bufLen;       
    uint32_t   isLastChunk;  
    int64_t    offset;       
    int32_t    flag;         
    uint8_t    dataBuf[0];   
  } acldumpChunk;

typedef enum {
    ACL_SUBSCRIBE_OP = 0,                
    ACL_SUBSCRIBE_SUBGRAPH = 1,          
    ACL_SUBSCRIBE_OP_THREAD = 2,         
    ACL_SUBSCRIBE_NONE = 0xFF,
} aclprofSubscribeOpFlag;

typedef enum {
    OUTPUT_TYPE_DEBUG = 0,  
    OUTPUT_TYPE_RUN = 1,    
    OUTPUT_TYPE_BOTH = 2,   
    OUTPUT_TYPE_MAX         
} acllogOutputLogType;

typedef uintptr_t acllogCallbackHandle;

typedef int32_t (*acllogRecordCallback)(
    void *userData, uint32_t outputLogType, const char *logContent, size_t length);

#define ACL_APP_LOG(level, fmt, ...) aclAppLog(level, __FUNCTION__, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
typedef enum {
    ACL_CANN_ATTR_UNDEFINED = -1,   
    ACL_CANN_ATTR_INF_NAN = 0,      
    ACL_CANN_ATTR_BF16 = 1,         
    ACL_CANN_ATTR_JIT_COMPILE = 2   
} aclCannAttr;

typedef enum aclCANNPackageName {
    ACL_PKG_NAME_CANN, 
    ACL_PKG_NAME_RUNTIME,
    ACL_PKG_NAME_COMPILER,
    ACL_PKG_NAME_HCCL,
    ACL_PKG_NAME_TOOLKIT,
    ACL_PKG_NAME_OPP,
    ACL_PKG_NAME_OPP_KERNEL,
    ACL_PKG_NAME_DRIVER
} aclCANNPackageName;

typedef enum {
    ACL_DT_UNDEFINED = -1,  
    ACL_FLOAT = 0,          
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,      
    ACL_FLOAT8_E5M2 = 35,   
    ACL_FLOAT8_E4M3FN = 36, 
    ACL_FLOAT8_E8M0 = 37,   
    ACL_FLOAT6_E3M2 = 38,   
    ACL_FLOAT6_E2M3 = 39,   
    ACL_FLOAT4_E2M1 = 40,   
    ACL_FLOAT4_E1M2 = 41,   
} aclDataType;

typedef enum {
    ACL_DEVICE_INFO_UNDEFINED = -1,       
    ACL_DEVICE_INFO_AI_CORE_NUM = 0,      
    ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1,  
    ACL_DEVICE_INFO_L2_SIZE = 2           
} aclDeviceInfo;

typedef enum acldumpTensorAddressType {
    ACL_DUMP_ADDR_PTR = 0,
    ACL_DUMP_ADDR_PTR_PTR,
    ACL_DUMP_ADDR_RAW
} acldumpTensorAddressType;

typedef enum acldumpTensorPlacement {
    ACL_DUMP_PLACEMENT_DEVICE = 0,
    ACL_DUMP_PLACEMENT_HOST,
    ACL_DUMP_PLACEMENT_END
} acldumpTensorPlacement;

typedef enum acldumpTensorType {
    ACL_DUMP_TENSOR_INPUT = 0,
    ACL_DUMP_TENSOR_OUTPUT,
    ACL_DUMP_TENSOR_WORKSPACE
} acldumpTensorType;

typedef enum acldumpType {
    AIC_ERR_BRIEF_DUMP = 1,         
    AIC_ERR_NORM_DUMP = 2,          
    AIC_ERR_DETAIL_DUMP = 3,        
    DATA_DUMP = 4,                  
    OVERFLOW_DUMP = 5               
} acldumpType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52, 
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53, 
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54, 
} aclFormat;

typedef enum {
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,   
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL, 
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED,      
} aclmdlRICaptureMode;

typedef enum {
    ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,    
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,      
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, 
} aclmdlRICaptureStatus;

typedef enum {
    ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT = 1,     
} aclmdlRICondHandleFlag;

typedef enum {
    ACL_MODEL_RI_COND_TYPE_IF = 0,      
    ACL_MODEL_RI_COND_TYPE_WHILE = 1,   
    ACL_MODEL_RI_COND_TYPE_SWITCH = 2,  
} aclmdlRICondTaskType;

typedef enum aclmdlRITaskType {
    ACL_MODEL_RI_TASK_DEFAULT,      
    ACL_MODEL_RI_TASK_KERNEL,       
    ACL_MODEL_RI_TASK_EVENT_RECORD, 
    ACL_MODEL_RI_TASK_EVENT_WAIT,   
    ACL_MODEL_RI_TASK_EVENT_RESET,  
    ACL_MODEL_RI_TASK_VALUE_WRITE,  
    ACL_MODEL_RI_TASK_VALUE_WAIT,   
} aclmdlRITaskType;

typedef enum {
    ACL_MEMTYPE_DEVICE = 0,  
    ACL_MEMTYPE_HOST = 1,    
    ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT = 2   
} aclMemType;

typedef enum aclplatformCoreType {
    ACL_PLATFORM_CORE_TYPE_AI_CORE     = 0,
    ACL_PLATFORM_CORE_TYPE_VECTOR_CORE = 1,
} aclplatformCoreType;

typedef enum aclplatformDevInfo {
    ACL_PLATFORM_AICORE_CNT        = 0,
    ACL_PLATFORM_AICORE_UB_SIZE    = 1,
    ACL_PLATFORM_CUBE_CORE_CNT     = 2,
    ACL_PLATFORM_VECTOR_CORE_CNT   = 3,
    ACL_PLATFORM_L2_SIZE           = 4,
    ACL_PLATFORM_MEMORY_SIZE       = 5,
    ACL_PLATFORM_CUBE_FREQ         = 6,
    ACL_PLATFORM_VEC_FREQ          = 7,
    ACL_PLATFORM_BT_SIZE           = 8,
    ACL_PLATFORM_L0_A_SIZE         = 9,
    ACL_PLATFORM_L0_B_SIZE         = 10,
    ACL_PLATFORM_L0_C_SIZE         = 11,
    ACL_PLATFORM_L1_SIZE           = 12,
    ACL_PLATFORM_SOC_VERSION       = 13,
    ACL_PLATFORM_AIC_VERSION       = 14,
    ACL_PLATFORM_NPU_ARCH          = 15,
    ACL_PLATFORM_MEMORY_TYPE       = 16,
} aclplatformDevInfo;

typedef enum aclplatformLocalMemType {
    L0_A = 0,
    L0_B = 1,
    L0_C = 2,
    L1   = 3,
    L2   = 4,
    UB   = 5,
    HBM  = 6
} aclplatformLocalMemType;

typedef enum aclplatformNpuArch {
    DAV_1001 = 1001,
    DAV_2002 = 2002,
    DAV_2102 = 2102,
    DAV_2201 = 2201,
    DAV_3002 = 3002,
    DAV_3003 = 3003,
    DAV_3004 = 3004,
    DAV_3102 = 3102,
    DAV_3113 = 3113,
    DAV_3505 = 3505,
    DAV_3510 = 3510,
    DAV_5102 = 5102,
    DAV_5162 = 5162,
    DAV_RESV = 0xFFFF
} aclplatformNpuArch;

typedef enum {
    ACL_AICORE_ARITHMETIC_UTILIZATION = 0,     
    ACL_AICORE_PIPE_UTILIZATION = 1,           
    ACL_AICORE_MEMORY_BANDWIDTH = 2,           
    ACL_AICORE_L0B_AND_WIDTH = 3,              
    ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,    
    ACL_AICORE_MEMORY_UB = 5,                  
    ACL_AICORE_L2_CACHE = 6,                   
    ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7,   
    ACL_AICORE_MEMORY_ACCESS = 8,              
    ACL_AICORE_NONE = 0xFF
}aclprofAicoreMetrics;

typedef enum {
    ACL_PROF_ARGS_MIN                   = 0,
    ACL_PROF_STORAGE_LIMIT              = 1, 
    ACL_PROF_SYS_HARDWARE_MEM_FREQ      = 3,
    ACL_PROF_LLC_MODE                   = 4,
    ACL_PROF_SYS_IO_FREQ                = 5,
    ACL_PROF_SYS_INTERCONNECTION_FREQ   = 6,
    ACL_PROF_DVPP_FREQ                  = 7,
    ACL_PROF_HOST_SYS                   = 8,
    ACL_PROF_HOST_SYS_USAGE             = 9,
    ACL_PROF_HOST_SYS_USAGE_FREQ        = 10,
    ACL_PROF_LOW_POWER_FREQ             = 11,
    ACL_PROF_SYS_MEM_SERVICEFLOW        = 12,
    ACL_PROF_SYS_CPU_FREQ               = 13,
    ACL_PROF_OPTYPE                     = 14,
    ACL_PROF_PATH                       = 16,
    ACL_PROF_ARGS_MAX                   = 17
} aclprofConfigType;

typedef struct {
    uint32_t type;          
    uint32_t format;        
    uint32_t dataType;      
    uint32_t shapeDim;      
    uint32_t shape[8];      
}aclprofTensor;

typedef struct { 
    uint64_t opNameId;      
    uint64_t opTypeId;
    uint32_t resv;
    uint32_t tensorNum;
    uint32_t kernelType;
    uint32_t blockNums;
    void *stream;           
    aclprofTensor *tensors;
} aclprofTensorInfo;

typedef struct { 
    uint16_t version;
    uint16_t size;
    uint32_t messageType;   
    union Message {
        aclprofTensorInfo *tensorInfo;
    } message;
} aclprofEventAttributes;

typedef enum{
    MESSAGE_TYPE_TENSOR_INFO = 0
}ProfMessageType;

typedef enum{
    ACL_STEP_START = 0, 
    ACL_STEP_END = 1    
} aclprofStepTag;

typedef enum aclRegisterCallbackType {
    ACL_REG_TYPE_ACL_MODEL,           
    ACL_REG_TYPE_ACL_OP_EXECUTOR,     
    ACL_REG_TYPE_ACL_OP_CBLAS,        
    ACL_REG_TYPE_ACL_OP_COMPILER,     
    ACL_REG_TYPE_ACL_TDT_CHANNEL,     
    ACL_REG_TYPE_ACL_TDT_QUEUE,       
    ACL_REG_TYPE_ACL_DVPP,            
    ACL_REG_TYPE_ACL_RETR,            
    ACL_REG_TYPE_OTHER = 0xFFFF,      
} aclRegisterCallbackType;

typedef enum aclrtAtomicOperation {
    ACL_RT_ATOMIC_OPERATION_INTEGER_ADD = 0,       
    ACL_RT_ATOMIC_OPERATION_INTEGER_MIN = 1,       
    ACL_RT_ATOMIC_OPERATION_INTEGER_MAX = 2,       
    ACL_RT_ATOMIC_OPERATION_INTEGER_INCREMENT = 3, 
    ACL_RT_ATOMIC_OPERATION_INTEGER_DECREMENT = 4, 
    ACL_RT_ATOMIC_OPERATION_AND = 5,               
    ACL_RT_ATOMIC_OPERATION_OR = 6,                
    ACL_RT_ATOMIC_OPERATION_XOR = 7,               
    ACL_RT_ATOMIC_OPERATION_EXCHANGE = 8,          
    ACL_RT_ATOMIC_OPERATION_CAS = 9,               
    ACL_RT_ATOMIC_OPERATION_FLOAT_ADD = 10,        
    ACL_RT_ATOMIC_OPERATION_FLOAT_MIN = 11,        
    ACL_RT_ATOMIC_OPERATION_FLOAT_MAX = 12,        

    
    

    ACL_RT_ATOMIC_OPERATION_DMA_ADD = 30,          
    ACL_RT_ATOMIC_OPERATION_DMA_MIN = 31,          
    ACL_RT_ATOMIC_OPERATION_DMA_MAX = 32,          
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_ADD = 40,  
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MIN = 41,  
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_MAX = 42,  
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_CAS = 43,  
    ACL_RT_ATOMIC_OPERATION_SIMD_SCALAR_EXCH = 44, 
} aclrtAtomicOperation;

typedef enum aclrtAtomicOperationCapability {
    ACL_RT_ATOMIC_CAPABILITY_SIGNED = 1U << 0,       
    ACL_RT_ATOMIC_CAPABILITY_UNSIGNED = 1U << 1,     
    ACL_RT_ATOMIC_CAPABILITY_REDUCTION = 1U << 2,    
    ACL_RT_ATOMIC_CAPABILITY_SCALAR8 = 1U << 3,      
    ACL_RT_ATOMIC_CAPABILITY_SCALAR16 = 1U << 4,     
    ACL_RT_ATOMIC_CAPABILITY_SCALAR32 = 1U << 5,     
    ACL_RT_ATOMIC_CAPABILITY_SCALAR64 = 1U << 6,     
    ACL_RT_ATOMIC_CAPABILITY_SCALAR128 = 1U << 7,    
    ACL_RT_ATOMIC_CAPABILITY_VECTOR32X4 = 1U << 8,   
} aclrtAtomicOperationCapability;

typedef enum aclrtBinaryLoadOptionType {
    ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1,       
    ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2,      
    ACL_RT_BINARY_LOAD_OPT_MAGIC = 2,           
    ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3, 
} aclrtBinaryLoadOptionType;

typedef enum aclrtCmoType {
    ACL_RT_CMO_TYPE_PREFETCH = 0,     
    ACL_RT_CMO_TYPE_WRITEBACK,        
    ACL_RT_CMO_TYPE_INVALID,          
    ACL_RT_CMO_TYPE_FLUSH,            
} aclrtCmoType;

typedef enum {
    ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE = 0,      
    ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE = 1,            
    ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE = 2,         
    ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE = 4,        
} aclrtCntNotifyRecordMode;

typedef enum {
    ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE = 0,               
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE = 1,              
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE = 2,             
    ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE = 3,    
    ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE = 4, 
} aclrtCntNotifyWaitMode;

typedef enum { 
    ACL_RT_SWITCH_INT32 = 0, 
    ACL_RT_SWITCH_INT64 = 1, 
} aclrtCompareDataType;

typedef enum { 
    ACL_RT_EQUAL = 0, 
    ACL_RT_NOT_EQUAL, 
    ACL_RT_GREATER, 
    ACL_RT_GREATER_OR_EQUAL, 
    ACL_RT_LESS, 
    ACL_RT_LESS_OR_EQUAL 
} aclrtCondition;

typedef enum { 
    ACL_DEV_ATTR_AICPU_CORE_NUM  = 1, 
    ACL_DEV_ATTR_AICORE_CORE_NUM = 101, 
    ACL_DEV_ATTR_CUBE_CORE_NUM = 102,
    ACL_DEV_ATTR_VECTOR_CORE_NUM = 201,      
    ACL_DEV_ATTR_WARP_SIZE = 202,
    ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE,
    ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE,
    ACL_DEV_ATTR_MAX_GRID_DIM_X = 205,
    ACL_DEV_ATTR_MAX_GRID_DIM_Y = 206,
    ACL_DEV_ATTR_MAX_GRID_DIM_Z = 207,
    ACL_DEV_ATTR_MAX_BLOCK_PER_GRID = 208,
    ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK = 209,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_X = 210,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Y = 211,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z = 212,

    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE = 301,
    ACL_DEV_ATTR_L2_CACHE_SIZE,
    ACL_DEV_ATTR_SMP_ID = 401U,
    ACL_DEV_ATTR_PHY_CHIP_ID = 402U,
    ACL_DEV_ATTR_SUPER_POD_DEVICE_ID = 403U,
    ACL_DEV_ATTR_SUPER_POD_SERVER_ID = 404U,
    ACL_DEV_ATTR_SUPER_POD_ID = 405U, 
    ACL_DEV_ATTR_CUST_OP_PRIVILEGE = 406U,
    ACL_DEV_ATTR_MAINBOARD_ID = 407U,
    ACL_DEV_ATTR_HD_CONNECT_TYPE = 408U,
    ACL_DEV_ATTR_DEVICE_FORM_FACTOR = 409U,
    ACL_DEV_ATTR_IS_VIRTUAL = 501U,

    ACL_DEV_ATTR_NPU_ARCH = 601U,
} aclrtDevAttr;

typedef enum { 
    ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV = 1, 
    ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV      = 21, 
} aclrtDevFeatureType;

typedef enum aclrtDeviceStatus {
    ACL_RT_DEVICE_STATUS_NORMAL = 0,     
    ACL_RT_DEVICE_STATUS_ABNORMAL,       
    ACL_RT_DEVICE_STATUS_END = 0xFFFF,   
} aclrtDeviceStatus;

typedef enum { 
    ACL_RT_DEV_RES_CUBE_CORE = 0,   
    ACL_RT_DEV_RES_VECTOR_CORE,     
} aclrtDevResLimitType;

typedef enum { 
    ACL_RT_ENGINE_TYPE_AIC = 0,  
    ACL_RT_ENGINE_TYPE_AIV,      
} aclrtEngineType;

typedef enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,  
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,   
} aclrtEventRecordedStatus;

typedef enum aclrtEventStatus {
    ACL_EVENT_STATUS_COMPLETE  = 0, 
    ACL_EVENT_STATUS_NOT_READY = 1, 
    ACL_EVENT_STATUS_RESERVED  = 2, 
} aclrtEventStatus;

typedef enum aclrtEventWaitStatus {
    ACL_EVENT_WAIT_STATUS_COMPLETE  = 0,      
    ACL_EVENT_WAIT_STATUS_NOT_READY = 1,      
    ACL_EVENT_WAIT_STATUS_RESERVED  = 0xFFFF, 
} aclrtEventWaitStatus;

typedef enum aclrtFloatOverflowMode {
    ACL_RT_OVERFLOW_MODE_SATURATION = 0, 
    ACL_RT_OVERFLOW_MODE_INFNAN,         
    ACL_RT_OVERFLOW_MODE_UNDEF,
} aclrtFloatOverflowMode;

typedef enum {
    ACL_FUNC_ATTR_KERNEL_TYPE = 1,     
    ACL_FUNC_ATTR_KERNEL_RATIO = 2,    
    ACL_FUNC_ATTR_KERNEL_SCHED_MODE = 3,    
} aclrtFuncAttribute;

typedef enum aclrtGroupAttr
{
    ACL_GROUP_AICORE_INT,     
    ACL_GROUP_AIV_INT,       
    ACL_GROUP_AIC_INT,       
    ACL_GROUP_SDMANUM_INT,   
    ACL_GROUP_ASQNUM_INT,    
    ACL_GROUP_GROUPID_INT    
} aclrtGroupAttr;

typedef enum {
    ACL_RT_HAC_TYPE_STARS = 0,    
    ACL_RT_HAC_TYPE_AICPU,        
    ACL_RT_HAC_TYPE_AIC,          
    ACL_RT_HAC_TYPE_AIV,          
    ACL_RT_HAC_TYPE_PCIEDMA,      
    ACL_RT_HAC_TYPE_RDMA,         
    ACL_RT_HAC_TYPE_SDMA,         
    ACL_RT_HAC_TYPE_DVPP,         
    ACL_RT_HAC_TYPE_UDMA,         
    ACL_RT_HAC_TYPE_CCU           
} aclrtHacType;

typedef enum {
    ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,  
    ACL_RT_HOST_MEM_MAP_SUPPORTED           
} aclrtHostMemMapCapability;

typedef enum {
    ACL_HOST_REGISTER_MAPPED = 0,
    ACL_HOST_REGISTER_IOMEMORY = 0x04,
    ACL_HOST_REGISTER_READONLY = 0x08
}aclrtHostRegisterType;

typedef enum {
    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,    
} aclrtIpcMemAttrType;

typedef enum {
    ACL_KERNEL_TYPE_AICORE = 0,    
    ACL_KERNEL_TYPE_CUBE = 1,      
    ACL_KERNEL_TYPE_VECTOR = 2,    
    ACL_KERNEL_TYPE_MIX = 3,       
    ACL_KERNEL_TYPE_AICPU = 100,   
} aclrtKernelType;

typedef enum aclrtLastErrLevel {
    ACL_RT_THREAD_LEVEL = 0,
} aclrtLastErrLevel;

typedef enum aclrtLaunchKernelAttrId {
    ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1,        
    ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE = 2, 
    ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE = 3,       
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET,       
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,   
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,             
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT,               
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US = 8,        
    ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING = 9,  
} aclrtLaunchKernelAttrId;

typedef enum {
    ACL_RT_MEM_ATTR_RSV = 0,    
    ACL_RT_MEM_ATTR_MODULE_ID,  
    ACL_RT_MEM_ATTR_DEVICE_ID,  
    ACL_RT_MEM_ATTR_VA_FLAG,    
} aclrtMallocAttrType;

typedef enum {
    ACL_RT_MEM_ACCESS_FLAGS_NONE = 0x0,      
    ACL_RT_MEM_ACCESS_FLAGS_READ = 0x1,      
    ACL_RT_MEM_ACCESS_FLAGS_READWRITE = 0x3, 
} aclrtMemAccessFlags;

typedef enum aclrtMemAllocationType {
    ACL_MEM_ALLOCATION_TYPE_PINNED = 0,     
} aclrtMemAllocationType;

typedef enum aclrtMemAttr {
    ACL_DDR_MEM,             
    ACL_HBM_MEM,             
    ACL_DDR_MEM_HUGE,        
    ACL_DDR_MEM_NORMAL,      
    ACL_HBM_MEM_HUGE,        
    ACL_HBM_MEM_NORMAL,      
    ACL_DDR_MEM_P2P_HUGE,    
    ACL_DDR_MEM_P2P_NORMAL,  
    ACL_HBM_MEM_P2P_HUGE,    
    ACL_HBM_MEM_P2P_NORMAL,  
    ACL_HBM_MEM_HUGE1G,      
    ACL_HBM_MEM_P2P_HUGE1G,  

    
    

    ACL_MEM_NORMAL,          
    ACL_MEM_HUGE,            
    ACL_MEM_HUGE1G,          
    ACL_MEM_P2P_NORMAL,      
    ACL_MEM_P2P_HUGE,        
    ACL_MEM_P2P_HUGE1G,      
} aclrtMemAttr;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST,     
    ACL_MEMCPY_HOST_TO_DEVICE,   
    ACL_MEMCPY_DEVICE_TO_HOST,   
    ACL_MEMCPY_DEVICE_TO_DEVICE, 
    ACL_MEMCPY_DEFAULT,          
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,   
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,  
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,  
} aclrtMemcpyKind;

typedef enum aclrtMemGranularityOptions {
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
    ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF,
} aclrtMemGranularityOptions;

typedef enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0,   
    ACL_MEM_HANDLE_TYPE_POSIX = 2,  
} aclrtMemHandleType;

typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,      
    ACL_MEM_LOCATION_TYPE_DEVICE,        
    ACL_MEM_LOCATION_TYPE_UNREGISTERED,  
    ACL_MEM_LOCATION_TYPE_MANAGED,       
    ACL_MEM_LOCATION_TYPE_HOST_NUMA =4,  
} aclrtMemLocationType;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
    ACL_MEM_MALLOC_HUGE1G_ONLY, 
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    ACL_MEM_TYPE_LOW_BAND_WIDTH   = 0x0100U,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH  = 0x1000U,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000U,
} aclrtMemMallocPolicy;

typedef enum aclrtMemManagedAdviseType {
     ACL_MEM_ADVISE_SET_READ_MOSTLY = 0,
     ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
     ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
     ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
     ACL_MEM_ADVISE_SET_ACCESSED_BY,
     ACL_MEM_ADVISE_UNSET_ACCESSED_BY,
} aclrtMemManagedAdviseType;

typedef enum aclrtMemManagedLocationType {
    ACL_MEM_LOCATIONTYPE_INVALID = 0,
    ACL_MEM_LOCATIONTYPE_DEVICE,
    ACL_MEM_LOCATIONTYPE_HOST,
    ACL_MEM_LOCATIONTYPE_HOST_NUMA,
    ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT,
} aclrtMemManagedLocationType;

typedef enum aclrtMemManagedRangeAttribute {
    ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY  = 1,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
    ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID
} aclrtMemManagedRangeAttribute;

typedef enum aclrtMemPoolAttr{
    ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1,
    ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2,
    ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3,
    ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8
} aclrtMemPoolAttr;

typedef enum aclrtMemSharedHandleType {
    ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT = 0x1,  
    ACL_MEM_SHARE_HANDLE_TYPE_FABRIC = 0x2,
} aclrtMemSharedHandleType;

typedef enum { 
    ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK = 0,   
    ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,           
    ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,            
    ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,  
} aclrtRandomNumFuncType;

typedef enum { 
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM   = 10, 
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX   = 11, 
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN   = 12, 
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13,
} aclrtReduceKind;

typedef enum aclrtRunMode {
    ACL_DEVICE,
    ACL_HOST,
} aclrtRunMode;

typedef enum {
    ACL_RT_SNAPSHOT_LOCK_PRE = 0,    
    ACL_RT_SNAPSHOT_BACKUP_PRE,      
    ACL_RT_SNAPSHOT_BACKUP_POST,     
    ACL_RT_SNAPSHOT_RESTORE_PRE,     
    ACL_RT_SNAPSHOT_RESTORE_POST,    
    ACL_RT_SNAPSHOT_UNLOCK_POST,     
} aclrtSnapShotStage;

typedef enum { 
    ACL_STREAM_ATTR_FAILURE_MODE         = 1,
    ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2,
    ACL_STREAM_ATTR_USER_CUSTOM_TAG      = 3, 
    ACL_STREAM_ATTR_CACHE_OP_INFO        = 4, 
    ACL_STREAM_ATTR_PRIORITY             = 5,
} aclrtStreamAttr;

typedef enum {
    ACL_RT_STREAM_WORK_ADDR_PTR = 0, 
    ACL_RT_STREAM_WORK_SIZE, 
    ACL_RT_STREAM_FLAG,
    ACL_RT_STREAM_PRIORITY,
} aclrtStreamConfigAttr;

typedef enum aclrtStreamStatus {
    ACL_STREAM_STATUS_COMPLETE  = 0,      
    ACL_STREAM_STATUS_NOT_READY = 1,      
    ACL_STREAM_STATUS_RESERVED  = 0xFFFF, 
} aclrtStreamStatus;

typedef enum { 
    ACL_RT_UPDATE_RANDOM_TASK = 1, 
    ACL_RT_UPDATE_AIC_AIV_TASK,     
} aclrtUpdateTaskAttrId;

typedef enum { 
    ACL_OPT_DETERMINISTIC = 0,
    ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
    ACL_OPT_STRONG_CONSISTENCY = 2,
} aclSysParamOpt;

typedef enum {
    ACL_TDT_QUEUE_NAME_PTR = 0,  
    ACL_TDT_QUEUE_DEPTH_UINT32   
} acltdtQueueAttrType;

typedef enum {
    ACL_TDT_QUEUE_ROUTE_SRC_UINT32 = 0,  
    ACL_TDT_QUEUE_ROUTE_DST_UINT32,      
    ACL_TDT_QUEUE_ROUTE_STATUS_INT32     
} acltdtQueueRouteParamType;

typedef enum {
    ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM = 0,  
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32,  
    ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32   
} acltdtQueueRouteQueryInfoParamType;

typedef enum {
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC = 0,         
    ACL_TDT_QUEUE_ROUTE_QUERY_DST = 1,         
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST = 2,  
    ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL = 100   
} acltdtQueueRouteQueryMode;

enum acltdtTensorType {
    ACL_TENSOR_DATA_UNDEFINED = -1,
    ACL_TENSOR_DATA_TENSOR,           
    ACL_TENSOR_DATA_END_OF_SEQUENCE,  
    ACL_TENSOR_DATA_ABNORMAL,         
    ACL_TENSOR_DATA_SLICE_TENSOR,     
    ACL_TENSOR_DATA_END_TENSOR        
};
typedef enum acltdtTensorType acltdtTensorType;

typedef enum aclrtDeviceLimit {
    ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE = 0,
    ACL_RT_DEV_LIMIT_SIMT_DVG_WARP_STACK_SIZE = 1,
    ACL_RT_DEV_LIMIT_SIMD_STACK_SIZE = 2,
    ACL_RT_DEV_LIMIT_SIMD_PRINTF_FIFO_SIZE_PER_CORE = 3,
    ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE = 4,
} aclrtDeviceLimit;

#define ACL_PKG_VERSION_MAX_SIZE 128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64
typedef struct aclCANNPackageVersion {
    char version[ACL_PKG_VERSION_MAX_SIZE];               
    char majorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];    
    char minorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];    
    char releaseVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];  
    char patchVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];    
    char reserved[ACL_PKG_VERSION_MAX_SIZE];
} aclCANNPackageVersion;

#define ACL_DUMP_MAX_SHAPE_NUM 25
typedef struct acldumpTensorInfo {
    acldumpTensorType type;
    size_t tensorSize;
    int32_t format;
    int32_t dataType;
    int64_t *tensorAddr;
    acldumpTensorAddressType addrType;
    acldumpTensorPlacement placement;
    uint32_t argsOffset;
    uint32_t shapeNum;
    uint32_t originShapeNum;
    uint64_t shape[ACL_DUMP_MAX_SHAPE_NUM];
    uint64_t originShape[ACL_DUMP_MAX_SHAPE_NUM];
} acldumpTensorInfo;

typedef void *aclmdlRI;

typedef void* aclmdlRICondHandle;

typedef struct tagAclmdlRICondTaskParams {
    aclmdlRICondHandle handle;
    aclmdlRICondTaskType type;
    uint32_t size;
    aclmdlRI *modelRIArray;
} aclmdlRICondTaskParams;

typedef void *aclrtEvent;

typedef struct aclmdlRIEventRecordTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t recordFlag;
} aclmdlRIEventRecordTaskParams;

typedef struct aclmdlRIEventResetTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t resetFlag;
} aclmdlRIEventResetTaskParams;

typedef struct aclmdlRIEventWaitTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t waitFlag;
} aclmdlRIEventWaitTaskParams;

typedef void* aclrtFuncHandle;

typedef struct {
    uint32_t timeoutLow;  
    uint32_t timeoutHigh; 
} aclrtTimeoutUs;

typedef union aclrtLaunchKernelAttrValue {
    uint8_t schemMode;
    uint32_t dynUBufSize;
    aclrtEngineType engineType; 
    uint32_t blockDimOffset; 
    uint8_t isBlockTaskPrefetch; 
    uint8_t isDataDump; 
    uint16_t timeout;
    aclrtTimeoutUs timeoutUs;
    uint32_t rsv[4];
} aclrtLaunchKernelAttrValue;

typedef struct aclrtLaunchKernelAttr {
    aclrtLaunchKernelAttrId id;
    aclrtLaunchKernelAttrValue value;
} aclrtLaunchKernelAttr;

typedef struct aclrtLaunchKernelCfg {
    aclrtLaunchKernelAttr *attrs;
    size_t numAttrs;
} aclrtLaunchKernelCfg;

typedef struct aclmdlRIKernelTaskParams {
    aclrtFuncHandle funcHandle;
    aclrtLaunchKernelCfg* cfg;
    void* args;
    uint32_t isHostArgs;
    size_t argsSize;
    uint32_t numBlocks;
    uint32_t rsv[10];
} aclmdlRIKernelTaskParams;

typedef struct aclmdlRIValueWaitTaskParams {
    void *devAddr;
    uint64_t value;
    uint32_t flag;
} aclmdlRIValueWaitTaskParams;

typedef struct aclmdlRIValueWriteTaskParams {
    void *devAddr;
    uint64_t value;
} aclmdlRIValueWriteTaskParams;

typedef void *aclrtTaskGrp;

typedef struct aclmdlRITaskParams {
    aclmdlRITaskType type;
    uint32_t rsv0[3];
    aclrtTaskGrp taskGrp;
    void* opInfoPtr;
    size_t opInfoSize;
    uint8_t rsv1[32];

    union {
        uint8_t rsv2[128]; 
        struct aclmdlRIKernelTaskParams kernelTaskParams;
        struct aclmdlRIEventRecordTaskParams eventRecordTaskParams;
    struct aclmdlRIEventWaitTaskParams eventWaitTaskParams;
    struct aclmdlRIEventResetTaskParams eventResetTaskParams;
    struct aclmdlRIValueWriteTaskParams valueWriteTaskParams;
    struct aclmdlRIValueWaitTaskParams valueWaitTaskParams;
    };
} aclmdlRITaskParams;

typedef struct { 
    void *binHandle;      
    void *funcEntryAddr;  
    void *blockDimAddr;   
    uint32_t rsv[4];      
} aclrtAicAivTaskUpdateAttr;

typedef struct { 
    aclrtCmoType cmoType;  
    uint32_t barrierId;  
} aclrtBarrierCmoInfo;

typedef struct { 
    size_t barrierNum;   
    aclrtBarrierCmoInfo cmoInfo[ACL_RT_CMO_MAX_BARRIER_NUM]; 
} aclrtBarrierTaskInfo;

typedef union aclrtBinaryLoadOptionValue {
    uint32_t isLazyLoad;
    uint32_t magic;
    int32_t cpuKernelMode;
    uint32_t rsv[4];
} aclrtBinaryLoadOptionValue;

typedef struct {
    aclrtBinaryLoadOptionType type;
    aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;

typedef struct aclrtBinaryLoadOptions {
    aclrtBinaryLoadOption *options;
    size_t numOpt;
} aclrtBinaryLoadOptions;

typedef struct {
    aclrtCntNotifyRecordMode mode;     
    uint32_t value;                    
} aclrtCntNotifyRecordInfo;

typedef struct {
    aclrtCntNotifyWaitMode mode;  
    uint32_t value;
    uint32_t timeout;             
    uint8_t  isClear;             
    uint8_t rev[3];
} aclrtCntNotifyWaitInfo;

typedef struct {
    uint8_t isAddr;
    uint8_t valueOrAddr[8];
    uint8_t size;
    uint8_t rsv[6];
} aclrtRandomParaInfo;

typedef struct {
    aclrtRandomParaInfo dropoutRation;
} aclrtDropoutBitmaskInfo;

#define ACL_IPC_EVENT_HANDLE_SIZE 64U
typedef struct aclrtIpcEventHandle {
    char reserved[ACL_IPC_EVENT_HANDLE_SIZE];
} aclrtIpcEventHandle;

typedef union {
    uint16_t moduleId; 
    uint32_t deviceId;  
    uint32_t vaFlag;
    uint8_t rsv[8]; 
} aclrtMallocAttrValue;

typedef struct {
    aclrtMallocAttrType attr;   
    aclrtMallocAttrValue value;  
} aclrtMallocAttribute;

typedef struct {
    aclrtMallocAttribute* attrs; 
    size_t numAttrs;     
} aclrtMallocConfig;

typedef struct aclrtMemLocation {
    uint32_t id;                  
    aclrtMemLocationType type;    
} aclrtMemLocation;

typedef struct {
    aclrtMemAccessFlags flags;   
    aclrtMemLocation location;   
    uint8_t rsv[12];             
} aclrtMemAccessDesc;

typedef struct {
    aclrtMemLocation dstLoc;   
    aclrtMemLocation srcLoc;   
    uint8_t rsv[16];           
} aclrtMemcpyBatchAttr;

typedef struct {
    aclrtMemManagedLocationType type;  
    int id;                            
} aclrtMemManagedLocation;

typedef struct {
    aclrtMemAllocationType allocType;
    aclrtMemHandleType handleType;
    aclrtMemLocation location;
    size_t maxSize;
    unsigned char reserved[32];
} aclrtMemPoolProps;

#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14
typedef struct aclrtMemUceInfo {
    void* addr;
    size_t len;
    size_t reserved[UCE_INFO_RESERVED_SIZE];
} aclrtMemUceInfo;

typedef struct aclrtMemUsageInfo {
    char name[32];          
    uint64_t curMemSize;    
    uint64_t memPeakSize;   
    size_t reserved[8];     
} aclrtMemUsageInfo;

typedef struct { 
    aclrtRandomParaInfo mean;
    aclrtRandomParaInfo stddev;  
} aclrtNormalDisInfo;

typedef struct aclrtPhysicalMemProp {
    aclrtMemHandleType handleType;
    aclrtMemAllocationType allocationType;
    aclrtMemAttr memAttr;
    aclrtMemLocation location;
    uint64_t reserve; 
} aclrtPhysicalMemProp;

typedef struct {
    uint32_t addrOffset;
    uint32_t dataOffset;
} aclrtPlaceHolderInfo;

typedef struct aclrtPtrAttributes {
    aclrtMemLocation location; 
    uint32_t pageSize;   
    uint32_t rsv[4];    
} aclrtPtrAttributes;

typedef struct { 
    aclrtRandomParaInfo min;   
    aclrtRandomParaInfo max;            
} aclrtUniformDisInfo;

typedef struct { 
    aclrtRandomNumFuncType funcType;
    union { 
        aclrtDropoutBitmaskInfo dropoutBitmaskInfo; 
        aclrtUniformDisInfo uniformDisInfo;
        aclrtNormalDisInfo normalDisInfo; 
    } paramInfo; 
} aclrtRandomNumFuncParaInfo;

typedef struct { 
    aclDataType dataType; 
    aclrtRandomNumFuncParaInfo randomNumFuncParaInfo;
    void *randomParaAddr;  
    void *randomResultAddr; 
    void *randomCounterAddr;
    aclrtRandomParaInfo randomSeed; 
    aclrtRandomParaInfo randomNum; 
    uint8_t rsv[8]; 
} aclrtRandomNumTaskInfo;

typedef struct { 
    void *srcAddr;    
    size_t size;      
    uint32_t rsv[4];  
} aclrtRandomTaskUpdateAttr;

typedef struct {
    uint32_t sdid; 
    int32_t *pid;  
    size_t num; 
} aclrtServerPid;

typedef struct aclrtSnapShotBackupArgs {
    uint32_t backupFlags;
    char reserved[60];
} aclrtSnapShotBackupArgs;

typedef struct aclrtSnapShotRestoreArgs {
    uint32_t restoreFlags;
    char reserved[60];
} aclrtSnapShotRestoreArgs;

typedef union {
    uint64_t failureMode;
    uint32_t overflowSwitch; 
    uint32_t userCustomTag; 
    uint32_t cacheOpInfoSwitch;
    uint32_t streamPriority;
    uint32_t reserve[4];
} aclrtStreamAttrValue;

typedef union { 
    aclrtRandomTaskUpdateAttr randomTaskAttr; 
    aclrtAicAivTaskUpdateAttr aicAivTaskAttr; 
} aclrtUpdateTaskAttrVal;

typedef struct { 
    aclrtUpdateTaskAttrId id;    
    aclrtUpdateTaskAttrVal val;  
} aclrtTaskUpdateInfo;

typedef struct aclrtUtilizationInfo {
    int32_t cubeUtilization;   
    int32_t vectorUtilization; 
    int32_t aicpuUtilization;  
    int32_t memoryUtilization; 
    aclrtUtilizationExtendInfo *utilizationExtend; 
} aclrtUtilizationInfo;

typedef struct aclrtUuid {
    char  bytes[16];    
} aclrtUuid;

typedef struct dim3 {
    uint32_t x;
    uint32_t y;
    uint32_t z;
#ifdef __cplusplus
#if __cplusplus >= 201103L
    constexpr dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
#else
    dim3(uint32_t vx = 1, uint32_t vy = 1, uint32_t vz = 1) : x(vx), y(vy), z(vz) {}
#endif
#endif 
} dim3;

typedef uint16_t aclFloat16;

typedef void *aclmdlRITask;

typedef void *aclrtAllocator;

typedef void *aclrtAllocatorAddr;

typedef void *aclrtAllocatorBlock;

typedef void* aclrtArgsHandle;

typedef void* aclrtBinHandle;

typedef void *aclrtCntNotify;

typedef void *aclrtContext;

typedef void* aclrtDrvMemHandle;

typedef void *aclrtLabel;

typedef void *aclrtLabelList;

typedef void *aclrtMbuf;

typedef void *aclrtMemPool;

typedef void *aclrtNotify;

typedef void* aclrtParamHandle;

typedef void *acltdtBuf;

typedef aclError (*aclInitCallbackFunc)(const char*configStr, size_t len, void *userData);

typedef aclError (*aclFinalizeCallbackFunc)(void*userData);

typedef enum {
   ACL_RT_DEVICE_STATE_SET_PRE = 0, 
   ACL_RT_DEVICE_STATE_SET_POST,  
   ACL_RT_DEVICE_STATE_RESET_PRE,  
   ACL_RT_DEVICE_STATE_RESET_POST, 
} aclrtDeviceState;

typedef void (*aclrtDeviceStateCallback)(int32_t devId, aclrtDeviceState state, void*args);

typedef struct aclrtMemFabricHandle { 
   uint8_t data[128];
} aclrtMemFabricHandle;

typedef void *(*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);

typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);

typedef void *(*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size, aclrtAllocatorAddr addr);

typedef void *(*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

typedef void (*aclrtCallback)(void*userData);

typedef enum aclrtCallbackBlockType {
   ACL_CALLBACK_NO_BLOCK,  
   ACL_CALLBACK_BLOCK,  
} aclrtCallbackBlockType;

typedef void (*aclrtHostFunc)(void*args);

typedef void (*aclrtExceptionInfoCallback)(aclrtExceptionInfo*exceptionInfo);

typedef enum { 
   ACL_RT_NO_ERROR = 0,  
   ACL_RT_ERROR_MEMORY = 1,  
   ACL_RT_ERROR_L2 = 2,  
   ACL_RT_ERROR_AICORE = 3,  
   ACL_RT_ERROR_LINK = 4,  
   ACL_RT_ERROR_L3_PORT = 5,  
   ACL_RT_ERROR_OTHERS = 0xFFFF, 
} aclrtErrorType;

typedef enum aclrtAicoreErrorType { 
   ACL_RT_AICORE_ERROR_UNKNOWN,  
   ACL_RT_AICORE_ERROR_SW,  
   ACL_RT_AICORE_ERROR_HW_LOCAL, 
} aclrtAicoreErrorType;

typedef struct {
   size_t arraySize;  
   aclrtMemUceInfo memUceInfoArray[ACL_RT_MEM_UCE_INFO_MAX_NUM];  
} aclrtMemUceInfoArray;

typedef union aclrtErrorInfoDetail { 
   aclrtMemUceInfoArray uceInfo;  
   aclrtAicoreErrorType aicoreErrType;  
} aclrtErrorInfoDetail;

typedef struct aclrtErrorInfo { 
   uint8_t tryRepair;  
   uint8_t hasDetail;  
   uint8_t reserved[2];  
   aclrtErrorType errorType;  
   aclrtErrorInfoDetail detail; 
} aclrtErrorInfo;

typedef enum {
   ACL_RT_DEVICE_TASK_ABORT_PRE = 0,
   ACL_RT_DEVICE_TASK_ABORT_POST,
} aclrtDeviceTaskAbortStage;

typedef int32_t (*aclrtDeviceTaskAbortCallback)(int32_t deviceId, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void*args);

typedef void (*aclrtOpExceptionCallback)(aclrtExceptionInfo*exceptionInfo, void *userData);

typedef enum {
   ACL_TDT_NORMAL_MEM = 0,
   ACL_TDT_DVPP_MEM
} acltdtAllocBufType;

typedef uint32_t (*aclrtSnapShotCallBack)(int32_t deviceId, void* args);

typedef enum {
   ACL_DEBUG = 0,
   ACL_INFO = 1,
   ACL_WARNING = 2,
   ACL_ERROR = 3,
} aclLogLevel;

ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* NPUSIM_ACL_ACL_BASE_H_ */
