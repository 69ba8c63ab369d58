"""Real training with ctpipe's schedules in PyTorch's pipeline runtime.

P processes on localhost (gloo, CPU, float64), started once per pool (torch_harness.py):
for every family PyTorch's runtime can run, at P = 2 and P = 4, two micro-batch counts each
(one below 2P), by both routes of ctpipe.torch.pipeline_schedule, one training step must
give every micro-batch's loss and every parameter's gradient of a single-process reference
(relative error <= 1e-5, scale_grads=True: the mean loss), and the runtime must have run
ctpipe's actions, in order (recorded from the profiler's "PP:<action>" labels).

Run: python -m pytest python/tests/test_torch_training.py   (-m "not torch_dist" for the
tests that start no process).
"""

from __future__ import annotations

import functools
import re
import time

import pytest

torch = pytest.importorskip("torch", reason="ctpipe.torch needs PyTorch; torch is not importable")

import ctpipe  # noqa: E402
import ctpipe.torch as ct  # noqa: E402
import torch_harness as h  # noqa: E402
from torch.distributed.pipelining._utils import generate_rank_to_stage_mapping  # noqa: E402
from torch.distributed.pipelining.schedules import (  # noqa: E402
    _Action,
    _add_reduce_grad,
    _add_unshard_reshard,
)

# (label, family, options): every family PyTorch's one-copy runtime can run.
SCHEDULES = [
    ("gpipe", "gpipe", {}),
    ("1f1b", "1f1b", {}),
    ("interleaved-1f1b-megatron", "interleaved-1f1b", {"variant": "megatron"}),
    ("interleaved-1f1b-megatron-legacy", "interleaved-1f1b", {"variant": "megatron-legacy"}),
    ("interleaved-1f1b-torch", "interleaved-1f1b", {"variant": "torch"}),
    ("looped-bfs", "looped-bfs", {}),
    ("zb-h1", "zb-h1", {}),
    ("zb-h2", "zb-h2", {}),
    ("zbv", "zbv", {}),
    ("interleaved-zb", "interleaved-zb", {}),
    ("dualpipev", "dualpipev", {}),
    ("v-half", "v-half", {}),
    ("v-min", "v-min", {}),
    # Megatron's combined 1F1B: its combined steps as PyTorch's OVERLAP_F_B, and split.
    ("combined-1f1b", "combined-1f1b", {"V": 2}),
    ("combined-1f1b-split", "combined-1f1b", {"V": 2, "pair_model": "split"}),
]

# Micro-batch counts per P: (one below 2P, one above), within each family's rules. Megatron's
# interleaved rules need P <= m and m % P == 0 (or m % P >= P: none here); DualPipeV needs
# m >= 2P (DeepSeek's rule), or 2P - 1 with structural_minimum.
_DEFAULT_M = {2: (3, 6), 4: (5, 10)}
_M = {
    "combined-1f1b": {2: (2, 6), 4: (4, 12)},  # Megatron's rules, as for its interleaved 1F1B
    "combined-1f1b-split": {2: (2, 6), 4: (4, 12)},
    "interleaved-1f1b-megatron": {2: (2, 6), 4: (4, 12)},
    "interleaved-1f1b-megatron-legacy": {2: (2, 6), 4: (4, 12)},
    "dualpipev": {2: (3, 6), 4: (7, 10)},
}
_EXTRA = {("dualpipev", 3): {"structural_minimum": True}, ("dualpipev", 7): {"structural_minimum": True}}

# (route, runtime): the two routes, compute_comms with the posted lowering (each rank's
# receives from a peer in the order that peer sends them, as PyTorch and gloo pair them) and
# with ctpipe's key order (rendezvous: one order for both directions of a pair of ranks).
ROUTES = [("compute_only", "posted"), ("compute_comms", "posted"), ("compute_comms", "rendezvous")]


def _schedule_cases(P):
    out = []
    for label, family, options in SCHEDULES:
        for m in _M.get(label, _DEFAULT_M)[P]:
            opts = dict(options, **_EXTRA.get((family, m), {}))
            for route, runtime in ROUTES:
                tag = route if route == "compute_only" else f"{route}-{runtime}"
                out.append({"name": f"{label}-P{P}-m{m}-{tag}", "family": family, "P": P, "m": m,
                            "options": opts, "route": route, "runtime": runtime, "seed": 7 + m})
    return out


def _move_second_recv_first(rows):
    """The same list with one rank's second receive from a peer moved just before its first
    one: every receive still precedes its use, only the pair's order changes."""
    rows = [list(r) for r in rows]
    s = ctpipe.Schedule("1f1b", P=2, m=3)
    owner = ct.stage_to_rank(s)
    for r, row in enumerate(rows):
        seen = {}
        for i, a in enumerate(row):
            mm = re.fullmatch(r"(\d+)RECV_(F|B)(\d+)", a)
            if not mm:
                continue
            st = int(mm[1])
            peer = owner[st - 1] if mm[2] == "F" else owner[st + 1]
            if peer in seen:
                j = seen[peer]
                rows[r].insert(j, rows[r].pop(i))
                return rows
            seen[peer] = i
    raise AssertionError("no two receives from one peer")


def _extra_cases(P):
    out = []
    if P == 2:
        s = ctpipe.Schedule("1f1b", P=2, m=3)
        good = s.actions(comms=True, runtime="rendezvous")
        swapped = _move_second_recv_first(good)
        # What PyTorch does with a list whose two ranks post one pair's messages in different
        # orders: it runs, and trains on the wrong tensors (the check below refuses it).
        out.append({"name": "raw-receives-out-of-order-P2", "kind": "raw", "family": "1f1b", "P": 2,
                    "m": 3, "rows": swapped, "expect_wrong": True})
        out.append({"name": "fsdp-false-1f1b-P2-m3-compute_comms", "family": "1f1b", "P": 2, "m": 3,
                    "route": "compute_comms", "runtime": "posted", "fsdp": False})
        out += _bad_cases(swapped)
        # The guard: a list that hangs (rank 0 never sends 0SEND_F1, rank 1 waits for it) is
        # stopped after its time and fails by name; the pool restarts for the cases after it.
        hang = [list(r) for r in ctpipe.Schedule("1f1b", P=2, m=2).actions(comms=True, runtime="rendezvous")]
        hang[0].remove("0SEND_F1")
        out.append({"name": "guard-hung-case-P2", "kind": "raw", "family": "1f1b", "P": 2, "m": 2,
                    "rows": hang, "timeout": 5.0, "expect_timeout": True})
    if P == 2:
        # PyTorch's own defer_pp_recv=True (_defer_recv_ops, PR #178815) by the compute-only
        # route: the runtime runs ctpipe's torch-parity lists (checked action for action).
        # Where they receive a peer's messages in another order than it sends them (zbv and
        # v-min here: ctpipe's order check refuses those lists), gloo pairs the messages in
        # posting order and the step trains on the wrong tensors, as predicted.
        for family, options, m, wrong in (("1f1b", {}, 3, False), ("interleaved-1f1b", {"variant": "torch"}, 4, False),
                                          ("zbv", {}, 3, True), ("v-min", {}, 3, True)):
            out.append({"name": f"defer-pp-recv-{family}-P2-m{m}", "family": family, "P": 2, "m": m,
                        "options": options, "route": "compute_only", "runtime": "posted",
                        "kwargs": {"defer_pp_recv": True}, "expect_wrong": wrong})
    for label, family, options, m in (("interleaved-1f1b-torch", "interleaved-1f1b", {"variant": "torch"}, 2 * P),
                                      ("zbv", "zbv", {}, 2 * P), ("dualpipev", "dualpipev", {}, 2 * P)):
        for route, runtime in (("compute_only", "posted"), ("compute_comms", "rendezvous")):
            out.append({"name": f"csv-{label}-P{P}-m{m}-{route}", "kind": "csv", "family": family, "P": P,
                        "m": m, "options": options, "route": route, "runtime": runtime})
    return out


def _bad_cases(swapped):
    s = ctpipe.Schedule("1f1b", P=2, m=3)
    compute = s.actions()
    junk = [list(r) for r in compute]
    junk[0][2] = junk[0][2] + "x"                        # PyTorch's parser would read the prefix
    backward_first = [list(r) for r in compute]
    backward_first[0] = [backward_first[0][-1]] + backward_first[0][:-1]   # 0B2 before 0F2
    comms = s.actions(comms=True, runtime="rendezvous")
    no_recv = [list(r) for r in comms]
    no_recv[1].remove("1RECV_F1")
    base = {"kind": "bad", "family": "1f1b", "P": 2, "m": 3}
    return [
        dict(base, name="bad-P", bad="P", P=4, m=4, expect=["2 ranks", "P = 4"]),
        dict(base, name="bad-num-stages", bad="num_stages", num_stages=4, expect=["num_stages = 4", "has 2"]),
        dict(base, name="bad-stage-indices", bad="indices", family="zbv", m=4, held=[[0, 2], [1, 3]],
             expect={0: ["rank 0 holds stages [0, 2]", "places stages [0, 3]"],
                     1: ["rank 1 holds stages [1, 3]", "places stages [1, 2]"]}),
        dict(base, name="bad-route", bad="route", route="comms", expect=["'comms'", "compute_only"]),
        dict(base, name="bad-dualpipe", bad="family", family="dualpipe", m=4, expect=["dualpipe", "two copies"]),
        dict(base, name="bad-action-text", bad="actions", rows=junk, expect=[f"'{junk[0][2]}'", "rank 0"]),
        dict(base, name="bad-backward-first", bad="actions", rows=backward_first,
             expect=["PyTorch refused", "stage 0, microbatch 2", "'0B2'"]),
        dict(base, name="bad-missing-recv", bad="actions", route="compute_comms", rows=no_recv,
             expect=["1F1", "1RECV_F1"]),
        dict(base, name="bad-receive-order", bad="actions", route="compute_comms", rows=swapped,
             expect=["another order", "1SEND_B0", "1SEND_B1"]),
        # Ranks that build different schedules of the same P and stage count: 1F1B and GPipe
        # hung in the first step; different m failed in it. Every rank raises, naming both.
        dict(base, name="bad-ranks-families", bad="ranks", families=["1f1b", "gpipe"], ms=[4, 4],
             expect=["different schedules", "rank 0: 1f1b, P = 2, m = 4", "rank 1: gpipe, P = 2, m = 4"]),
        dict(base, name="bad-ranks-m", bad="ranks", families=["1f1b", "1f1b"], ms=[4, 2],
             expect=["different schedules", "rank 0: 1f1b, P = 2, m = 4", "rank 1: 1f1b, P = 2, m = 2"]),
    ]


def _fsdp_cases():
    return [{"name": f"fsdp2-{fam}-P2xDP2-m{m}-{route}", "kind": "fsdp", "family": fam, "P": 2, "m": m,
             "route": route, "runtime": "rendezvous" if route == "compute_comms" else "posted"}
            for fam, m in (("1f1b", 4), ("zbv", 4)) for route in ("compute_comms", "compute_only")]


_MAKERS = {
    "P2": (2, lambda: _schedule_cases(2) + _extra_cases(2)),
    "P4": (4, lambda: _schedule_cases(4) + _extra_cases(4)),
    "fsdp": (4, _fsdp_cases),
}


@functools.lru_cache(maxsize=None)
def _pool(pool):
    """(world size, [cases]) of a pool, built once."""
    world, make = _MAKERS[pool]
    return world, make()
_TIMES: dict[str, float] = {}


@pytest.fixture(scope="session")
def pool_results():
    cache: dict[str, dict] = {}

    def get(pool):
        if pool not in cache:
            world, cases = _pool(pool)
            start = time.monotonic()
            cache[pool] = h.run_cases(world, cases)
            _TIMES[pool] = time.monotonic() - start
        return cache[pool]

    yield get
    if _TIMES:
        print("\nprocess pools: " + ", ".join(f"{k} {v:.1f} s" for k, v in _TIMES.items()))


def _params():
    out = []
    for pool in _MAKERS:
        for case in _pool(pool)[1]:
            out.append(pytest.param(pool, case["name"], id=case["name"]))
    return out


@pytest.mark.torch_dist
@pytest.mark.parametrize("pool,name", _params())
def test_real_runtime(pool_results, pool, name):
    results = pool_results(pool)
    result = results[name]
    case = next(c for c in _pool(pool)[1] if c["name"] == name)
    problems = h.problems(result)
    if case.get("expect_timeout"):
        assert result["status"] == "timeout", problems
        return
    if case.get("expect_wrong"):
        assert result["status"] == "ok", problems
        assert any("relative error" in p for p in problems), (
            "PyTorch trained correctly on receives out of the senders' order: the order check "
            "would be needless")
        # ... and the runtime ran the predicted lists: only the numbers are wrong.
        assert all("relative error" in p for p in problems), problems
        return
    assert not problems, f"{name}:\n" + "\n".join(problems)


# ------------------------------------------------------------------ no processes


def _families():
    for label, family, options in SCHEDULES:
        for P in (2, 4):
            for m in _M.get(label, _DEFAULT_M)[P]:
                yield label, family, dict(options, **_EXTRA.get((family, m), {})), P, m


@pytest.mark.parametrize("label,family,options,P,m",
                         [pytest.param(*f, id=f"{f[0]}-P{f[3]}-m{f[4]}") for f in _families()]
                         + [pytest.param("zbv", "zbv", {}, 8, 16, id="zbv-P8-m16"),
                            pytest.param("interleaved-1f1b", "interleaved-1f1b", {"V": 3}, 4, 8,
                                         id="interleaved-1f1b-V3-P4-m8")])
def test_fsdp_actions_as_pytorch_places_them(label, family, options, P, m):
    """ctpipe's UNSHARD / RESHARD / REDUCE_GRAD placement equals PyTorch's own passes
    (_add_unshard_reshard, then _add_reduce_grad) applied to schedule.actions(), rank by
    rank, transfers aside; with fsdp=False the same without UNSHARD / RESHARD."""
    s = ctpipe.Schedule(family, P=P, m=m, **options)
    for fsdp in (True, False):
        ours = s.actions(comms=True, runtime="posted", fsdp=fsdp)
        for rank, row in enumerate(s.actions()):
            acts = [_Action.from_str(a) for a in row]
            if fsdp:
                acts = _add_unshard_reshard(acts)
            theirs = [str(a) for a in _add_reduce_grad(acts, m)]
            mine = [a for a in ours[rank] if not h._is_transfer(a)]
            assert mine == theirs, f"fsdp={fsdp}, rank {rank}"


@pytest.mark.parametrize("label,family,options,P,m",
                         [pytest.param(*f, id=f"{f[0]}-P{f[3]}-m{f[4]}") for f in _families()])
def test_stage_to_rank_and_project_placement(label, family, options, P, m):
    """stage_to_rank inverts stages_of, and the schedule class named for torchtitan and NeMo
    AutoModel places the stages as ctpipe does (both take the loop, or the V-shape for
    ZBVZeroBubble, from that class)."""
    s = ctpipe.Schedule(family, P=P, m=m, **options)
    owner = ct.stage_to_rank(s)
    assert sorted(owner) == list(range(s.num_stages))
    for r in range(P):
        assert [st for st in sorted(owner) if owner[st] == r] == sorted(s.stages_of(r))
    titan = dict(o.split("=", 1) for o in ct.torchtitan_options(s, "/x.csv"))
    auto = ct.automodel_options(s, "/x.csv")
    assert titan["--parallelism.num_pp_microbatches"] == str(m)
    assert auto["step_scheduler.local_batch_size"] // auto["distributed.pipeline.pp_microbatch_size"] == m
    for name in (titan["--parallelism.pipeline_parallel_schedule"], auto["distributed.pipeline.pp_schedule"]):
        # torchtitan: V-shape for ZBVZeroBubble and DualPipeV; AutoModel: for ZBVZeroBubble.
        style = "v" if name.lower() == "zbvzerobubble" else "loop"
        if s.V == 1:
            assert name.lower() in ("1f1b", "gpipe")
            continue
        placed = generate_rank_to_stage_mapping(P, s.num_stages, style=style)
        assert {r: placed[r] for r in range(P)} == {r: sorted(s.stages_of(r)) for r in range(P)}, name


def _check_lists_of(family, options, ranks, microbatches, runtimes):
    """Runs ctpipe.torch's transfer check on the family's lists for each runtime, over P in
    ``ranks`` and m in ``microbatches(P)`` (shapes the family's rule refuses skipped);
    returns how many lists passed (a failure raises ctpipe.Error)."""
    checked = 0
    for P in ranks:
        for m in microbatches(P):
            try:
                s = ctpipe.Schedule(family, P=P, m=m, **options)
            except ctpipe.Error:
                continue                      # a shape the family's rule refuses
            for runtime in runtimes:
                rows = s.actions(comms=True, runtime=runtime)
                ct._check_transfers(ct.parse_actions(rows, s, route="compute_comms"), ct.stage_to_rank(s), s)
                checked += 1
    return checked


@pytest.mark.parametrize("family,options", [pytest.param(f, o, id=label) for label, f, o in SCHEDULES])
def test_posted_lists_receive_in_send_order(family, options):
    """ctpipe's lists for runtime "posted" receive each peer's messages in the order that
    peer sends them, as PyTorch's runtime pairs them (ctpipe.torch's check), on every
    shape of the family with P in 2..5 and m in P-1..3P; the blocking (adjacent) lists of
    ZB-V P = 2, m = 3 do not, and are refused naming the two messages."""
    checked = _check_lists_of(family, options, range(2, 6), lambda P: range(max(1, P - 1), 3 * P + 1),
                              ("posted", "rendezvous"))
    assert checked >= 8
    s = ctpipe.Schedule("zbv", P=2, m=3)
    rows = s.actions(comms=True, runtime="blocking")
    with pytest.raises(ctpipe.Error, match=re.escape("its message 2 is 0SEND_F2 (rank 0, position 7), rank 1's "
                                                     "receive 2 is for 3SEND_B0 (position 10)")):
        ct._check_transfers(ct.parse_actions(rows, s, route="compute_comms"), ct.stage_to_rank(s), s)


@pytest.mark.parametrize("family,options", [pytest.param(f, o, id=label) for label, f, o in SCHEDULES])
def test_stream_lists_pair_on_one_process_group(family, options):
    """ctpipe's lists for the stream models with one stream per rank, per peer and per
    directed pair receive each peer's messages in the order that peer sends them, so
    PyTorch's runtime on one process group (tag 0, posting order) pairs them right, on
    every shape of the family with P in 2..4 and m in P..2P; the lists for
    stream-direction pair each direction apart (two communicators), and ZB-V's at P = 2
    are refused on one group, naming the two messages."""
    checked = _check_lists_of(family, options, range(2, 5), lambda P: range(P, 2 * P + 1),
                              ("stream-rank", "stream-peer", "stream-edge"))
    assert checked >= 3
    s = ctpipe.Schedule("zbv", P=2, m=2)
    rows = s.actions(comms=True, runtime="stream-direction")
    with pytest.raises(ctpipe.Error, match=re.escape("its message 1 is 0SEND_F1 (rank 0, position 5)")):
        ct._check_transfers(ct.parse_actions(rows, s, route="compute_comms"), ct.stage_to_rank(s), s)


class _Stage:
    """Stand-in for a PipelineStage's attributes that check_stages reads."""

    def __init__(self, index, num_stages, rank, size):
        self.stage_index, self.num_stages, self.group_rank, self.group_size = index, num_stages, rank, size


def test_checks_without_processes():
    s = ctpipe.Schedule("zbv", P=2, m=4)
    with pytest.raises(ctpipe.Error, match=r"^ctpipe: .*3 ranks.*P = 2"):
        ct.check_stages([_Stage(0, 4, 0, 3), _Stage(3, 4, 0, 3)], s)
    with pytest.raises(ctpipe.Error, match=r"num_stages = 6.*has 4"):
        ct.check_stages([_Stage(0, 6, 0, 2), _Stage(3, 6, 0, 2)], s)
    with pytest.raises(ctpipe.Error, match=r"rank 1 holds stages \[1, 3\].*\[1, 2\]"):
        ct.check_stages([_Stage(1, 4, 1, 2), _Stage(3, 4, 1, 2)], s)
    assert ct.check_stages([_Stage(1, 4, 1, 2), _Stage(2, 4, 1, 2)], s) == 1
    with pytest.raises(ctpipe.Error, match="route 'x'"):
        ct.pipeline_schedule([_Stage(0, 4, 0, 2), _Stage(3, 4, 0, 2)], s, route="x")
    with pytest.raises(ctpipe.Error, match="check_ranks must be True or False, not 'yes'"):
        ct.pipeline_schedule([_Stage(0, 4, 0, 2), _Stage(3, 4, 0, 2)], s, check_ranks="yes")
    with pytest.raises(ctpipe.Error, match="two copies"):
        ct.pipeline_schedule([_Stage(0, 4, 0, 2)], ctpipe.Schedule("dualpipe", P=2, m=4))
    rows = s.actions()
    for bad, text in (("0F1x", "'0F1x'"), ("0F", "'0F'"), ("0F9", "micro-batch 9"), ("1F0", "stage 1 is on rank 1"),
                      ("0SEND_F0", "not a compute action"), ("", "empty action"), ("7F0", "stage 7")):
        broken = [list(r) for r in rows]
        broken[0][1] = bad
        with pytest.raises(ctpipe.Error, match=re.escape(text)):
            ct.parse_actions(broken, s)
    with pytest.raises(ctpipe.Error, match="3 rows"):
        ct.parse_actions(rows + [rows[0]], s)
    # A compute action twice, by either route (PyTorch's own check counts too few, not too many).
    with pytest.raises(ctpipe.Error, match=re.escape("runs 0F0 a second time (first at rank 0, position 0)")):
        ct.parse_actions([rows[0] + ["0F0"], rows[1]], s)
    good = s.actions(comms=True, runtime="posted")
    twice = [list(r) for r in good]
    twice[0].insert(twice[0].index("0F0") + 1, "0F0")
    with pytest.raises(ctpipe.Error, match="runs 0F0 a second time"):
        ct.parse_actions(twice, s, route="compute_comms")
    # REDUCE_GRAD: missing (gradients m times too large), twice (divided by m twice), early.
    assert ct.parse_actions(good, s, route="compute_comms")
    with pytest.raises(ctpipe.Error, match=r"stage 0 has no 0REDUCE_GRAD .* m = 4 times too large"):
        ct.parse_actions(s.actions(comms=True, runtime="posted", torch_passes="none"), s, route="compute_comms")
    with pytest.raises(ctpipe.Error, match=r"0REDUCE_GRAD a second time .* by m twice"):
        ct.parse_actions([good[0] + ["0REDUCE_GRAD"], good[1]], s, route="compute_comms")
    early = [list(r) for r in good]
    early[0].remove("0REDUCE_GRAD")
    early[0].insert(0, "0REDUCE_GRAD")
    with pytest.raises(ctpipe.Error, match=r"position 0: 0REDUCE_GRAD comes before 0W3"):
        ct.parse_actions(early, s, route="compute_comms")
    # Arguments of the wrong type: ctpipe.Error naming them, never TypeError or AttributeError.
    for bad, text in ((None, "not NoneType"), (5, "not int"), ({0: rows[0], 1: rows[1]}, "not dict"),
                      ([None, rows[1]], "NoneType"), ("0F0", "not str")):
        with pytest.raises(ctpipe.Error, match=re.escape(text)):
            ct.parse_actions(bad, s)
    with pytest.raises(ctpipe.Error, match="an action is a str"):
        ct.parse_actions([[0], rows[1]], s)
    for call in (lambda: ct.parse_actions(rows, "zbv"), lambda: ct.stage_to_rank("zbv"),
                 lambda: ct.torchtitan_options("zbv", "x.csv"), lambda: ct.automodel_options("zbv", "x.csv"),
                 lambda: ct.write_schedule_csv("zbv", "x.csv")):
        with pytest.raises(ctpipe.Error, match="must be a ctpipe.Schedule, not str"):
            call()
    for runtime in (None, "bogus", 3):
        for route in ("compute_only", "compute_comms"):
            with pytest.raises(ctpipe.Error, match=re.escape(f"runtime {runtime!r} is not one of")):
                ct.route_actions(s, route, runtime=runtime)
            with pytest.raises(ctpipe.Error, match=re.escape(f"runtime {runtime!r} is not one of")):
                ct.pipeline_schedule([_Stage(0, 4, 0, 2), _Stage(3, 4, 0, 2)], s, route=route, runtime=runtime)
    for fsdp in ("no", 0, None):
        with pytest.raises(ctpipe.Error, match=re.escape(f"fsdp must be True or False, not {fsdp!r}")):
            ct.route_actions(s, "compute_comms", fsdp=fsdp)
    with pytest.raises(ctpipe.Error, match="comms must be True or False"):
        ct.write_schedule_csv(s, "x.csv", comms="yes")


def test_import_ctpipe_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, ctpipe; ctpipe.Schedule('1f1b', P=2, m=2).actions(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_write_schedule_csv(tmp_path):
    s = ctpipe.Schedule("interleaved-1f1b", P=2, m=4, variant="torch")
    path = ct.write_schedule_csv(s, tmp_path / "a.csv")
    assert open(path).read() == s.csv()
    path = ct.write_schedule_csv(s, tmp_path / "b.csv", comms=True, runtime="rendezvous")
    assert open(path).read() == "".join(",".join(r) + "\n" for r in s.actions(comms=True, runtime="rendezvous"))
    with pytest.raises(ctpipe.Error, match="two copies"):
        ct.write_schedule_csv(ctpipe.Schedule("dualpipe", P=2, m=4), tmp_path / "c.csv")
    with pytest.raises(ctpipe.Error, match=r"cannot write the schedule to .*no-such-folder"):
        ct.write_schedule_csv(s, tmp_path / "no-such-folder" / "d.csv")
