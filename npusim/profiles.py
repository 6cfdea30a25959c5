"""Chip profiles: the per-chip numbers the simulator's behaviour depends on, defined once.

Why profiles: the real runtime reads a per-chip ``DevProperties`` table and feature set
(``src/runtime/config/<chip>/dev_info_reg.cc``) and changes observable behaviour with it -- SQ
depths, stream budgets, whether capture uses software SQs (and so whether cond tasks and model
update exist), how many NOPs pad a task group. A simulated program must see the same limits, and
a user must be able to ask "does this graph fit on a 950?" by switching one name.

Sources (``hicann/runtime``): ``config/910_B_93`` (one table for both Atlas A2 = 910B and A3 =
910_93), ``config/950`` (Ascend 950, the v200 runtime), ``config/dc`` (Atlas inference = 310P);
``src/platform/platform_config/**/<SoC>.ini`` for real SoC core counts and memory sizes; event /
notify budgets from ``docs/zh/api_ref/07_event_management.md`` and ``08_notify_management.md``;
capture constants from ``spec/aclgraph.md`` §11. Timing constants are a cost model, not
measurements: their sources are ``spec/landscape.md`` §2.9 where a figure exists, otherwise the
rationale written next to each.

Everything is a frozen dataclass, so a profile can be shared between devices and threads;
``Profile.with_timing(...)`` and ``dataclasses.replace`` make modified copies.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

GiB = 1 << 30


@dataclass(frozen=True)
class Timing:
    """Every cost the simulator charges, in ns (ints); bandwidths in bytes per ns.

    Defaults are the Atlas A2 (910B) values. "host_*" costs advance the calling thread's
    simulated clock inside the API call; the others are device (engine) time.
    """
    # ---- host side: cost of the API call itself (not of the work it submits)
    host_api_ns: int = 300
    """Cheap bookkeeping calls (query status, get info, create/destroy a handle): a few hundred ns
    of host CPU, no driver round trip."""
    host_kernel_launch_ns: int = 5_000
    """Eager ``aclrtLaunchKernel*``: args copy + SQE build + doorbell. landscape §2.9: per-kernel
    launch ≈ 4–6 µs (CUDA blog measurement), typical submission 3–5 µs per op."""
    host_memcpy_async_ns: int = 4_000
    """``aclrtMemcpyAsync`` submit (SDMA SQE build + doorbell); a bit under a kernel launch because
    there is no args buffer to stage (§2.9 3–5 µs per op)."""
    host_memset_async_ns: int = 3_500
    """``aclrtMemsetAsync`` submit; like a memcpy with no source."""
    host_event_record_ns: int = 2_000
    """``aclrtRecordEvent`` submit: event id allocation on first record + one SQE + doorbell."""
    host_event_wait_ns: int = 2_000
    """``aclrtStreamWaitEvent`` submit: one wait SQE + doorbell."""
    host_event_reset_ns: int = 1_500
    """``aclrtResetEvent`` submit."""
    host_sync_ns: int = 10_000
    """Fixed cost of a stream/event/device synchronize (checks, the poll that sees the work
    done, error fetch, return), paid after the later of the call and the moment the host sees
    the work end — on top of the device time waited, never overlapping it (the runtime polls
    the SQ head until the last task is done: ``stream.cc`` ``StarsWaitForTask``). §2.9:
    vllm-ascend sees an ≈85 µs host sync bubble per step; that includes scheduler work, so the
    call itself is taken as ~10 µs."""
    host_malloc_ns: int = 10_000
    """``aclrtMalloc``/``aclrtMallocHost``: a driver call (mmap of device/pinned pages)."""
    host_free_ns: int = 5_000
    """``aclrtFree``/``aclrtFreeHost``."""
    host_capture_task_ns: int = 1_500
    """Any async call on a capturing stream: the task is written into the capture stream's SQE
    memory with no doorbell and no driver submit, so much cheaper than the eager launch."""
    host_capture_begin_ns: int = 20_000
    """``aclmdlRICaptureBegin``: model id from the driver, a capture stream created and bound."""
    host_capture_end_ns: int = 50_000
    """``aclmdlRICaptureEnd``: join-back validation, notifies, event-reset tasks, (classic mode)
    EndGraph + LoadComplete (spec/aclgraph.md §1.3)."""
    host_model_execute_ns: int = 10_000
    """``aclmdlRIExecuteAsync`` per replay once the model's SQs exist. §2.9: ~10 µs for a whole
    replay vs 20–200 µs per op uncaptured (Isaac Lab / Warp docs)."""
    host_model_first_execute_per_stream_ns: int = 20_000
    """SW-SQ only: the first execution takes SQ/CQ pairs from the device pool and builds the
    persistent tasks of each model stream (spec/aclgraph.md §6.3); charged per model stream."""
    host_model_update_ns: int = 50_000
    """``aclmdlRIUpdate``: release and rebuild every stream's SQ/CQ and persistent tasks (§1.9)."""
    host_task_update_ns: int = 7_000
    """``aclmdlRITaskSetParams``/``TaskDisable`` and each task of a task-update group: the launch
    work plus rebuilding the captured SQE and queueing its copy (SQE_UPDATE). The dev guide
    (04-03_task_update.md) says updating a task costs more than issuing it on its own, so this
    is an eager launch (5 µs) plus 2 µs."""
    doorbell_ns: int = 1_000
    """Host MMIO write of the SQ tail until the scheduler (STARS/HWTS) sees new SQEs: one posted
    PCIe write plus the scheduler's pick-up, ~1 µs."""
    # ---- device side: per-SQE scheduling
    sqe_dispatch_eager_ns: int = 1_500
    """Per SQE on an eager stream: fetch after a doorbell, dispatch, CQE write-back for completion
    tracking. Graph mode avoids most of this, which is where ACL Graph's speed-ups come from
    (§2.9: 70 -> 120 tok/s on llama.cpp CANN; uncaptured batches ≈7.5× slower in vllm-ascend)."""
    sqe_dispatch_graph_ns: int = 300
    """Per SQE on a model stream: SQEs are resident and prefetched in batches (taskPrefetchCount),
    no per-task doorbell or CQE."""
    cqe_report_ns: int = 1_000
    """Device -> host completion report: a synchronize that waits sees the work end this long
    after it (CQE written, SQ head visible to the host's poll)."""
    nop_ns: int = 50
    """A NOP SQE (task-group prefetch padding): fetched and retired, nothing executed."""
    # ---- kernels
    kernel_default_ns: int = 5_000
    """Body time of one wave of blocks when the kernel declares no cost of its own."""
    kernel_per_block_ns: int = 50
    """Block dispatch cost per block (the block scheduler hands blocks to cores one by one)."""
    aic_flops_per_ns: int = 12_800
    """Roofline: FP16 cube throughput of one AI Core (~320 TFLOPS over 25 cores on 910B, public
    figure; [chosen] for the other profiles by the device scaling)."""
    aiv_flops_per_ns: int = 800
    """Roofline: vector throughput of one AI Vector core (~40 TFLOPS FP16 over 50 cores). [chosen]"""
    hbm_bytes_per_ns: int = 1_600
    """Roofline: HBM bandwidth shared by all cores (~1.6 TB/s on 910B, public figure)."""
    # ---- memory engines (SDMA)
    memcpy_setup_ns: int = 1_500
    """Fixed SDMA start-up per copy task (descriptor fetch, address translation)."""
    memcpy_h2d_bytes_per_ns: int = 24
    """PCIe Gen4 x16 host -> device, ~24 GB/s effective."""
    memcpy_d2h_bytes_per_ns: int = 24
    """PCIe Gen4 x16 device -> host, ~24 GB/s effective."""
    memcpy_d2d_bytes_per_ns: int = 600
    """HBM -> HBM copy (read + write of ~1.6 TB/s HBM): ~600 GB/s effective."""
    memset_setup_ns: int = 1_000
    """Fixed start-up of a memset task."""
    memset_bytes_per_ns: int = 800
    """HBM write-only fill, ~800 GB/s."""
    # ---- synchronisation SQEs
    event_record_ns: int = 200
    """EVENT_RECORD SQE: write of the event's hardware slot."""
    event_wait_ns: int = 200
    """EVENT_WAIT SQE when the event is already recorded (no parking)."""
    event_reset_ns: int = 100
    """EVENT_RESET SQE."""
    notify_record_ns: int = 150
    """NOTIFY_RECORD / END_GRAPH notify write."""
    notify_wait_ns: int = 150
    """NOTIFY_WAIT SQE when the notify is already set."""
    sync_wakeup_ns: int = 300
    """Latency from a record to a parked waiter's SQ running again (scheduler re-polls the SQ)."""
    mem_write_value_ns: int = 200
    """MEM_WRITE_VALUE (value write, also the software-event record of SW-SQ captures)."""
    mem_wait_value_ns: int = 300
    """MEM_WAIT_VALUE when satisfied at once; it is a 3–4 SQE function call (spec/aclgraph.md §11)."""
    # ---- graph control
    model_execute_ns: int = 1_000
    """Device side of a graph launch: the MODEL_EXECUTE task activates the model's head SQs."""
    stream_active_ns: int = 800
    """Cascade hop (STREAM_ACTIVE): switch to the next capture SQ, which then has to be fetched."""
    end_graph_ns: int = 300
    """END_GRAPH: the model's completion notify record."""
    cond_eval_ns: int = 800
    """COND_FIRST function-call SQE: read the 8-byte cond word, pick the branch, activate its SQ."""
    cond_jump_back_ns: int = 400
    """COND_JUMP_BACK of a WHILE: back to the condition check."""
    sqe_update_ns: int = 500
    """SQE_UPDATE: copy one rebuilt SQE into a model SQ (task update)."""
    stream_switch_ns: int = 800
    """STREAM_SWITCH (aclrtSwitchStream): read two values, compare, maybe activate an SQ; costed
    like a cond task's COND_FIRST, which does the same work. [chosen]"""
    # ---- HCCL collectives (npusim/hccl/algo.py step_ns / closed_form; spec/hccl.md §5; the
    # alpha-beta model of hccl docs/zh/user_guide/coll_algo_intro/algo_intro.md; fidelity 384)
    hccl_alpha_ns: int = 10_000
    """alpha: fixed latency of one algorithm step over a link (a notify exchange plus one SDMA
    transfer between NPUs). HCCL publishes no measured alpha (spec/hccl.md §5): [chosen] 10 us,
    so an 8-rank mesh AllReduce of a few KiB (2 alpha) costs ~20 us."""
    hccl_hccs_bytes_per_us: int = 18_300
    """beta of an HCCS link inside a server: 18.3 GB/s per NPU at level 0, the figure HCCL itself
    uses for 910B (hcomm src/legacy/ascend910/platform/common/device_capacity.cc)."""
    hccl_rdma_bytes_per_us: int = 20_000
    """beta of an RDMA link between servers: 25 GB/s x 0.8 = 20 GB/s (device_capacity.cc)."""
    hccl_reduce_bytes_per_us: int = 200_000
    """gamma: bytes a rank's reduction reduces per us (one reduce unit per rank: the reductions of
    a step into one rank are serial). [chosen] a third of ``memcpy_d2d_bytes_per_ns`` (each
    reduced byte reads dst and src and writes dst)."""
    hccl_local_copy_bytes_per_us: int = 600_000
    """A copy inside one NPU (user buffer <-> CCL buffer): ``memcpy_d2d_bytes_per_ns`` (600 B/ns).
    Local steps cost no alpha (no link)."""
    host_hccl_launch_ns: int = 20_000
    """Host cost of one HCCL collective call on a rank (op-base mode: the op's tasks are built on
    the host and put on the streams together, so they share one submit time). [chosen] a few
    kernel launches: HCCL's host-side op entry, parameter checks and task build."""

    def kernel_ns(self, num_blocks: int, cores: int, body_ns: int | None = None) -> int:
        """Duration of a kernel of ``num_blocks`` blocks on ``cores`` cores: ceil(blocks/cores)
        waves of ``body_ns`` (default :attr:`kernel_default_ns`) plus per-block dispatch."""
        waves = -(-max(num_blocks, 1) // max(cores, 1))
        return waves * (self.kernel_default_ns if body_ns is None else body_ns) \
            + num_blocks * self.kernel_per_block_ns

    def fixed_cost_by_op(self) -> dict[str, int]:
        """Fixed device cost per SQE opcode name (``npusim.device.sqe.OPCODES``), for the engine's
        cost array. KERNEL, MEMCPY and MEMSET add their size-dependent part on top."""
        return {
            "NOP": self.nop_ns, "KERNEL": 0, "MEMCPY": self.memcpy_setup_ns,
            "MEMSET": self.memset_setup_ns, "EVENT_RECORD": self.event_record_ns,
            "EVENT_WAIT": self.event_wait_ns, "EVENT_RESET": self.event_reset_ns,
            "NOTIFY_RECORD": self.notify_record_ns, "NOTIFY_WAIT": self.notify_wait_ns,
            "MEM_WRITE_VALUE": self.mem_write_value_ns, "MEM_WAIT_VALUE": self.mem_wait_value_ns,
            "STREAM_ACTIVE": self.stream_active_ns, "END_GRAPH": self.end_graph_ns,
            "MODEL_EXECUTE": self.model_execute_ns, "COND_FIRST": self.cond_eval_ns,
            "COND_NOTIFY_WAIT": self.notify_wait_ns, "COND_JUMP_BACK": self.cond_jump_back_ns,
            "SQE_UPDATE": self.sqe_update_ns, "STREAM_SWITCH": self.stream_switch_ns,
            "LABEL_SWITCH": self.cond_eval_ns,      # a COND SQE running its program, as a cond
        }


_HOST_SCALED = ("host_", "doorbell_")
_FIXED = ("_bytes_per_ns", "_flops_per_ns", "_bytes_per_us")


def _scaled(host_pct: int, device_pct: int, **exact: int) -> Timing:
    """A :class:`Timing` with the A2 host costs scaled by ``host_pct`` % and device costs by
    ``device_pct`` %; bandwidths are not scaled and come from ``exact``."""
    base = Timing()
    vals = {}
    for f in dataclasses.fields(Timing):
        v = getattr(base, f.name)
        if f.name.endswith(_FIXED):
            continue
        pct = host_pct if f.name.startswith(_HOST_SCALED) else device_pct
        vals[f.name] = max(1, (v * pct + 50) // 100)
    vals.update(exact)
    return Timing(**vals)


@dataclass(frozen=True)
class Profile:
    """One chip. Field docs name the source; "[chosen]" marks values the repo does not fix."""
    name: str
    """Profile key in :data:`PROFILES`."""
    soc_name: str
    """Short SoC version (``Short_SoC_version`` in ``platform_config/*.ini``)."""
    soc_version: str
    """Full SoC version a real board reports (``aclrtGetSocName``): the ``SoC_version`` of the ini
    whose core counts match this profile best."""
    chip_type: str
    """Runtime chip enum (``REGISTER_PLATFORM_LIB_INFO`` in ``dev_info_reg.cc``)."""
    runtime_lib: str
    """Runtime library the chip loads (v100 = STARS v1 / HWTS, v200 = 950) (``dev_info_reg.cc``)."""
    is_v200: bool
    """Uses the v200 runtime (950): capture streams PERSISTENT, cascade reserve includes
    ``expand_stream_rsv_task_num`` (spec/aclgraph.md §12.14)."""
    software_sq: bool
    """Capture uses software SQs (``RT_FEATURE_MODEL_ACL_GRAPH_SOFTWARE_ENABLE``; §6.1)."""
    acl_graph: bool
    """Stream capture exists (``RT_FEATURE_MODEL_ACL_GRAPH``); else capture APIs return 207000."""
    cond_supported: bool
    """Cond handles / IF-WHILE-SWITCH tasks; SW-SQ chips only (§6.1)."""
    model_update_supported: bool
    """aclmdlRIUpdate, TaskSetParams/Disable; SW-SQ chips only (§6.1)."""
    has_task_value_wait: bool
    """``RT_FEATURE_TASK_VALUE_WAIT``: software capture events (mem write/wait value) are possible;
    without it capture always uses hardware events (``capture_model_utils.cc`` IsUseHardwareEvent)."""
    cv_separated: bool
    """Cube and vector cores are separate (``cvArchType`` CV_ARCH_SEPARATION); kernel.md §9.18."""
    die_num: int
    """Dies per device (950: ``RT_DAVID_DIE_MAX_NUM`` = 2, ``base_david.hpp``)."""
    aic_cores: int
    """AI Core (cube) count (``aicNum`` in ``dev_info_reg.cc``; 310P from ``Ascend310P3.ini``)."""
    aiv_cores: int
    """AI Vector core count (``aivNum``; 310P: ``vector_core_cnt`` of ``Ascend310P3.ini``)."""
    rtsq_depth: int
    """SQ depth of a classic capture stream / normal stream (``rtsqDepth``)."""
    max_task_num_per_stream: int
    """Tasks a normal stream accepts before it must wait (``maxTaskNumPerStream``)."""
    rtsq_reserved_task_num: int
    """SQ slots the runtime keeps back on a normal stream (``rtsqReservedTaskNum``)."""
    expand_stream_rsv_task_num: int
    """Extra reserve of a cascaded capture stream (``expandStreamRsvTaskNum``)."""
    additional_sqe_num: int
    """``expandStreamAdditionalSqeNum``: SQEs added per capture stream for the cascade hop."""
    sq_depth_adapt: int
    """``expandStreamSqDepthAdapt``: depth adjustment of cascade streams."""
    task_prefetch_count: int
    """NOPs placed before a task group so prefetched SQEs can be updated (``taskPrefetchCount``)."""
    max_physical_streams: int
    """Hardware streams (``maxPhysicalStreamNum``)."""
    max_streams: int
    """Allocatable streams (``maxAllocStreamNum``)."""
    stub_event_count: int
    """Available events reported when the driver is not asked (``stubEventCount``)."""
    max_events: int
    """Events per device (07_event_management.md: 65536 on 950/A3/A2, 1023 on 310P)."""
    max_notifies: int
    """Notifies per device (08_notify_management.md: 65535 on 950, 8192 on A3/A2, 1024 on 310P)."""
    stream_clear_supported: bool = True
    """aclrtStreamAbort / aclrtStreamStop / aclrtPersistentTaskClean work (chapter 06: Ascend 950,
    Atlas A3 and A2 "支持", Atlas 推理系列 (310P) "不支持"; the STARS stream-clear, TS stream-abort
    and DFX snapshot features, ``ApiImpl::StreamClear``, ``Context::StreamAbort``,
    ``ApiErrorDecorator::StreamTaskClean``): 207000 where not."""
    max_user_streams: int = 1984
    """Streams a program can create, default streams included (06_stream_management.md: 1984 on
    950/A3/A2, 1024 on 310P); the next ``aclrtCreateStream`` returns 207008."""
    malloc_padding: int = 32
    """``padding_size`` of the SoC spec: aclrtMalloc asks for ALIGN_UP(size, 32) + padding
    (``memory.cpp`` GetPaddingSize; 32 on 910B/A3/310P, 0 on 950)."""
    device_count: int = 8
    """Devices ``aclrtGetDeviceCount`` reports (a typical 8-card server). [chosen]"""
    capture_sq_depth_swsq: int = 32768
    """Depth of a SW-SQ capture stream while capturing (``stream.hpp:56``)."""
    capture_reserve: int = 32
    """SQEs kept free at the end of each capture stream (``stream.hpp:54``)."""
    sqcq_pool: int = 1024
    """SQ/CQ pairs per device pool and per graph (``RT_DEVICE_SQCQ_RES_MAX_NUM``,
    ``device_sq_cq_pool.hpp:23``)."""
    resource_num_dynamic: bool = True
    """``RT_FEATURE_DEVICE_GET_RESOURCE_NUM_DYNAMIC``: the driver reports free events, and capture
    uses hardware events only while more than :attr:`hw_event_reserve` are free; without it
    capture always uses software events (``capture_model_utils.cc`` IsUseHardwareEvent). Every
    shipped profile has it (``config/910_B_93``, ``950``, ``dc`` ``dev_info_reg.cc``)."""
    hw_event_reserve: int = 8192
    """Capture switches to software events when available hardware events drop to this
    (``HARD_EVENT_RESVERD_MAX``, ``capture_model_utils.cc:38``)."""
    max_dev_num: int = 64
    """``RT_MAX_DEV_NUM`` (``spec/base_info.hpp``)."""
    hbm_bytes: int = 64 * GiB
    """Device memory (HBM) in bytes: the SoC's ``memory_size`` (``platform_config/cann/
    Ascend910B1.ini``, ``Ascend910_9391.ini``: 64 GiB; ``cann-dev/Ascend950PR_9599.ini``: 128 GiB;
    ``Ascend310P3.ini``: 24,000,000,000). The arena is an address-space reservation committed
    page by page (``device/memory.py``), so the real size costs only what is written."""
    host_pinned_bytes: int = 1 * GiB
    """Simulated pinned host memory arena (``aclrtMallocHost``). [chosen]"""
    aicpu_cores: int = 4
    """AI CPU cores AICPU kernels' blocks are spread over (the timing model's waves). [chosen]"""
    ai_core_cnt: int = 24
    """AI Cores the platform reports (``ai_core_cnt`` of the SoC's ``platform_config`` ini:
    24 on Ascend910B1 / 910_9391, 36 on 950PR_9599, 8 on 310P3); ``aclrtGetDeviceInfo``'s
    AICORE_CORE_NUM (the driver's 25 less the one the runtime keeps back on A2 / A3,
    ``reduceAicNum``) and ``aclGetDeviceCapability``'s AI_CORE_NUM."""
    vector_core_cnt: int = 48
    """Vector cores the platform reports (``vector_core_cnt``: 48, 72 on 950, 7 on 310P)."""
    cube_core_cnt: int = 24
    """``cube_core_cnt`` of the ini (24, 36 on 950); 0: the ini has no such key (310P3), and
    ``aclrtGetDeviceInfo(ACL_DEV_ATTR_CUBE_CORE_NUM)`` fails with 107000."""
    ai_cpu_cnt: int = 6
    """``ai_cpu_cnt`` of the ini (6, 7 on 310P): ``ACL_DEV_ATTR_AICPU_CORE_NUM``."""
    l2_size: int = 201_326_592
    """L2 cache bytes (``l2_size``: 192 MiB on A2 / A3, 128 MiB on 950, 16 MiB on 310P)."""
    npu_arch: int = 2201
    """``NpuArch`` of the ini's ``[version]`` (2201 A2 / A3, 3510 950, 2002 310P):
    ``ACL_DEV_ATTR_NPU_ARCH``."""
    stars: bool = True
    """The task scheduler is STARS (``isStars``: A2 / A3 / 950), not HWTS (310P): streams have an
    overflow-detection switch (``RT_FEATURE_STREAM_OVERFLOW_SWITCH``), and the overflow status is
    kept per process and fetched by a scheduler task (``DEVICE_SAT_STATUS_STREAM_LEVEL``), not
    in a per-context buffer (``CONTEXT_LEVEL``) (``config/*/dev_info_reg.cc``)."""
    sat_modes: tuple = (0, 1)
    """Float overflow modes ``aclrtSetDeviceSatMode`` accepts (``supportOverflowMode``:
    SATURATION (0) and INFNAN (1) on A2 / A3, INFNAN only on 950, SATURATION only on 310P)."""
    soc_features: frozenset = frozenset({"support_inf_nan", "support_bf16"})
    """The ``SoCInfo`` keys the chip's platform file sets to 1 among those the CANN attributes
    ask (``support_inf_nan``, ``support_bf16``: both on A2 / A3 / 950; neither key in
    ``Ascend310P3.ini``)."""
    sat_default: int = 1
    """The process's mode before any ``aclrtSetDeviceSatMode``: INFNAN on the chips with the
    overflow-mode feature (A2 / A3 / 950), SATURATION on 310P (``runtime.hpp`` ``satMode_``,
    ``Runtime::Init``)."""
    timing: Timing = field(default_factory=Timing)
    """Cost model, see :class:`Timing`."""

    def with_timing(self, **overrides: int) -> "Profile":
        """A copy with some timing constants replaced, e.g. ``p.with_timing(doorbell_ns=0)``.
        Unknown names raise ``TypeError``."""
        return dataclasses.replace(self, timing=dataclasses.replace(self.timing, **overrides))


_A2_A3 = dict(  # config/910_B_93/dev_info_reg.cc (CHIP_910_B_93), shared by A2 and A3
    chip_type="CHIP_910_B_93", runtime_lib="libruntime_v100.so", is_v200=False,
    software_sq=True, acl_graph=True, cond_supported=True, model_update_supported=True,
    has_task_value_wait=True, cv_separated=True, die_num=1, aic_cores=25, aiv_cores=50,
    rtsq_depth=2048, max_task_num_per_stream=2013, rtsq_reserved_task_num=35,
    expand_stream_rsv_task_num=0, additional_sqe_num=1, sq_depth_adapt=0, task_prefetch_count=8,
    max_physical_streams=2038, max_streams=32768, stub_event_count=65536,
    max_events=65536, max_notifies=8192,
)

Ascend910B = Profile(name="Ascend910B", soc_name="Ascend910B", soc_version="Ascend910B1", **_A2_A3)
Ascend910_93 = Profile(name="Ascend910_93", soc_name="Ascend910_93", soc_version="Ascend910_9391",
                       **_A2_A3)
Ascend950 = Profile(  # config/950/dev_info_reg.cc (CHIP_DAVID)
    name="Ascend950", soc_name="Ascend950", soc_version="Ascend950PR_9599",
    chip_type="CHIP_DAVID", runtime_lib="libruntime_v200.so", is_v200=True,
    software_sq=True, acl_graph=True, cond_supported=True, model_update_supported=True,
    has_task_value_wait=True, cv_separated=True, die_num=2, aic_cores=2 * 18, aiv_cores=2 * 36,
    rtsq_depth=2049, max_task_num_per_stream=2014, rtsq_reserved_task_num=35,
    expand_stream_rsv_task_num=8, additional_sqe_num=8, sq_depth_adapt=7, task_prefetch_count=8,
    max_physical_streams=2016, max_streams=65535, stub_event_count=131072,
    max_events=65536, max_notifies=65535, malloc_padding=0, hbm_bytes=128 * GiB,
    ai_core_cnt=36, vector_core_cnt=72, cube_core_cnt=36, l2_size=134_217_728, npu_arch=3510,
    sat_modes=(1,),
    # [chosen] a newer host stack and PCIe Gen5: host ~20 % and device ~25 % cheaper than A2
    timing=_scaled(80, 75, memcpy_h2d_bytes_per_ns=48, memcpy_d2h_bytes_per_ns=48,
                   memcpy_d2d_bytes_per_ns=800, memset_bytes_per_ns=1000),
)
Ascend310P = Profile(  # config/dc/dev_info_reg.cc (CHIP_DC): HWTS, classic capture only
    name="Ascend310P", soc_name="Ascend310P", soc_version="Ascend310P3",
    chip_type="CHIP_DC", runtime_lib="libruntime_v100.so", is_v200=False,
    software_sq=False, acl_graph=True, cond_supported=False, model_update_supported=False,
    has_task_value_wait=False, cv_separated=False, die_num=1, aic_cores=8, aiv_cores=7,
    rtsq_depth=2048, max_task_num_per_stream=2042, rtsq_reserved_task_num=6,
    expand_stream_rsv_task_num=0, additional_sqe_num=0, sq_depth_adapt=0, task_prefetch_count=10,
    max_physical_streams=992, max_streams=992, stub_event_count=1024,
    max_events=1023, max_notifies=1024, max_user_streams=1024, stream_clear_supported=False,
    hbm_bytes=24_000_000_000,
    ai_core_cnt=8, vector_core_cnt=7, cube_core_cnt=0, ai_cpu_cnt=7, l2_size=16_777_216,
    npu_arch=2002, stars=False, sat_modes=(0,), sat_default=0, soc_features=frozenset(),
    # [chosen] inference card: host ~20 % and device ~40 % slower than A2; LPDDR4X (~200 GB/s)
    timing=_scaled(120, 140, memcpy_h2d_bytes_per_ns=20, memcpy_d2h_bytes_per_ns=20,
                   memcpy_d2d_bytes_per_ns=80, memset_bytes_per_ns=150),
)

PROFILES: dict[str, Profile] = {p.name: p for p in (Ascend910B, Ascend910_93, Ascend950, Ascend310P)}
DEFAULT_PROFILE = "Ascend910B"
ALIASES: dict[str, str] = {
    "A2": "Ascend910B", "910B": "Ascend910B", "A3": "Ascend910_93", "910_93": "Ascend910_93",
    "950": "Ascend950", "310P": "Ascend310P",
}
_LOOKUP = {k.lower(): v for k, v in ALIASES.items()} | {k.lower(): k for k in PROFILES}


def get_profile(name: str | Profile | None = None) -> Profile:
    """Profile by name or alias (case-insensitive); ``None`` gives the default, a :class:`Profile`
    is returned as is. Unknown names raise ``KeyError`` listing the valid ones."""
    if isinstance(name, Profile):
        return name
    if name is None:
        return PROFILES[DEFAULT_PROFILE]
    real = _LOOKUP.get(str(name).strip().lower())
    if real is None:
        raise KeyError(f"unknown chip profile {name!r}; valid: {', '.join([*PROFILES, *ALIASES])}")
    return PROFILES[real]


__all__ = ["Timing", "Profile", "Ascend910B", "Ascend910_93", "Ascend950", "Ascend310P",
           "PROFILES", "DEFAULT_PROFILE", "ALIASES", "get_profile", "GiB"]
