"""npusim.hccl: HCCL collectives on several simulated NPUs (issue 38, spec/hccl.md).

The facade is filled in by the lead (``api.py``); this package file imports nothing yet.
"""
