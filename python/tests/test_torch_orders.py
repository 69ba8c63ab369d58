"""ctpipe's orders against PyTorch's own schedule classes: each class's `pipeline_order`,
computed by PyTorch 2.13.0 itself from stand-in stages (no process, no tensor), equals
ctpipe's compute actions rank for rank, and PyTorch refuses exactly the shapes ctpipe
refuses. (REDUCE_GRAD, which some classes append themselves, is left out of the
comparison: ctpipe's compute-only lists leave it to PyTorch's lowering, docs/pytorch.md.)"""

import pytest

torch = pytest.importorskip("torch")
from torch.distributed.pipelining import schedules as S  # noqa: E402

import ctpipe  # noqa: E402


class _Stage:
    """What a schedule class reads of a stage when it computes its order."""

    def __init__(self, index, num_stages, P, rank):
        self.stage_index, self.num_stages, self.group_size, self.group_rank = index, num_stages, P, rank
        self.stage_index_to_group_rank = {}
        self.is_first, self.is_last = index == 0, index == num_stages - 1
        self.submod = torch.nn.Identity()


def pytorch_order(cls, P, m, V, v_shape):
    rows = []
    for r in range(P):
        held = [r, 2 * P - 1 - r] if v_shape else [r + c * P for c in range(V)]
        sched = cls([_Stage(s, P * V, P, r) for s in held], m)
        rows.append([str(a) for a in sched.pipeline_order[r] if a is not None and "REDUCE_GRAD" not in str(a)])
    return rows


CASES = [  # (PyTorch class, ctpipe family, options, Vs, V-shape)
    (S.ScheduleInterleaved1F1B, "interleaved-1f1b", {"variant": "torch"}, (1, 2, 3), False),
    (S.ScheduleInterleavedZeroBubble, "interleaved-zb", {}, (1, 2, 3), False),
    (S.ScheduleLoopedBFS, "looped-bfs", {}, (1, 2, 3), False),
    (S.ScheduleZBVZeroBubble, "zbv", {}, (2,), True),
    (S.ScheduleDualPipeV, "dualpipev", {}, (2,), True),
]


@pytest.mark.parametrize("cls,family,opts,Vs,v_shape", CASES, ids=[c[1] for c in CASES])
def test_pytorchs_own_order_is_ctpipes(cls, family, opts, Vs, v_shape):
    equal = refused = 0
    for P in (1, 2, 3, 4, 5, 8):
        for m in range(1, 3 * P + 3):
            for V in Vs:
                try:
                    theirs = pytorch_order(cls, P, m, V, v_shape)
                except Exception:  # noqa: BLE001 (PyTorch refuses with several types)
                    theirs = None
                try:
                    ours = ctpipe.Schedule(family, P=P, m=m, V=V, **opts).actions()
                except ctpipe.Error:
                    ours = None
                if theirs is None and ours is None:
                    refused += 1
                    continue
                if theirs is None and P == 1:
                    continue  # PyTorch's multi-stage classes need 2 ranks; ctpipe runs P = 1
                assert ours == theirs, (family, P, m, V)
                equal += 1
    assert equal > 40


@pytest.mark.parametrize("rows,family,message", [
    ([["3RECV_B0"], ["1F0"]], "zbv", "its message comes from stage 4, outside [0, 4)"),
    ([["0RECV_F0", "0F0"], ["1F0"]], "1f1b", "its message comes from stage -1, outside [0, 2)"),
])
def test_a_receive_from_no_stage_is_refused(rows, family, message):
    import ctpipe.torch as ct

    with pytest.raises(ctpipe.Error) as e:
        ct.parse_actions(rows, ctpipe.Schedule(family, P=2, m=4), route="compute_comms")
    assert message in str(e.value)


def test_pipeline_schedule_refuses_what_is_no_schedule_or_stage():
    import ctpipe.torch as ct

    with pytest.raises(ctpipe.Error, match="the schedule must be a ctpipe.Schedule, not str"):
        ct.pipeline_schedule([object()], "zbv")
    with pytest.raises(ctpipe.Error, match="a stage must be a torch.distributed.pipelining stage"):
        ct.pipeline_schedule(None, ctpipe.Schedule("zbv", P=2, m=4))
    with pytest.raises(ctpipe.Error, match="microbatch_size must be an int >= 1"):
        ct.automodel_options(ctpipe.Schedule("1f1b", P=2, m=4), "s.csv", microbatch_size="2")
