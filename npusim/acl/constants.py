"""Enum constants of the ACL headers, with their C names and values (acl_rt.h, acl_base_rt.h)."""
from ..runtime.api_event import (ACL_EVENT_RECORDED_STATUS_COMPLETE,  # noqa: F401
                                 ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_STATUS_COMPLETE,
                                 ACL_EVENT_STATUS_NOT_READY, ACL_NOTIFY_DEFAULT,
                                 ACL_NOTIFY_DEVICE_USE_ONLY)
from ..runtime.api_memory import (ACL_MEM_MALLOC_HUGE1G_ONLY,  # noqa: F401
                                  ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, ACL_MEM_MALLOC_HUGE_FIRST,
                                  ACL_MEM_MALLOC_HUGE_FIRST_P2P, ACL_MEM_MALLOC_HUGE_ONLY,
                                  ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_NORMAL_ONLY,
                                  ACL_MEM_MALLOC_NORMAL_ONLY_P2P, ACL_MEMCPY_DEFAULT,
                                  ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
                                  ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE,
                                  ACL_MEMCPY_HOST_TO_HOST)
from ..runtime.api_stream import (ACL_CONTINUE_ON_FAILURE, ACL_STOP_ON_FAILURE,  # noqa: F401
                                  ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY,
                                  ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE,
                                  ACL_STREAM_PERSISTENT, ACL_STREAM_STATUS_COMPLETE,
                                  ACL_STREAM_STATUS_NOT_READY)
from ..runtime.event import (ACL_EVENT_CAPTURE_STREAM_PROGRESS,  # noqa: F401
                             ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL, ACL_EVENT_IPC,
                             ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE)

ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0
ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1
ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2
ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0
ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE = 1
ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED = 2
ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY = 0x0
ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE = 0x1
from ..runtime.tasks import (ACL_MODEL_RI_TASK_DEFAULT, ACL_MODEL_RI_TASK_EVENT_RECORD,  # noqa
                             ACL_MODEL_RI_TASK_EVENT_RESET, ACL_MODEL_RI_TASK_EVENT_WAIT,
                             ACL_MODEL_RI_TASK_KERNEL, ACL_MODEL_RI_TASK_VALUE_WAIT,
                             ACL_MODEL_RI_TASK_VALUE_WRITE)
from ..runtime.api_kernel import (ACL_ERROR_INVALID_EXCEPTION_INFO,  # noqa: F401,E402
                                  ACL_FUNC_ATTR_KERNEL_RATIO, ACL_FUNC_ATTR_KERNEL_SCHED_MODE,
                                  ACL_FUNC_ATTR_KERNEL_TYPE, ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE,
                                  ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD,
                                  ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC, ACL_RT_BINARY_LOAD_OPT_MAGIC,
                                  ACL_RT_BINARY_MAGIC_ELF_AICORE, ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE,
                                  ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE, ACL_RT_ENGINE_TYPE_AIC,
                                  ACL_RT_ENGINE_TYPE_AIV, ACL_RT_EXCEPTION_AICORE,
                                  ACL_RT_EXCEPTION_AICPU,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_LOCAL_MEMORY_SIZE,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT,
                                  ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US)
from ..runtime.cond import (ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT,  # noqa: F401,E402
                            ACL_MODEL_RI_COND_TYPE_IF, ACL_MODEL_RI_COND_TYPE_SWITCH,
                            ACL_MODEL_RI_COND_TYPE_WHILE)
from ..runtime.api_event import (ACL_EVENT_RECORD_DEFAULT,  # noqa: F401,E402
                                 ACL_EVENT_RECORD_EXTERNAL, ACL_EVENT_WAIT_DEFAULT,
                                 ACL_EVENT_WAIT_EXTERNAL, ACL_EVENT_WAIT_STATUS_COMPLETE,
                                 ACL_EVENT_WAIT_STATUS_NOT_READY)
from ..runtime.api_memory import (ACL_STREAM_WAIT_VALUE_AND,  # noqa: F401,E402
                                  ACL_STREAM_WAIT_VALUE_EQ, ACL_STREAM_WAIT_VALUE_GEQ,
                                  ACL_STREAM_WAIT_VALUE_NOR)
from ..runtime.api_stream import (ACL_STREAM_ATTR_CACHE_OP_INFO,  # noqa: F401,E402
                                  ACL_STREAM_ATTR_FAILURE_MODE,
                                  ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, ACL_STREAM_ATTR_PRIORITY,
                                  ACL_STREAM_ATTR_USER_CUSTOM_TAG)
from ..runtime.api_memory import (ACL_DDR_MEM, ACL_DDR_MEM_HUGE,  # noqa: F401,E402
                                  ACL_DDR_MEM_NORMAL, ACL_DDR_MEM_P2P_HUGE,
                                  ACL_DDR_MEM_P2P_NORMAL, ACL_HBM_MEM, ACL_HBM_MEM_HUGE,
                                  ACL_HBM_MEM_HUGE1G, ACL_HBM_MEM_NORMAL, ACL_HBM_MEM_P2P_HUGE,
                                  ACL_HBM_MEM_P2P_HUGE1G, ACL_HBM_MEM_P2P_NORMAL, ACL_MEM_HUGE,
                                  ACL_MEM_HUGE1G, ACL_MEM_NORMAL, ACL_MEM_P2P_HUGE,
                                  ACL_MEM_P2P_NORMAL)
from ..runtime.api_callback import (ACL_CALLBACK_BLOCK, ACL_CALLBACK_NO_BLOCK,  # noqa: F401,E402
                                    ACL_DEVICE, ACL_HOST)

# the ACL version aclrtGetVersion reports (include/external/acl/acl_rt.h:25-27)
ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION = 1, 17, 0
from ..runtime.api_memory import (ACL_RT_MEM_TYPE_DEV, ACL_RT_MEM_TYPE_DVPP,  # noqa: F401,E402
                                  ACL_RT_MEM_TYPE_RSVD)
from ..runtime.api_build import (ACL_MODEL_STREAM_FLAG_DEFAULT,  # noqa: F401,E402
                                 ACL_MODEL_STREAM_FLAG_HEAD, ACL_RT_EQUAL, ACL_RT_GREATER,
                                 ACL_RT_GREATER_OR_EQUAL, ACL_RT_LESS, ACL_RT_LESS_OR_EQUAL,
                                 ACL_RT_NOT_EQUAL, ACL_RT_SWITCH_INT32, ACL_RT_SWITCH_INT64)
from ..runtime.stream import (ACL_RT_STREAM_STATE_CREATE_POST,  # noqa: F401,E402
                              ACL_RT_STREAM_STATE_DESTROY_PRE)
from ..runtime.api_memcopy import (ACL_MEM_LOCATION_TYPE_DEVICE,  # noqa: F401,E402
                                   ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_HOST_NUMA,
                                   ACL_MEM_LOCATION_TYPE_MANAGED,
                                   ACL_MEM_LOCATION_TYPE_UNREGISTERED,
                                   ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                                   ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
from ..runtime.api_exception import (ACL_RT_CONTEXT_LEVEL, ACL_RT_ERROR_MEMORY,  # noqa: F401,E402
                                     ACL_RT_ERROR_OTHERS, ACL_RT_NO_ERROR, ACL_RT_THREAD_LEVEL)
from ..runtime.api_device import (ACL_RT_DEV_RES_CUBE_CORE,  # noqa: F401,E402
                                  ACL_RT_DEV_RES_VECTOR_CORE, ACL_RT_DEVICE_STATUS_ABNORMAL,
                                  ACL_RT_DEVICE_STATUS_NORMAL)
from ..runtime.api_device import (ACL_DEV_FEATURE_NOT_SUPPORT,  # noqa: F401,E402
                                  ACL_DEV_FEATURE_SUPPORT,
                                  ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV,
                                  ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV)
from ..runtime.api_device import (ACL_DEV_ATTR_AICPU_CORE_NUM,  # noqa: F401,E402
                                  ACL_DEV_ATTR_AICORE_CORE_NUM, ACL_DEV_ATTR_CUBE_CORE_NUM,
                                  ACL_DEV_ATTR_CUST_OP_PRIVILEGE, ACL_DEV_ATTR_DEVICE_FORM_FACTOR,
                                  ACL_DEV_ATTR_HD_CONNECT_TYPE, ACL_DEV_ATTR_IS_VIRTUAL,
                                  ACL_DEV_ATTR_L2_CACHE_SIZE,
                                  ACL_DEV_ATTR_LOCAL_MEM_PER_VECTOR_CORE,
                                  ACL_DEV_ATTR_MAINBOARD_ID, ACL_DEV_ATTR_MAX_BLOCK_DIM_X,
                                  ACL_DEV_ATTR_MAX_BLOCK_DIM_Y, ACL_DEV_ATTR_MAX_BLOCK_DIM_Z,
                                  ACL_DEV_ATTR_MAX_BLOCK_PER_GRID, ACL_DEV_ATTR_MAX_GRID_DIM_X,
                                  ACL_DEV_ATTR_MAX_GRID_DIM_Y, ACL_DEV_ATTR_MAX_GRID_DIM_Z,
                                  ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE,
                                  ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK, ACL_DEV_ATTR_NPU_ARCH,
                                  ACL_DEV_ATTR_PHY_CHIP_ID, ACL_DEV_ATTR_SMP_ID,
                                  ACL_DEV_ATTR_SUPER_POD_DEVICE_ID, ACL_DEV_ATTR_SUPER_POD_ID,
                                  ACL_DEV_ATTR_SUPER_POD_SERVER_ID,
                                  ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
                                  ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE, ACL_DEV_ATTR_VECTOR_CORE_NUM,
                                  ACL_DEV_ATTR_WARP_SIZE)
from ..runtime.api_version import (ACL_CANN_ATTR_BF16, ACL_CANN_ATTR_INF_NAN,  # noqa: F401,E402
                                   ACL_CANN_ATTR_JIT_COMPILE, ACL_CANN_ATTR_UNDEFINED)
from ..runtime.api_overflow import (ACL_RT_OVERFLOW_MODE_INFNAN,  # noqa: F401,E402
                                    ACL_RT_OVERFLOW_MODE_SATURATION,
                                    ACL_RT_OVERFLOW_MODE_UNDEF)
from ..runtime.api_reduce import (ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_INT4,  # noqa: F401,E402
                                  ACL_INT8, ACL_INT16, ACL_INT32, ACL_UINT8, ACL_UINT16,
                                  ACL_UINT32, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL,
                                  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
                                  ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN,
                                  ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM)
from ..runtime.api_random import (ACL_INT64, ACL_UINT64,  # noqa: F401,E402
                                  ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
                                  ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS,
                                  ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
                                  ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS,
                                  ACL_RT_UPDATE_AIC_AIV_TASK, ACL_RT_UPDATE_RANDOM_TASK)

# chapters 02 / 04 / 23 / 24 (issue 36 item 3): registration types, device states, data types,
# device info types and log levels with their C values
from ..runtime.api_lifecycle import (ACL_REG_TYPE_ACL_DVPP,  # noqa: F401,E402
                                     ACL_REG_TYPE_ACL_MODEL, ACL_REG_TYPE_ACL_OP_CBLAS,
                                     ACL_REG_TYPE_ACL_OP_COMPILER, ACL_REG_TYPE_ACL_OP_EXECUTOR,
                                     ACL_REG_TYPE_ACL_RETR, ACL_REG_TYPE_ACL_TDT_CHANNEL,
                                     ACL_REG_TYPE_ACL_TDT_QUEUE, ACL_REG_TYPE_OTHER)
from ..runtime.api_devstate import (ACL_RT_DEVICE_STATE_RESET_POST,  # noqa: F401,E402
                                    ACL_RT_DEVICE_STATE_RESET_PRE,
                                    ACL_RT_DEVICE_STATE_SET_POST, ACL_RT_DEVICE_STATE_SET_PRE)
from ..runtime.api_util import (ACL_BOOL, ACL_COMPLEX32, ACL_COMPLEX64,  # noqa: F401,E402
                                ACL_COMPLEX128, ACL_DEBUG, ACL_DEVICE_INFO_AI_CORE_NUM,
                                ACL_DEVICE_INFO_L2_SIZE, ACL_DEVICE_INFO_UNDEFINED,
                                ACL_DEVICE_INFO_VECTOR_CORE_NUM, ACL_DOUBLE, ACL_DT_UNDEFINED,
                                ACL_ERROR, ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2, ACL_FLOAT8_E8M0,
                                ACL_HIFLOAT8, ACL_INFO, ACL_STRING, ACL_UINT1, ACL_WARNING)
from ..runtime.api_cntnotify import (ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE,  # noqa: F401,E402
                                     ACL_RT_CNT_NOTIFY_RECORD_BIT_AND_MODE,
                                     ACL_RT_CNT_NOTIFY_RECORD_BIT_OR_MODE,
                                     ACL_RT_CNT_NOTIFY_RECORD_SET_VALUE_MODE,
                                     ACL_RT_CNT_NOTIFY_WAIT_BIGGER_MODE,
                                     ACL_RT_CNT_NOTIFY_WAIT_BIGGER_OR_EQUAL_MODE,
                                     ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE,
                                     ACL_RT_CNT_NOTIFY_WAIT_EQUAL_WITH_BITMASK_MODE,
                                     ACL_RT_CNT_NOTIFY_WAIT_LESS_MODE)
# chapter 11 memory: virtual memory, managed memory, pools (runtime/api_vmm.py, api_managed.py,
# api_mempool.py)
from ..runtime.api_vmm import (ACL_MEM_ALLOCATION_TYPE_PINNED,  # noqa: F401,E402
                               ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_HANDLE_TYPE_POSIX,
                               ACL_MEM_LOCATION_TYPE_HOST_NUMA, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                               ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, ACL_RT_MEM_ACCESS_FLAGS_NONE,
                               ACL_RT_MEM_ACCESS_FLAGS_READ, ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
                               ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                               ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
from ..runtime.api_managed import (ACL_MEM_ADVISE_SET_ACCESSED_BY,  # noqa: F401,E402
                                   ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
                                   ACL_MEM_ADVISE_SET_READ_MOSTLY,
                                   ACL_MEM_ADVISE_UNSET_ACCESSED_BY,
                                   ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
                                   ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
                                   ACL_MEM_LOCATIONTYPE_DEVICE, ACL_MEM_LOCATIONTYPE_HOST,
                                   ACL_MEM_LOCATIONTYPE_HOST_NUMA,
                                   ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT,
                                   ACL_MEM_LOCATIONTYPE_INVALID,
                                   ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                                   ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
                                   ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
                                   ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                   ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                   ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                                   ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                   ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, ACL_RT_MEM_ATTACH_GLOBAL)
from ..runtime.api_mempool import (ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD,  # noqa: F401,E402
                                   ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT,
                                   ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH,
                                   ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT,
                                   ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH,
                                   ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                                   ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC,
                                   ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES)
