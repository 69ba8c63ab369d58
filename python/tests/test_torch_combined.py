"""combined-1f1b (Megatron-LM's overlap_moe_expert_parallel_comm) trained in PyTorch's
pipeline runtime: one step on P = 2 processes (gloo, CPU, float64, torch_harness.py) by both
routes of ctpipe.torch.pipeline_schedule, its combined steps read fused and split, must give
every loss and gradient of the single-process reference (relative error <= 1e-5).

Kept apart from test_torch_training.py (another change is under way there); its SCHEDULES
list is where this family belongs once that lands.
"""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("torch", reason="ctpipe.torch needs PyTorch; torch is not importable")

import torch_harness as h  # noqa: E402

CASES = [
    {"name": f"combined-1f1b P2 m{m} V{V} g{g} {route} {pairs}", "family": "combined-1f1b", "P": 2, "m": m,
     "options": {"V": V, "group": g, "pair_model": pairs}, "route": route, "seed": 1}
    for m, V, g in ((4, 2, 2), (6, 3, 3), (5, 2, 5))
    for route in ("compute_only", "compute_comms")
    for pairs in ("fused", "split")
]


@functools.cache
def results():
    return h.run_cases(2, CASES)


@pytest.mark.torch_dist
@pytest.mark.parametrize("name", [c["name"] for c in CASES])
def test_combined_trains_like_the_reference(name):
    res = results()[name]
    assert res["status"] == "ok" and not h.problems(res), h.problems(res)
