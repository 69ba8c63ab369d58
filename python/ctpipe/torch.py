"""ctpipe's schedules in PyTorch's pipeline runtime (``torch.distributed.pipelining``).

``import ctpipe`` never imports torch; this module does, at its top, and is imported only
by code that trains with PyTorch::

    import ctpipe
    import ctpipe.torch

    schedule = ctpipe.Schedule("zbv", P=4, m=8)
    held = schedule.stages_of(pp_rank)
    stages = [PipelineStage(chunk(s), s, schedule.num_stages, device, group=pp_group)
              for s in held]
    sched = ctpipe.torch.pipeline_schedule(stages, schedule, loss_fn=loss_fn)
    args = (x,) if 0 in held else ()                     # the batch: stage 0's rank
    last = schedule.num_stages - 1 in held               # targets and losses: the last stage's
    losses = []
    sched.step(*args, **({"target": y, "losses": losses} if last else {}))

The object returned is PyTorch's own ``_PipelineScheduleRuntime``: ctpipe chooses the order
of the actions, PyTorch runs them (docs/pytorch.md). Everything ctpipe checks is checked
before anything is built, and a problem raises ``ctpipe.Error`` (message ``ctpipe: ...``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import torch  # noqa: F401  (this module is the torch-only part of ctpipe)
from torch.distributed.pipelining.schedules import _Action, _PipelineScheduleRuntime

import ctpipe

__all__ = [
    "ROUTES",
    "stage_to_rank",
    "route_actions",
    "parse_actions",
    "check_stages",
    "pipeline_schedule",
    "write_schedule_csv",
    "torchtitan_options",
    "automodel_options",
]

#: The two ways to hand a ctpipe order to ``_PipelineScheduleRuntime`` (the ``format`` of its
#: ``_prepare_schedule_with_comms``).
ROUTES = ("compute_only", "compute_comms")
#: The runtime models ctpipe's compute_comms lists are ordered for (docs/runtimes.md).
RUNTIMES = ("blocking", "rendezvous", "posted", "batched", "stream-rank", "stream-peer", "stream-direction",
            "stream-edge")

# PyTorch's one-copy format: every stage runs every micro-batch on one rank. DualPipe keeps two
# copies of the model (see _refuse_family).
_TWO_COPY_FAMILIES = ("dualpipe",)

# The action kinds PyTorch's runtime knows (torch.distributed.pipelining.schedules._ComputationType).
_COMPUTE = ("F", "B", "I", "W")
_TRANSFERS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
_STAGE_ONLY = ("UNSHARD", "RESHARD", "REDUCE_GRAD")

# PyTorch's schedule class names (torch.distributed.pipelining.schedules.get_schedule_class,
# case-insensitive) from which torchtitan and NeMo AutoModel derive the stage placement when
# they load a CSV: a single-stage class for V = 1 (one stage per rank), a multi-stage class for
# the loop with V >= 2, ZBVZeroBubble for the V-shape (the one class both place as a V).
# PipelineScheduleMulti is what torchtitan's own custom-CSV configuration names.
_TORCHTITAN_CLASS = {"single": "1F1B", "loop": "PipelineScheduleMulti", "v": "ZBVZeroBubble"}
_AUTOMODEL_CLASS = {"single": "1f1b", "loop": "interleaved1f1b", "v": "ZBVZeroBubble"}


def _error(message: str) -> ctpipe.Error:
    return ctpipe.Error("ctpipe: " + message)


def stage_to_rank(schedule: Any) -> dict[int, int]:
    """The pipeline rank that holds each stage: ``{stage index: rank}`` for all
    ``schedule.num_stages`` stages.

    Loop placement (gpipe, 1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2,
    interleaved-zb, combined-1f1b): stage ``s`` on rank ``s % P``. V-shape (zbv, dualpipev, v-half, v-min):
    rank ``r`` holds ``r`` and ``2P - 1 - r``. Read from ``schedule.stages_of(rank)``, so it
    is the map PyTorch's ``_validate_schedule`` infers from the actions
    (``stage_index_to_group_rank``) and ``torch.distributed.pipelining._utils.
    generate_stage_to_rank_mapping(P, P * V, style="loop" | "v")`` computes.

    Raises ``ctpipe.Error`` if a stage is placed on two ranks or on none.
    """
    _check_schedule(schedule)
    owner: dict[int, int] = {}
    for rank in range(schedule.P):
        for s in schedule.stages_of(rank):
            if s in owner:
                raise _error(f"stage {s} is placed on rank {owner[s]} and on rank {rank}")
            owner[s] = rank
    missing = [s for s in range(schedule.num_stages) if s not in owner]
    if missing:
        raise _error(f"stages {missing} are placed on no rank (num_stages = {schedule.num_stages})")
    return dict(sorted(owner.items()))


def route_actions(schedule: Any, route: str = "compute_only", *, runtime: str = "rendezvous",
                  fsdp: bool = True) -> list[list[str]]:
    """The per-rank action strings a route loads: ``schedule.actions()`` for
    ``"compute_only"``, ``schedule.actions(comms=True, runtime=runtime, fsdp=fsdp)`` for
    ``"compute_comms"``. A list of P lists of str (``"0F3"``, ``"1SEND_B2"``,
    ``"(0F3;3B1)OVERLAP_F_B"``). Raises ``ctpipe.Error`` for another route."""
    _check_route(route)
    _check_schedule(schedule)
    _check_runtime_fsdp(runtime, fsdp)
    if route == "compute_only":
        return schedule.actions()
    return schedule.actions(comms=True, runtime=runtime, fsdp=fsdp)


def _check_runtime_fsdp(runtime: Any, fsdp: Any) -> None:
    """``runtime`` one of the tool's runtime models, ``fsdp`` a bool, whatever the route
    (a value the route does not use is still refused, not ignored)."""
    if not isinstance(runtime, str) or runtime not in RUNTIMES:
        raise _error(f"runtime {runtime!r} is not one of {', '.join(repr(r) for r in RUNTIMES)}")
    if not isinstance(fsdp, bool):
        raise _error(f"fsdp must be True or False, not {fsdp!r}")


def _check_route(route: str) -> None:
    if route not in ROUTES:
        raise _error(f"route {route!r} is not one of {', '.join(repr(r) for r in ROUTES)}")


def _refuse_family(schedule: Any) -> None:
    _check_schedule(schedule)
    if schedule.family in _TWO_COPY_FAMILIES:
        P = schedule.P
        raise _error(
            f"{schedule.family} cannot run in PyTorch's pipeline runtime: it keeps two copies of "
            f"the model (stages 0..{P - 1} carry the first half of the micro-batches from rank 0 "
            f"to rank {P - 1}, stages {P}..{2 * P - 1}, stage {P} + k holding the layers of stage "
            f"k, carry the other half back, and the two copies' gradients are summed before the "
            f"optimizer step), while PyTorch's format has one copy whose every stage runs all "
            f"{schedule.m} micro-batches (its _validate_schedule refuses a stage with "
            f"{schedule.m // 2} forwards) and its runtime sums no gradients across stages; use "
            f"dualpipev, DualPipe's one-copy form"
        )


def _stage_list(stages: Any) -> list[Any]:
    if isinstance(stages, (list, tuple)):
        out = list(stages)
    else:
        out = [stages]
    if not out:
        raise _error("no stages given: a rank holds at least one stage")
    for stage in out:
        for attr in ("stage_index", "num_stages", "group_size", "group_rank"):
            if not hasattr(stage, attr):
                raise _error(f"a stage must be a torch.distributed.pipelining stage (PipelineStage), "
                             f"not {type(stage).__name__}")
    return out


def _check_schedule(schedule: Any) -> None:
    if not isinstance(schedule, ctpipe.Schedule):
        raise _error(f"the schedule must be a ctpipe.Schedule, not {type(schedule).__name__}")


def check_stages(stages: Any, schedule: Any) -> int:
    """Checks the stages one rank built against the schedule, and returns the rank.

    ``stages``: this rank's ``torch.distributed.pipelining`` stages (``PipelineStage``), a
    list, or one stage. Raises ``ctpipe.Error`` naming both values when the stages'
    process-group size (``stage.group_size``) differs from ``schedule.P``, their
    ``num_stages`` from ``schedule.num_stages``, or the stage indices they hold, in order,
    from ``schedule.stages_of(rank)`` (``rank`` is ``stage.group_rank``); also when the
    stages disagree among themselves on their group or stage count.
    """
    stages = _stage_list(stages)
    first = stages[0]
    for st in stages[1:]:
        if st.group_size != first.group_size or st.group_rank != first.group_rank:
            raise _error(
                f"the stages of one rank are in different process groups (stage "
                f"{first.stage_index}: rank {first.group_rank} of {first.group_size}, stage "
                f"{st.stage_index}: rank {st.group_rank} of {st.group_size})")
        if st.num_stages != first.num_stages:
            raise _error(
                f"the stages of one rank disagree on num_stages (stage {first.stage_index}: "
                f"{first.num_stages}, stage {st.stage_index}: {st.num_stages})")
    if first.group_size != schedule.P:
        raise _error(
            f"the stages' process group has {first.group_size} ranks, the schedule has "
            f"P = {schedule.P}")
    if first.num_stages != schedule.num_stages:
        raise _error(
            f"the stages have num_stages = {first.num_stages}, the schedule has "
            f"{schedule.num_stages} (P * V = {schedule.P} * {schedule.V})")
    rank = first.group_rank
    held = [st.stage_index for st in stages]
    wanted = list(schedule.stages_of(rank))
    if held != wanted:
        raise _error(
            f"rank {rank} holds stages {held}, the schedule places stages {wanted} on it "
            f"(in this order)")
    return rank


def parse_actions(rows: Sequence[Sequence[str]], schedule: Any, *,
                  route: str = "compute_only") -> dict[int, list[_Action]]:
    """Parses per-rank action strings into PyTorch's ``_Action`` (``_Action.from_str``), as
    ``{rank: [actions]}`` for ``_prepare_schedule_with_comms``, checking each one.

    PyTorch's parser reads a prefix (``"0F3x"`` reads as ``0F3``, ``"0F"`` as a forward
    without micro-batch), so each string must read back to itself (``str(action)``). Raises
    ``ctpipe.Error`` naming the action, its rank and position when: a string is not an
    action; the row count is not ``schedule.P``; a compute action has no micro-batch or one
    outside ``[0, m)``; an action's stage is not held by its row's rank
    (``schedule.stages_of``); a compute action appears twice; route "compute_only" holds a
    transfer or FSDP action; or, for route "compute_comms", the transfers do not pair up
    (see ``_check_transfers``) or a stage's ``REDUCE_GRAD`` is missing, repeated or before
    one of its backwards (``_check_reduce_grad``). Also when ``rows`` is not a list of lists
    of str, or ``schedule`` not a ``ctpipe.Schedule``.
    """
    _check_route(route)
    _check_schedule(schedule)
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or any(
            isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in rows):
        raise _error(f"actions must be a list of rows (one list of action strings per rank), "
                     f"not {type(rows).__name__}" + ("" if not isinstance(rows, Sequence) else " of "
                     + ", ".join(sorted({type(r).__name__ for r in rows}))))
    if len(rows) != schedule.P:
        raise _error(f"the action list has {len(rows)} rows, the schedule has P = {schedule.P}")
    owner = stage_to_rank(schedule)
    out: dict[int, list[_Action]] = {}
    seen: dict[str, tuple[int, int]] = {}   # compute leaf -> (rank, position) of its first use
    for rank, row in enumerate(rows):
        actions: list[_Action] = []
        for pos, text in enumerate(row):
            where = f"rank {rank}, position {pos}"
            if not isinstance(text, str):
                raise _error(f"{where}: an action is a str such as '0F3', not {type(text).__name__}")
            text = text.strip()
            if not text:
                raise _error(f"{where}: an empty action (PyTorch's runtime takes no idle cells)")
            try:
                action = _Action.from_str(text)
            except (RuntimeError, ValueError) as exc:
                raise _error(f"{where}: action {text!r} is not a PyTorch action ({exc})") from None
            if action is None or str(action) != text:
                raise _error(f"{where}: action {text!r} is not a PyTorch action (it reads as "
                             f"{str(action)!r})")
            leaves = action.sub_actions if action.sub_actions is not None else (action,)
            if action.computation_type.value == "OVERLAP_F_B" and action.sub_actions is None:
                raise _error(f"{where}: action {text!r} is an overlapped pair without its actions")
            for leaf in leaves:
                kind = leaf.computation_type.value
                if action.sub_actions is not None and kind not in _COMPUTE:
                    raise _error(f"{where}: action {text!r} pairs {str(leaf)!r}, not a compute action")
                if kind in _COMPUTE + _TRANSFERS:
                    j = leaf.microbatch_index
                    if j is None or not 0 <= j < schedule.m:
                        raise _error(f"{where}: action {text!r} has micro-batch {j}, outside "
                                     f"[0, {schedule.m})")
                elif leaf.microbatch_index is not None:
                    raise _error(f"{where}: action {text!r}: {kind} takes no micro-batch")
                if leaf.stage_index not in owner:
                    raise _error(f"{where}: action {text!r} names stage {leaf.stage_index}, "
                                 f"outside [0, {schedule.num_stages})")
                if owner[leaf.stage_index] != rank:
                    raise _error(f"{where}: action {text!r} runs stage {leaf.stage_index} on rank "
                                 f"{rank}, but stage {leaf.stage_index} is on rank "
                                 f"{owner[leaf.stage_index]}")
                if route == "compute_only" and kind not in _COMPUTE:
                    raise _error(f"{where}: action {text!r} is not a compute action, and route "
                                 f"'compute_only' lets PyTorch add the {kind} actions itself")
                if kind in _COMPUTE:
                    name = str(leaf)
                    if name in seen:
                        r0, p0 = seen[name]
                        raise _error(f"{where}: action {text!r} runs {name} a second time (first at "
                                     f"rank {r0}, position {p0}); each compute action runs once")
                    seen[name] = (rank, pos)
            actions.append(action)
        out[rank] = actions
    if route == "compute_comms":
        _check_transfers(out, owner, schedule)
        _check_reduce_grad(out, schedule)
    return out


def _check_reduce_grad(actions: dict[int, list[_Action]], schedule: Any) -> None:
    """Each stage's ``REDUCE_GRAD`` in a compute_comms list: once, on its rank, after the
    stage's every B and W (where ``_add_reduce_grad`` puts it). PyTorch's runtime reduces
    the gradients across data-parallel ranks and divides them by m (``scale_grads=True``)
    only there, so a list without it trains with gradients m times too large, one with it
    twice divides them by m twice, and one with it early scales only part of them; each is
    refused, naming the stage."""
    for rank, row in actions.items():
        last_backward: dict[int, int] = {}
        reduce_at: dict[int, int] = {}
        for pos, action in enumerate(row):
            kind = action.computation_type.value
            if kind == "REDUCE_GRAD":
                s = action.stage_index
                if s in reduce_at:
                    raise _error(f"rank {rank}, position {pos}: {s}REDUCE_GRAD a second time (first at "
                                 f"position {reduce_at[s]}): PyTorch's runtime would divide stage {s}'s "
                                 f"gradients by m twice")
                reduce_at[s] = pos
                continue
            leaves = action.sub_actions if action.sub_actions is not None else (action,)
            for leaf in leaves:
                if leaf.computation_type.value in ("B", "W"):
                    last_backward[leaf.stage_index] = pos
        for s in sorted(last_backward):
            if s not in reduce_at:
                raise _error(f"rank {rank}: stage {s} has no {s}REDUCE_GRAD after its last backward: "
                             f"PyTorch's runtime reduces and scales a stage's gradients only at that "
                             f"action, so they would be m = {schedule.m} times too large (ctpipe's "
                             f"lists carry it unless torch_passes='none')")
            if reduce_at[s] < last_backward[s]:
                raise _error(f"rank {rank}, position {reduce_at[s]}: {s}REDUCE_GRAD comes before "
                             f"{row[last_backward[s]]} (position {last_backward[s]}), a backward of "
                             f"stage {s}: the gradients computed after it would not be reduced or "
                             f"scaled")


def _message(action: _Action) -> tuple[int, str, int]:
    """(producing stage, direction, micro-batch) of a transfer action."""
    kind = action.computation_type.value
    s, j = action.stage_index, action.microbatch_index
    if kind == "SEND_F":
        return (s, "F", j)
    if kind == "RECV_F":
        return (s - 1, "F", j)
    if kind == "SEND_B":
        return (s, "B", j)
    return (s + 1, "B", j)  # RECV_B


def _message_text(msg: tuple[int, str, int]) -> str:
    s, d, j = msg
    return f"{s}SEND_{d}{j}"


def _check_transfers(actions: dict[int, list[_Action]], owner: dict[int, int], schedule: Any) -> None:
    """The checks of a compute_comms list that PyTorch's runtime leaves to run time (where a
    missing receive raises on one rank and hangs the others, and a mis-ordered one trains on
    the wrong tensor):

    - every transfer crosses ranks: SEND_F of stage s (s < S-1) to the rank of s+1, SEND_B
      of s (s > 0) to the rank of s-1, each sent once and received once;
    - each forward of a stage whose predecessor is on another rank has its RECV_F earlier on
      its row, each I or B of a stage whose successor is on another rank its RECV_B, and each
      SEND comes after the compute action that produces it;
    - between two ranks the messages are received in the order they are sent: PyTorch posts
      every transfer as one isend / irecv on the pipeline group with tag 0, and the backends
      (gloo, NCCL) match a pair of ranks' messages in posting order, so the k-th SEND from
      rank a to rank b fills the k-th RECV on b from a.
    """
    S = schedule.num_stages
    sends: dict[tuple[int, int], list[tuple[tuple[int, str, int], int]]] = defaultdict(list)
    recvs: dict[tuple[int, int], list[tuple[tuple[int, str, int], int]]] = defaultdict(list)
    for rank, row in actions.items():
        posted: set[tuple[int, str, int]] = set()   # received messages not yet consumed
        produced: set[tuple[int, str, int]] = set()
        for pos, action in enumerate(row):
            where = f"rank {rank}, position {pos}, action {str(action)!r}"
            kind = action.computation_type.value
            if kind in _TRANSFERS:
                msg = _message(action)
                src, d, j = msg
                dst_stage = src + 1 if d == "F" else src - 1
                if not 0 <= src < S:
                    raise _error(f"{where}: its message comes from stage {src}, outside [0, {S})")
                if not 0 <= dst_stage < S:
                    raise _error(f"{where}: stage {src} has no {'next' if d == 'F' else 'previous'} stage")
                if owner[src] == owner[dst_stage]:
                    raise _error(f"{where}: stages {src} and {dst_stage} are both on rank "
                                 f"{owner[src]}; PyTorch passes that tensor locally")
                if kind.startswith("SEND"):
                    if msg not in produced:
                        raise _error(f"{where}: sent before the action that computes it")
                    sends[(rank, owner[dst_stage])].append((msg, pos))
                else:
                    if msg in posted:
                        raise _error(f"{where}: received twice before it is used")
                    posted.add(msg)
                    recvs[(owner[src], rank)].append((msg, pos))
                continue
            if kind in _STAGE_ONLY:
                continue
            leaves = action.sub_actions if action.sub_actions is not None else (action,)
            for leaf in leaves:
                lk, s, j = leaf.computation_type.value, leaf.stage_index, leaf.microbatch_index
                if lk == "F":
                    if s > 0 and owner[s - 1] != rank:
                        if (s - 1, "F", j) not in posted:
                            raise _error(f"{where}: forward {s}F{j} has no {s}RECV_F{j} before it "
                                         f"on its rank")
                        posted.discard((s - 1, "F", j))
                    produced.add((s, "F", j))
                elif lk in ("B", "I"):
                    if s < S - 1 and owner[s + 1] != rank:
                        if (s + 1, "B", j) not in posted:
                            raise _error(f"{where}: backward {s}{lk}{j} has no {s}RECV_B{j} "
                                         f"before it on its rank")
                        posted.discard((s + 1, "B", j))
                    produced.add((s, "B", j))
        if posted:
            left = sorted(posted)
            raise _error(f"rank {rank}: received and never used: {left[0]} "
                         f"({len(left)} in all)")
    for pair in sorted(set(sends) | set(recvs)):
        a, b = pair
        out = sends.get(pair, [])
        inn = recvs.get(pair, [])
        for k in range(max(len(out), len(inn))):
            sm = out[k][0] if k < len(out) else None
            rm = inn[k][0] if k < len(inn) else None
            if sm == rm:
                continue
            if sm is None:
                raise _error(f"rank {b} receives {_message_text(rm)} from rank {a} (position "
                             f"{inn[k][1]}), which rank {a} never sends")
            if rm is None:
                raise _error(f"rank {a} sends {_message_text(sm)} to rank {b} (position "
                             f"{out[k][1]}), which rank {b} never receives")
            raise _error(
                f"rank {a} sends to rank {b} in another order than rank {b} receives: its "
                f"message {k} is {_message_text(sm)} (rank {a}, position {out[k][1]}), rank "
                f"{b}'s receive {k} is for {_message_text(rm)} (position {inn[k][1]}); "
                f"PyTorch matches one pair of ranks' messages in posting order (tag 0), so "
                f"this list would train on the wrong tensors (ctpipe's lists for every "
                f"runtime but 'blocking' and 'stream-direction', whose two communicators pair "
                f"apart, keep the order; route 'compute_only' lets PyTorch place the transfers)")


def pipeline_schedule(
    stages: Any,
    schedule: Any,
    *,
    loss_fn: Callable[..., Any] | None = None,
    route: str = "compute_only",
    runtime: str = "rendezvous",
    fsdp: bool = True,
    scale_grads: bool = True,
    actions: Sequence[Sequence[str]] | None = None,
    check_ranks: bool = True,
    **kwargs: Any,
) -> _PipelineScheduleRuntime:
    """PyTorch's pipeline runtime, loaded with ctpipe's order.

    Builds ``torch.distributed.pipelining.schedules._PipelineScheduleRuntime(stages,
    n_microbatches=schedule.m, loss_fn=loss_fn, scale_grads=scale_grads, **kwargs)`` and
    loads the actions with its ``_prepare_schedule_with_comms(actions, format=route)``:

    - ``route="compute_only"``: ``schedule.actions()``, the compute order (F, B, I, W,
      ``(aF j;bB k)OVERLAP_F_B``); PyTorch adds UNSHARD/RESHARD (``_add_unshard_reshard``),
      REDUCE_GRAD (``_add_reduce_grad``) and its sends and receives (``_add_send_recv``).
    - ``route="compute_comms"``: ``schedule.actions(comms=True, runtime=runtime,
      fsdp=fsdp)``, ctpipe's own lowering with SEND_F/RECV_F/SEND_B/RECV_B, REDUCE_GRAD and
      (``fsdp=True``) UNSHARD/RESHARD; PyTorch runs it as given.

    ``sched.step(x, target=y, losses=losses)`` then trains one step: ``x`` on the rank of
    stage 0, ``y`` and ``losses`` on the rank of the last stage; the batch (dim 0) is split
    into ``schedule.m`` micro-batches.

    Arguments: ``stages``, this rank's ``PipelineStage`` objects (or one) in the order of
    ``schedule.stages_of(rank)``; ``schedule``, a ``ctpipe.Schedule``; ``loss_fn(output,
    target)`` a micro-batch's loss (with ``scale_grads=True`` the gradients are divided by
    m, the mean loss's, at REDUCE_GRAD); ``actions``, per-rank action strings to load
    instead of the schedule's own for the route (a list read from a file or edited;
    checked the same way); ``kwargs`` go to ``_PipelineScheduleRuntime``
    (``args_chunk_spec``, ``kwargs_chunk_spec``, ``output_merge_spec``,
    ``backward_requires_autograd``, ``defer_pp_recv``).

    Raises ``ctpipe.Error`` before anything is built: a route other than the two, a
    ``runtime`` not in ``RUNTIMES`` or an ``fsdp`` not a bool (whatever the route); a family
    PyTorch's one-copy format cannot run (dualpipe); the stages' group size not
    ``schedule.P``, their ``num_stages`` not ``schedule.num_stages``, or their stage indices
    not ``schedule.stages_of(rank)`` (``check_stages``); an action list that does not parse
    or pair up (``parse_actions``); and if PyTorch's ``_validate_schedule`` or lowering
    refuses the list, with PyTorch's message.

    Every rank must give the same schedule, route and actions: with ``check_ranks=True``
    (the default) and ``torch.distributed`` initialised, the ranks compare them with one
    ``all_gather`` on the stages' group (a collective: every rank calls
    ``pipeline_schedule`` once, as it must anyway) and each raises ``ctpipe.Error`` naming
    every rank's family, P, m, V, route and list where they differ (two ranks with 1F1B
    and GPipe at the same P and m would otherwise hang in the first step).
    """
    _check_route(route)
    _check_schedule(schedule)
    _refuse_family(schedule)
    _check_runtime_fsdp(runtime, fsdp)
    ctpipe._check_bool("check_ranks", check_ranks)
    stage_list = _stage_list(stages)
    check_stages(stage_list, schedule)
    rows = route_actions(schedule, route, runtime=runtime, fsdp=fsdp) if actions is None else actions
    parsed = parse_actions(rows, schedule, route=route)
    if check_ranks:
        _check_ranks_agree(stage_list, schedule, route, rows)

    sched = _PipelineScheduleRuntime(
        stage_list,
        n_microbatches=schedule.m,
        loss_fn=loss_fn,
        scale_grads=scale_grads,
        **kwargs,
    )
    try:
        if route == "compute_only":
            sched.pipeline_order = {r: list(a) for r, a in parsed.items()}
        sched._prepare_schedule_with_comms(parsed, format=route)
    except (AssertionError, ValueError, RuntimeError, KeyError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        # _validate_schedule names "Rank r, step k": name the action there too.
        m = re.search(r"Rank (\d+), step (\d+)", first)
        if m and int(m[1]) < len(rows) and int(m[2]) < len(rows[int(m[1])]):
            first += f" (action {rows[int(m[1])][int(m[2])]!r})"
        raise _error(f"PyTorch refused the {route} action list of {schedule.family} (P = "
                     f"{schedule.P}, m = {schedule.m}): {first}") from exc
    return sched


def _check_ranks_agree(stage_list: list[Any], schedule: Any, route: str, rows: Sequence[Sequence[str]]) -> None:
    """Raises ctpipe.Error on every rank when the ranks' schedules, routes or action lists
    differ (one all_gather on the stages' group; nothing without torch.distributed)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return
    text = "\n".join(",".join(str(a) for a in row) for row in rows)
    mine = (str(schedule.family), schedule.P, schedule.m, schedule.V, route,
            hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()[:12])
    first = stage_list[0]
    group = getattr(first, "group", None)
    # One fixed-size byte tensor per rank (all_gather_object pickles through NumPy, which
    # PyTorch's wheel does not require): on the CPU for gloo, on the stage's device else.
    device = torch.device("cpu") if dist.get_backend(group) == "gloo" else first.device
    size = 256
    data = "|".join(str(x) for x in mine).encode("utf-8")[:size]
    local = torch.zeros(size, dtype=torch.uint8, device=device)
    local[: len(data)] = torch.tensor(list(data), dtype=torch.uint8, device=device)
    gathered = [torch.zeros_like(local) for _ in range(first.group_size)]
    dist.all_gather(gathered, local, group=group)
    everyone = [bytes(t.cpu().tolist()).rstrip(b"\0").decode("utf-8", errors="replace").split("|")
                for t in gathered]
    if any(x != everyone[0] for x in everyone):
        each = "; ".join(f"rank {r}: {x[0]}, P = {x[1]}, m = {x[2]}, V = {x[3]}, {x[4]}, actions {x[5]}"
                         for r, x in enumerate(everyone))
        raise _error("the ranks give pipeline_schedule different schedules (every rank must give the same "
                     f"schedule, route and actions): {each}")


def write_schedule_csv(schedule: Any, path: str | os.PathLike[str], *, comms: bool = False,
                       runtime: str = "rendezvous", fsdp: bool = True) -> str:
    """Writes the schedule as the CSV file PyTorch's ``_PipelineScheduleRuntime._load_csv``
    reads (``csv.reader``: one row per rank, rank 0 first, one action per cell) and returns
    the path.

    ``comms=False`` (what torchtitan's ``--parallelism.pipeline_parallel_schedule_csv`` and
    NeMo AutoModel's ``distributed.pipeline.pp_schedule_csv`` take: both call
    ``_load_csv(path)``, format "compute_only"): ``schedule.actions()``, the text of
    ``ctpipe --format csv``. ``comms=True``: ``schedule.actions(comms=True, runtime=runtime,
    fsdp=fsdp)``, for ``_load_csv(path, format="compute_comms")``. The lists are checked
    as ``pipeline_schedule`` checks them (``ctpipe.Error``) before the file is written.
    """
    _check_schedule(schedule)
    _refuse_family(schedule)
    if not isinstance(comms, bool):
        raise _error(f"comms must be True or False, not {comms!r}")
    route = "compute_comms" if comms else "compute_only"
    rows = route_actions(schedule, route, runtime=runtime, fsdp=fsdp)
    parse_actions(rows, schedule, route=route)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    try:
        with open(path, "w", newline="") as f:
            f.write(buf.getvalue())
    except (OSError, TypeError) as exc:
        raise _error(f"cannot write the schedule to {path!r}: {exc}") from None
    return os.fspath(path)


def _placement_kind(schedule: Any) -> str:
    if schedule.V == 1:
        return "single"
    owner = stage_to_rank(schedule)
    if all(owner[s] == s % schedule.P for s in owner):
        return "loop"
    return "v"


def _check_projects(schedule: Any) -> str:
    _refuse_family(schedule)
    kind = _placement_kind(schedule)
    if kind == "v" and schedule.V != 2:
        raise _error(f"a V-shape with V = {schedule.V}: torchtitan and NeMo AutoModel place "
                     f"V-shapes with 2 stages per rank only")
    return kind


def torchtitan_options(schedule: Any, csv_path: str | os.PathLike[str]) -> list[str]:
    """The torchtitan command-line options that run ``csv_path`` (written by
    ``write_schedule_csv(schedule, csv_path)``), as a list of str.

    torchtitan loads the file with ``_PipelineScheduleRuntime._load_csv`` (compute only)
    but places the stages from ``--parallelism.pipeline_parallel_schedule``'s class (V-shape
    for ZBVZeroBubble and DualPipeV, loop otherwise; one stage per rank for a single-stage
    class, else 2 unless ``pipeline_parallel_layers_per_stage`` makes more), so that option
    is set to a class whose placement is ctpipe's: ``1F1B`` for V = 1,
    ``PipelineScheduleMulti`` for the loop with V >= 2 (give
    ``--parallelism.pipeline_parallel_layers_per_stage`` for V > 2), ``ZBVZeroBubble`` for
    the V-shape. ``--parallelism.num_pp_microbatches`` is m. torchtitan builds the runtime
    with ``scale_grads=False`` (its loss does the scaling). Raises ``ctpipe.Error`` for
    dualpipe and for a V-shape with V != 2.
    """
    kind = _check_projects(schedule)
    return [
        f"--parallelism.pipeline_parallel_degree={schedule.P}",
        f"--parallelism.pipeline_parallel_schedule={_TORCHTITAN_CLASS[kind]}",
        f"--parallelism.pipeline_parallel_schedule_csv={os.fspath(csv_path)}",
        f"--parallelism.num_pp_microbatches={schedule.m}",
    ]


def automodel_options(schedule: Any, csv_path: str | os.PathLike[str], *,
                      microbatch_size: int = 1) -> dict[str, Any]:
    """The NeMo AutoModel configuration keys that run ``csv_path`` (written by
    ``write_schedule_csv(schedule, csv_path)``), as ``{dotted key: value}`` (YAML keys, or
    ``--key value`` overrides).

    AutoModel loads the file with ``_PipelineScheduleRuntime._load_csv`` (compute only) and
    places the stages from ``distributed.pipeline.pp_schedule``'s class (V-shape only for
    ZBVZeroBubble, loop otherwise; 1 or 2 stages per rank unless ``layers_per_stage``), so
    that key is set too. Its micro-batch count is ``step_scheduler.local_batch_size //
    distributed.pipeline.pp_microbatch_size``, set here to m. Raises ``ctpipe.Error`` for
    dualpipe and for a V-shape with V != 2.
    """
    kind = _check_projects(schedule)
    if isinstance(microbatch_size, bool) or not isinstance(microbatch_size, int) or microbatch_size < 1:
        raise _error(f"automodel_options(): microbatch_size must be an int >= 1, not {microbatch_size!r}")
    return {
        "distributed.pp_size": schedule.P,
        "distributed.pipeline.pp_schedule": _AUTOMODEL_CLASS[kind],
        "distributed.pipeline.pp_schedule_csv": os.fspath(csv_path),
        "distributed.pipeline.pp_microbatch_size": microbatch_size,
        "step_scheduler.local_batch_size": schedule.m * microbatch_size,
    }
