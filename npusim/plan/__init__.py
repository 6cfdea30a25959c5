"""Resource budgets and capture planning: which call of a capture plan fails, with which code, and
how many graph sizes fit — before running it (``npusim plan`` on the command line).

Three layers, each usable alone:

* :class:`Budget` — the limits of a chip profile as objects with their sources: user streams
  (207008 at ``aclrtCreateStream``), the SQ/CQ pool and its per-graph cap (207005 at the first
  ``aclmdlRIExecuteAsync``), events (207007), notifies (207009), the capture-stream geometry that
  decides cascades, and the hardware stream budget frameworks plan against (not simulated).
* :func:`graph_cost` — what one captured graph consumes: its capture streams (origin, cascades,
  joined and added streams, sub-models' streams), the SQ/CQ pairs its first execution takes, the
  SQEs written. The arithmetic is the simulator's own (``runtime/capture.py``): a capture stream
  cascades when its counted SQEs reach ``depth - 32 - expandStreamRsvTaskNum``; the STREAM_ACTIVE
  hop is not counted; EndCapture's internal tasks (notify per added stream, one reset per capture
  event, classic EndGraph) cascade only when the ring itself is full.
* :func:`plan` — the question vllm-ascend's ``update_aclgraph_sizes`` answers by hand: N capture
  sizes × L layers (piecewise: one graph per layer segment, ``L + 1`` per size), E extra streams
  per graph: the first failing call and its code, the sizes that fit, the sizes whose graphs stay
  resident in the SQ/CQ pool, the graphs rebuilt per replay pass when they do not; with ``tp``
  ranks, the collectives of every layer (HCCL's side streams, SQEs, capture events, notifies,
  events, CCL buffers per rank: :func:`~npusim.plan.hccl.hccl_load`) in every graph.

:func:`simulate` runs the same plan in the simulator (the canonical program the planner models,
written out in the docstring) and returns the observed outcome, so every prediction can be
checked: ``npusim plan ... --simulate``, and ``tests/tools/test_plan.py``.

One module per subject: :mod:`.budget` (``Budget``, ``Limit``, ``usage``), :mod:`.cost`
(``graph_cost``), :mod:`.predict` (``plan``, ``parse_sizes``), :mod:`.simulation` (``simulate``,
``compare``), :mod:`.hccl` (``hccl_load``: what a plan's collectives add per graph and rank,
``--tp N``); every name is importable from ``npusim.plan``. The ``npusim plan`` command is
:mod:`npusim.cli.plan`.
"""
from __future__ import annotations

from .budget import (E_FEATURE, E_NO_EVENT, E_NO_NOTIFY, E_NO_STREAM, E_RESOURCE,
                     VLLM_ASCEND_GRAPH_STREAMS, Budget, Limit, resolve_profile, usage)
from .cost import GraphCost, ModelCost, graph_cost
from .hccl import HcclLoad, hccl_load
from .predict import Failure, Plan, PlanRow, graph_spec, parse_sizes, plan
from .simulation import SimResult, compare, simulate

__all__ = ["Budget", "Limit", "usage", "graph_cost", "GraphCost", "ModelCost", "plan", "Plan",
           "PlanRow", "Failure", "simulate", "SimResult", "compare", "parse_sizes",
           "VLLM_ASCEND_GRAPH_STREAMS", "E_RESOURCE", "E_NO_STREAM", "E_NO_EVENT", "E_NO_NOTIFY",
           "E_FEATURE", "resolve_profile", "graph_spec", "HcclLoad", "hccl_load"]
