"""HCCL collectives on several simulated NPUs (issue 38; ``../shared/spec/hccl.md``).

Placeholder docstring of the package: the lead owns this file and its exports.
"""
