"""``acl.rt``: the aclrt* functions (devices, contexts, streams, events, notifies, memory)."""
from __future__ import annotations

from ..runtime.api_device import (create_context, destroy_context,  # noqa: F401
                                  get_current_context, get_device, get_device_count, reset_device,
                                  set_current_context, set_device, synchronize_device)
from ..runtime.api_event import (create_event, create_event_ex_with_flag,  # noqa: F401
                                 create_event_with_flag, create_notify, destroy_event,
                                 destroy_notify, event_elapsed_time, query_event,
                                 query_event_status, record_event, record_notify, reset_event,
                                 stream_wait_event, synchronize_event,
                                 synchronize_event_with_timeout, wait_and_reset_notify)
from ..runtime.api_memory import (free, free_host, malloc, malloc_host, memcpy,  # noqa: F401
                                  memcpy_async, memset, memset_async)
from ..runtime.api_stream import (create_stream, create_stream_with_config,  # noqa: F401
                                  destroy_stream, set_stream_failure_mode, stream_query,
                                  synchronize_stream, synchronize_stream_with_timeout)
from ..runtime.api_mdl import stream_add_to_model  # noqa: F401,E402
