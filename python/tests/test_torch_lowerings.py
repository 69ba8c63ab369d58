"""ctpipe's torch lowerings (``lowering="torch-asap"`` and the others, ctpipe/io/torch_lowering.hpp)
against PyTorch 2.13.0's own lowering functions, which the compute-only route of
``_PipelineScheduleRuntime`` runs: ``_add_unshard_reshard`` and ``_add_reduce_grad`` per rank,
then ``_add_send_recv``, then with ``defer_pp_recv=True`` ``_defer_recv_ops``. They are applied
here to ``schedule.actions()`` for every family and shape of the training tests, with the
passes all, reduce-grad only and none; ctpipe's lists must equal theirs token for token. No
process is started. The lists printed in the PyTorch threads, and what the runtime models
predict for them, are checked too (tests/runtime/torch_lowering_test.cpp has the rest)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the comparison needs PyTorch's own lowering functions")

import ctpipe  # noqa: E402
import ctpipe.torch as ct  # noqa: E402
from test_torch_training import _families  # noqa: E402
from torch.distributed.pipelining.schedules import (  # noqa: E402
    _Action,
    _add_reduce_grad,
    _add_send_recv,
    _add_unshard_reshard,
    _defer_recv_ops,
)

PASSES = ("all", "reduce-grad", "none")


def pytorch_lowering(s: ctpipe.Schedule, passes: str, defer: bool, max_active_stages: int = 3) -> list[list[str]]:
    """PyTorch's lists for ctpipe's compute actions, as ``_prepare_schedule_with_comms`` makes
    them (with the passes ``passes`` instead of both)."""
    owner = ct.stage_to_rank(s)
    actions = {}
    for rank, row in enumerate(s.actions()):
        acts = [_Action.from_str(a) for a in row]
        if passes == "all":
            acts = _add_unshard_reshard(acts, max_active_stages)
        if passes != "none":
            acts = _add_reduce_grad(acts, s.m)
        actions[rank] = acts
    out = _add_send_recv(actions, stage_to_rank=lambda st: owner[st], num_stages=s.num_stages)
    if defer:
        out = _defer_recv_ops(out, stage_to_rank=lambda st: owner[st])
    return [[str(a) for a in out[rank]] for rank in range(s.P)]


CASES = ([pytest.param(*f, id=f"{f[0]}-P{f[3]}-m{f[4]}") for f in _families()]
         + [pytest.param("1f1b", "1f1b", {}, 1, 3, id="1f1b-P1-m3"),
            pytest.param("1f1b", "1f1b", {}, 8, 16, id="1f1b-P8-m16"),
            pytest.param("interleaved-1f1b", "interleaved-1f1b", {"V": 3}, 4, 8, id="interleaved-1f1b-V3-P4-m8"),
            pytest.param("zbv", "zbv", {}, 8, 16, id="zbv-P8-m16")])


@pytest.mark.parametrize("label,family,options,P,m", CASES)
def test_torch_asap_and_parity_equal_pytorchs_lowering(label, family, options, P, m):
    """torch-asap is _add_send_recv's list, torch-parity _defer_recv_ops' of it, for each set
    of passes; the tool's csv-comms writes the same rows."""
    s = ctpipe.Schedule(family, P=P, m=m, **options)
    for passes in PASSES:
        for lowering, defer in (("torch-asap", False), ("torch-parity", True)):
            theirs = pytorch_lowering(s, passes, defer)
            assert s.actions(comms=True, lowering=lowering, torch_passes=passes) == theirs, (passes, lowering)
            if passes == "all":
                rows = s.csv(comms=True, lowering=lowering).splitlines()
                assert [row.split(",") for row in rows] == theirs


@pytest.mark.parametrize("window", [1, 2, 4])
def test_the_unshard_window_changes_the_rounds_as_in_pytorch(window):
    """--max-active-stages (_add_unshard_reshard's max_active_stages) puts other UNSHARD and
    RESHARD actions in the lists, which take rounds of _add_send_recv."""
    s = ctpipe.Schedule("interleaved-1f1b", P=4, m=8, V=2)
    for lowering, defer in (("torch-asap", False), ("torch-parity", True)):
        ours = s.actions(comms=True, lowering=lowering, max_active_stages=window)
        assert ours == pytorch_lowering(s, "all", defer, max_active_stages=window)


def test_the_lists_of_issue_172668_and_pr_172833():
    """https://github.com/pytorch/pytorch/issues/172668 prints ScheduleInterleaved1F1B's
    lowered lists at P = 2 (those of m = 2); https://github.com/pytorch/pytorch/pull/172833
    prints its own order at m = 4 ("Now returns"). PyTorch 2.13.0's _add_send_recv gives the
    first; ctpipe's torch-asap and torch-consumer give both, token for token."""
    issue = [
        "0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 2RECV_F0, 0F1, 0SEND_F1, 2RECV_F1, 2F0, 2SEND_F0, 2F1, 2SEND_F1, "
        "2RECV_B0, 2B0, 2SEND_B0, 2RECV_B1, 2B1, 2SEND_B1, 2REDUCE_GRAD, 2RESHARD, 0RECV_B0, 0B0, 0RECV_B1, 0B1, "
        "0REDUCE_GRAD, 0RESHARD",
        "1UNSHARD, 3UNSHARD, 1RECV_F0, 1F0, 1SEND_F0, 1RECV_F1, 1F1, 1SEND_F1, 3RECV_F0, 3F0, 3RECV_F1, 3B0, "
        "3SEND_B0, 1RECV_B0, 3F1, 3B1, 3SEND_B1, 1RECV_B1, 3REDUCE_GRAD, 3RESHARD, 1B0, 1SEND_B0, 1B1, 1SEND_B1, "
        "1REDUCE_GRAD, 1RESHARD",
    ]
    pr = [
        "0UNSHARD, 2UNSHARD, 0F0, 0SEND_F0, 0F1, 0SEND_F1, 2RECV_F0, 2F0, 2SEND_F0, 2RECV_F1, 2F1, 2SEND_F1, 0F2, "
        "0SEND_F2, 2RECV_B0, 2B0, 2SEND_B0, 0F3, 0SEND_F3, 2RECV_B1, 2B1, 2SEND_B1, 2RECV_F2, 2F2, 2SEND_F2, "
        "0RECV_B0, 0B0, 2RECV_F3, 2F3, 2SEND_F3, 0RECV_B1, 0B1, 2RECV_B2, 2B2, 2SEND_B2, 2RECV_B3, 2B3, 2SEND_B3, "
        "2REDUCE_GRAD, 2RESHARD, 0RECV_B2, 0B2, 0RECV_B3, 0B3, 0REDUCE_GRAD, 0RESHARD",
        "1UNSHARD, 3UNSHARD, 1RECV_F0, 1F0, 1SEND_F0, 1RECV_F1, 1F1, 1SEND_F1, 3RECV_F0, 3F0, 3B0, 3SEND_B0, "
        "3RECV_F1, 3F1, 3B1, 3SEND_B1, 1RECV_F2, 1F2, 1SEND_F2, 1RECV_B0, 1B0, 1SEND_B0, 1RECV_F3, 1F3, 1SEND_F3, "
        "1RECV_B1, 1B1, 1SEND_B1, 3RECV_F2, 3F2, 3B2, 3SEND_B2, 3RECV_F3, 3F3, 3B3, 3SEND_B3, 3REDUCE_GRAD, "
        "3RESHARD, 1RECV_B2, 1B2, 1SEND_B2, 1RECV_B3, 1B3, 1SEND_B3, 1REDUCE_GRAD, 1RESHARD",
    ]
    m2 = ctpipe.Schedule("interleaved-1f1b", P=2, m=2, variant="torch")
    assert pytorch_lowering(m2, "all", False) == [row.split(", ") for row in issue]
    assert m2.actions(comms=True, lowering="torch-asap") == [row.split(", ") for row in issue]
    m4 = ctpipe.Schedule("interleaved-1f1b", P=2, m=4, variant="torch")
    assert m4.actions(comms=True, lowering="torch-consumer") == [row.split(", ") for row in pr]


def test_what_the_stream_models_predict_for_the_threads_orders():
    """Issue 172668's deadlock of PR 172833's order on two nodes (rank 0 stuck at
    "0SendF1, 2RecvF0, 2F0", rank 1 at "1SendF0, 1RecvF1, 1F1") is what ctpipe's one stream
    per rank predicts; torch-asap runs there, with PR 165664's warm-up stall at P = 8."""
    s = ctpipe.Schedule("interleaved-1f1b", P=2, m=4, variant="torch", lowering="torch-consumer")
    hang = s.execute("stream-rank")["stream-rank"]
    assert hang["deadlock"] is True
    assert [(x["rank"], x["op"]) for x in hang["stuck"]] == [(0, "2F0"), (1, "1F1")]
    assert "its head 0SEND_F1 needs 1RECV_F1, queued on rank 1's stream behind 1SEND_F0" in hang["cycle"]
    assert "makespan" in s.execute("stream-edge")["stream-edge"]  # per directed edge it runs
    asap = ctpipe.Schedule("interleaved-1f1b", P=8, m=8, variant="torch", lowering="torch-asap")
    run = asap.execute("stream-rank")["stream-rank"]
    assert ctpipe.fraction(run["makespan"]) == 62 > asap.simulate().makespan
    assert ctpipe.fraction(run["stall"][1]) == 25


@pytest.mark.parametrize("label,family,options,P,m", [pytest.param(*f, id=f"{f[0]}-P{f[3]}-m{f[4]}")
                                                      for f in _families()])
def test_which_orders_receive_in_the_senders_order(label, family, options, P, m):
    """torch-asap appends each RECV with its SEND, so every pair of ranks posts its messages in
    one order on both sides (what gloo and NCCL pair by). The deferrals move RECVs: for the
    V-shapes (and interleaved-zb at P = 2) a rank then receives a peer's messages in another
    order than the peer sends them, and ctpipe.torch's check refuses those lists; PyTorch's
    own defer_pp_recv=True runs them and trains on the wrong tensors
    (test_torch_training.py's defer-pp-recv cases)."""
    s = ctpipe.Schedule(family, P=P, m=m, **options)
    owner = ct.stage_to_rank(s)
    in_order = {}
    for lowering in ("torch-asap", "torch-warmup", "torch-consumer", "torch-parity"):
        rows = s.actions(comms=True, lowering=lowering)
        try:
            ct._check_transfers(ct.parse_actions(rows, s, route="compute_comms"), owner, s)
            in_order[lowering] = True
        except ctpipe.Error as e:
            assert "in another order than" in str(e)
            in_order[lowering] = False
    assert in_order["torch-asap"]
    v_like = family in ("zbv", "v-half", "v-min") or (family, P) in (("interleaved-zb", 2), ("dualpipev", 4))
    assert in_order["torch-parity"] == in_order["torch-consumer"] == (not v_like)
