"""Multi-process harness for test_torch_training.py: P processes on localhost (gloo, CPU,
float64) started once per pool; each runs every case it is given and reports back through a
queue. A case that raises on a rank, or does not finish within its time, fails by name; the
pool is then stopped and started again for the cases after it.

A case is a dict:
  name            str, unique
  kind            "train" (default: ctpipe.torch.pipeline_schedule, one step), "csv" (the
                  file of write_schedule_csv through PyTorch's _load_csv), "bad" (expects
                  ctpipe.Error before any step), "raw" (loads the action rows into PyTorch's
                  runtime without ctpipe's checks) or "fsdp" (P pipeline ranks x 2
                  data-parallel ranks, FSDP2 on each stage)
  family, P, m    the schedule; options: dict of other ctpipe.Schedule keywords
  route, runtime, fsdp   pipeline_schedule's keywords
  seed            weights and data
  bad             for kind "bad": what to break (see run_bad_case); expect: the texts its
                  message must hold (a list, or {rank: list})
  timeout         seconds this case may take (default run_cases' case_timeout)
  rows            for kind "raw": the per-rank action strings to load (format compute_comms)

A worker's report for a case: {"name", "rank", "ok", "error", "loss_err", "grad_err",
"executed", "expected", "checks": {...}}.
"""

from __future__ import annotations

import os
import queue as queue_mod
import socket
import time
import traceback
from typing import Any

D = 6            # features of every block's input and output
MB = 2           # samples per micro-batch
TOL = 1e-5       # relative error allowed against the single-process reference

_TRANSFER_KINDS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
_COMPUTE_MARK = ("F", "B", "I", "W")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- model


def make_blocks(num_stages: int, seed: int):
    """num_stages blocks, Linear(D, D) + tanh each (the last without tanh), float64,
    deterministic from the seed: identical in every process."""
    import torch

    g = torch.Generator().manual_seed(seed)
    blocks = []
    for s in range(num_stages):
        lin = torch.nn.Linear(D, D, dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(D, D, generator=g, dtype=torch.float64) / D ** 0.5)
            lin.bias.copy_(torch.randn(D, generator=g, dtype=torch.float64) * 0.1)
        blocks.append(torch.nn.Sequential(lin) if s == num_stages - 1
                      else torch.nn.Sequential(lin, torch.nn.Tanh()))
    return blocks


def make_data(m: int, seed: int, replica: int = 0):
    import torch

    g = torch.Generator().manual_seed(seed * 1000 + 17 + replica)
    x = torch.randn(m * MB, D, generator=g, dtype=torch.float64)
    y = torch.randn(m * MB, D, generator=g, dtype=torch.float64)
    return x, y


def loss_fn(output, target):
    import torch

    return torch.nn.functional.mse_loss(output, target)


def reference(num_stages: int, m: int, seed: int, replicas: int = 1):
    """Single-process reference: the loss of every micro-batch and each stage's parameter
    gradients of the mean loss over the m micro-batches (averaged over data replicas)."""
    import copy

    import torch

    blocks = make_blocks(num_stages, seed)
    model = torch.nn.Sequential(*copy.deepcopy(blocks))
    all_losses = []
    for rep in range(replicas):
        x, y = make_data(m, seed, rep)
        losses = []
        total = 0
        for xj, yj in zip(x.chunk(m), y.chunk(m)):
            lj = loss_fn(model(xj), yj)
            losses.append(lj.detach().clone())
            total = total + lj
        (total / m / replicas).backward()
        all_losses.append(losses)
    grads = [[p.grad.detach().clone() for p in block.parameters()] for block in model]
    return all_losses, grads


def rel_err(a, b) -> float:
    import torch

    diff = (a - b).abs().max().item()
    scale = max(b.abs().max().item(), 1e-12)
    return diff / scale


# --------------------------------------------------------------------------- recording


def record_step(fn):
    """Runs fn() under the profiler and returns (its result, the actions the runtime ran):
    _PipelineScheduleRuntime wraps every action it executes in
    record_function("PP:<action>") (schedules.py, _get_profiler_function_name); nothing of
    PyTorch is patched."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        result = fn()
    raw = getattr(prof.profiler, "kineto_results", None)
    if raw is not None:  # the raw events: some 15 times faster than prof.events()
        events = [(e.start_ns(), e.name()) for e in raw.events() if e.name().startswith("PP:")]
    else:
        events = [(e.time_range.start, e.name) for e in prof.events() if e.name.startswith("PP:")]
    events.sort()
    return result, [name[3:] for _, name in events]


def _is_transfer(a: str) -> bool:
    return any(k in a for k in _TRANSFER_KINDS)


def _is_compute(a: str) -> bool:
    return a.endswith("OVERLAP_F_B") or (not _is_transfer(a) and a.rstrip("0123456789")[-1:] in _COMPUTE_MARK
                                         and not a.endswith(("UNSHARD", "RESHARD", "REDUCE_GRAD")))


# --------------------------------------------------------------------------- cases


def _schedule(case):
    import ctpipe

    return ctpipe.Schedule(case["family"], P=case["P"], m=case["m"], **case.get("options", {}))


def _stages_for(blocks, held, num_stages, group=None):
    """PipelineStage objects in static mode (example input and output given): no metadata
    inference at the first step (which sends Python objects and needs numpy)."""
    import torch
    from torch.distributed.pipelining import PipelineStage

    def example(requires_grad):
        return torch.zeros(MB, D, dtype=torch.float64, requires_grad=requires_grad)

    # A received activation must require grad (its buffer is made from this example), the
    # model's input need not.
    return [PipelineStage(blocks[s], s, num_stages, torch.device("cpu"), input_args=example(s > 0),
                          output_args=example(True), group=group) for s in held]


def _step(sched, held, num_stages, x, y):
    losses: list = []
    kwargs: dict[str, Any] = {}
    if num_stages - 1 in held:
        kwargs = {"target": y, "losses": losses}
    args = (x,) if 0 in held else ()
    _, executed = record_step(lambda: sched.step(*args, **kwargs))
    return losses, executed


def _compare(held, blocks, losses, all_ref_losses, ref_grads, num_stages, replica=0,
             full_grad=None):
    """Loss and gradient errors on this rank against the reference."""
    loss_err = 0.0
    if num_stages - 1 in held:
        ref_losses = all_ref_losses[replica]
        if len(losses) != len(ref_losses):
            raise AssertionError(f"{len(losses)} losses, expected {len(ref_losses)}")
        for a, b in zip(losses, ref_losses):
            loss_err = max(loss_err, rel_err(a.detach(), b))
    grad_err = 0.0
    for s in held:
        for p, g in zip(blocks[s].parameters(), ref_grads[s]):
            got = full_grad(p) if full_grad else p.grad
            if got is None:
                raise AssertionError(f"stage {s}: a parameter has no gradient after the step")
            grad_err = max(grad_err, rel_err(got, g))
    return loss_err, grad_err


def _setup(case, rank):
    """A case's schedule, stage count, seed, model blocks, the stages this rank holds and
    their PipelineStages."""
    schedule = _schedule(case)
    S = schedule.num_stages
    seed = case.get("seed", 1)
    blocks = make_blocks(S, seed)
    held = schedule.stages_of(rank)
    return schedule, S, seed, blocks, held, _stages_for(blocks, held, S)


def run_train_case(case, rank, world):
    import ctpipe.torch as ct

    schedule, S, seed, blocks, held, stages = _setup(case, rank)
    route = case.get("route", "compute_only")
    runtime = case.get("runtime", "posted")
    fsdp = case.get("fsdp", True)
    extra = case.get("kwargs", {})  # to _PipelineScheduleRuntime: defer_pp_recv
    sched = ct.pipeline_schedule(stages, schedule, loss_fn=loss_fn, route=route, runtime=runtime,
                                 fsdp=fsdp, scale_grads=True, **extra)
    x, y = make_data(schedule.m, seed)
    losses, executed = _step(sched, held, S, x, y)
    ref_losses, ref_grads = reference(S, schedule.m, seed)
    loss_err, grad_err = _compare(held, blocks, losses, ref_losses, ref_grads, S)

    checks = {}
    if route == "compute_comms":
        expected = schedule.actions(comms=True, runtime=runtime, fsdp=fsdp)[rank]
        checks["executed == actions(comms=True)"] = executed == expected
    else:
        expected = schedule.actions()[rank]
        checks["compute actions == actions()"] = [a for a in executed if _is_compute(a)] == expected
        # UNSHARD / RESHARD / REDUCE_GRAD: where PyTorch's own passes put them in this run, and
        # where ctpipe's lowering puts them (transfers aside, which the two place differently).
        ours = [a for a in schedule.actions(comms=True, runtime=runtime, fsdp=True)[rank]
                if not _is_transfer(a)]
        checks["UNSHARD/RESHARD/REDUCE_GRAD as PyTorch's passes"] = (
            [a for a in executed if not _is_transfer(a)] == ours)
        # The whole list, transfers too: ctpipe's torch-asap, or torch-parity with
        # defer_pp_recv=True (PyTorch's _add_send_recv, then _defer_recv_ops).
        lowering = "torch-parity" if extra.get("defer_pp_recv") else "torch-asap"
        checks[f"executed == actions(lowering='{lowering}')"] = (
            executed == schedule.actions(comms=True, lowering=lowering)[rank])
    return {"loss_err": loss_err, "grad_err": grad_err, "executed": executed,
            "expected": expected, "checks": checks}


def run_raw_case(case, rank, world):
    """Loads case["rows"] into PyTorch's runtime as they are (format compute_comms), without
    ctpipe's checks, and trains one step: what PyTorch itself does with such a list."""
    from torch.distributed.pipelining.schedules import _Action, _PipelineScheduleRuntime

    schedule, S, seed, blocks, held, stages = _setup(case, rank)
    sched = _PipelineScheduleRuntime(stages, n_microbatches=schedule.m, loss_fn=loss_fn)
    rows = case["rows"]
    sched._prepare_schedule_with_comms({r: [_Action.from_str(a) for a in row] for r, row in enumerate(rows)},
                                       format="compute_comms")
    x, y = make_data(schedule.m, seed)
    losses, executed = _step(sched, held, S, x, y)
    ref_losses, ref_grads = reference(S, schedule.m, seed)
    loss_err, grad_err = _compare(held, blocks, losses, ref_losses, ref_grads, S)
    return {"loss_err": loss_err, "grad_err": grad_err, "executed": executed,
            "expected": rows[rank], "checks": {"executed == rows": executed == rows[rank]}}


def run_csv_case(case, rank, world):
    """The torchtitan / NeMo AutoModel path: ctpipe.torch.write_schedule_csv writes the file,
    PyTorch's own _PipelineScheduleRuntime._load_csv reads it (format compute_only, as both
    projects call it, or compute_comms), one step trains."""
    import tempfile

    from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

    import ctpipe.torch as ct

    schedule, S, seed, blocks, held, stages = _setup(case, rank)
    comms = case.get("route", "compute_only") == "compute_comms"
    runtime = case.get("runtime", "posted")
    with tempfile.TemporaryDirectory() as tmp:
        path = ct.write_schedule_csv(schedule, os.path.join(tmp, "schedule.csv"), comms=comms,
                                     runtime=runtime)
        with open(path) as f:
            text = f.read()
        sched = _PipelineScheduleRuntime(stages, n_microbatches=schedule.m, loss_fn=loss_fn)
        sched._load_csv(path, format="compute_comms" if comms else "compute_only")
    x, y = make_data(schedule.m, seed)
    losses, executed = _step(sched, held, S, x, y)
    ref_losses, ref_grads = reference(S, schedule.m, seed)
    loss_err, grad_err = _compare(held, blocks, losses, ref_losses, ref_grads, S)
    rows = schedule.actions(comms=True, runtime=runtime) if comms else schedule.actions()
    checks = {"file == the rows, one line each": text == "".join(",".join(r) + "\n" for r in rows)}
    if comms:
        checks["executed == the file's row"] = executed == rows[rank]
    else:
        checks["compute actions == the file's row"] = [a for a in executed if _is_compute(a)] == rows[rank]
    return {"loss_err": loss_err, "grad_err": grad_err, "executed": executed,
            "expected": rows[rank], "checks": checks}


def run_bad_case(case, rank, world):
    """Builds real stages that disagree with the schedule (or a corrupted action list) and
    expects ctpipe.Error from pipeline_schedule, before any step, with every text in
    case["expect"] in its message."""
    import ctpipe
    import ctpipe.torch as ct

    bad = case["bad"]
    if bad == "ranks":  # each rank its own schedule
        schedule = ctpipe.Schedule(case["families"][rank], P=case["P"], m=case["ms"][rank])
    else:
        schedule = _schedule(case)
    S = schedule.num_stages
    blocks = make_blocks(max(S, 2 * world) + 2, case.get("seed", 1))
    held = schedule.stages_of(rank) if rank < schedule.P else [rank]
    num_stages = S
    actions = None
    if bad == "num_stages":
        num_stages = case["num_stages"]
    elif bad == "P":
        held = [rank]
        num_stages = world
    elif bad == "indices":
        held = case["held"][rank]
    elif bad == "actions":
        actions = case["rows"]
    stages = _stages_for(blocks, held, num_stages)
    try:
        ct.pipeline_schedule(stages, schedule, loss_fn=loss_fn, route=case.get("route", "compute_only"),
                             runtime=case.get("runtime", "posted"), actions=actions)
    except ctpipe.Error as exc:
        msg = str(exc)
        expect = case["expect"]
        if isinstance(expect, dict):  # per rank
            expect = expect[rank]
        missing = [t for t in expect if t not in msg]
        return {"message": msg, "checks": {"message starts with 'ctpipe:'": msg.startswith("ctpipe:"),
                                           f"message names {expect}": not missing}}
    return {"message": None, "checks": {"raised ctpipe.Error": False}}


def _full_grad(p):
    return None if p.grad is None else p.grad.full_tensor()


def run_fsdp_case(case, rank, world):
    """P pipeline ranks x 2 data-parallel replicas; each stage's block is fully_shard-ed
    (FSDP2) over its data-parallel pair; each replica trains on its own data; the full
    gradients (DTensor.full_tensor()) must equal the reference averaged over the replicas,
    and the runtime must run ctpipe's UNSHARD / RESHARD / REDUCE_GRAD (route compute_comms)."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    import ctpipe.torch as ct

    schedule = _schedule(case)
    S = schedule.num_stages
    seed = case.get("seed", 1)
    dp = 2
    mesh = init_device_mesh("cpu", (dp, schedule.P), mesh_dim_names=("dp", "pp"))
    pp_rank = mesh.get_local_rank("pp")
    dp_rank = mesh.get_local_rank("dp")
    pp_group = mesh.get_group("pp")
    blocks = make_blocks(S, seed)
    held = schedule.stages_of(pp_rank)
    # fully_shard's default reshard_after_forward (False for a root module, as each block is
    # here). With reshard_after_forward=True, PyTorch 2.13's own ScheduleZBVZeroBubble and
    # ScheduleInterleavedZeroBubble leave the last stage's gradients None on CPU / gloo
    # (docs/pytorch.md); the 1F1B family is unaffected.
    for s in held:
        fully_shard(blocks[s], mesh=mesh["dp"])
    stages = _stages_for(blocks, held, S, group=pp_group)
    route = case.get("route", "compute_comms")
    runtime = case.get("runtime", "posted")
    sched = ct.pipeline_schedule(stages, schedule, loss_fn=loss_fn, route=route, runtime=runtime, fsdp=True)
    x, y = make_data(schedule.m, seed, dp_rank)
    losses, executed = _step(sched, held, S, x, y)
    ref_losses, ref_grads = reference(S, schedule.m, seed, replicas=dp)
    loss_err, grad_err = _compare(held, blocks, losses, ref_losses, ref_grads, S,
                                  replica=dp_rank, full_grad=_full_grad)
    expected = (schedule.actions(comms=True, runtime=runtime, fsdp=True)[pp_rank]
                if route == "compute_comms" else None)
    checks = {}
    if expected is not None:
        checks["executed == actions(comms=True, fsdp=True)"] = executed == expected
    kinds = {k: sum(a.endswith(k) for a in executed) for k in ("UNSHARD", "RESHARD", "REDUCE_GRAD")}
    checks["ran UNSHARD, RESHARD, REDUCE_GRAD"] = all(kinds.values())
    return {"loss_err": loss_err, "grad_err": grad_err, "executed": executed, "expected": expected,
            "checks": checks, "counts": kinds}


_RUNNERS = {"train": run_train_case, "raw": run_raw_case, "csv": run_csv_case, "bad": run_bad_case,
            "fsdp": run_fsdp_case}


# --------------------------------------------------------------------------- processes


def _worker(rank, world, port, cases, results, sys_path):
    import sys

    sys.path[:] = sys_path
    os.environ["OMP_NUM_THREADS"] = "1"
    import warnings

    warnings.filterwarnings("ignore")
    import datetime

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    import logging

    # PyTorch logs the whole schedule on an error; the report carries the traceback.
    logging.getLogger("torch.distributed.pipelining").setLevel(logging.CRITICAL)
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=60))
    except Exception:
        results.put({"name": None, "rank": rank, "ok": False, "error": traceback.format_exc()})
        return
    try:
        _run_all(rank, world, cases, results)
    except Exception:
        pass  # a peer was stopped (the parent restarts the pool after a failed case)


def _run_all(rank, world, cases, results):
    import torch.distributed as dist

    for case in cases:
        dist.barrier()
        start = time.monotonic()
        results.put({"name": case["name"], "rank": rank, "started": True})
        report: dict[str, Any] = {"name": case["name"], "rank": rank}
        try:
            report.update(_RUNNERS[case.get("kind", "train")](case, rank, world))
            report["ok"] = True
            report["error"] = None
        except Exception as exc:
            report["ok"] = False
            report["error"] = traceback.format_exc(limit=6)
            # ctpipe.torch raises ctpipe.Error before it builds anything, so nothing was sent:
            # if every rank raised it, the pool goes on with the next case.
            report["before_comms"] = type(exc).__name__ == "Error" and str(exc).startswith("ctpipe:")
        report["seconds"] = time.monotonic() - start
        results.put(report)
        if not report["ok"] and not report["before_comms"]:
            return  # the other ranks may wait on this one: the parent restarts the pool
    dist.barrier()
    dist.destroy_process_group()


def run_cases(world: int, cases: list[dict], case_timeout: float = 60.0,
              start_timeout: float = 90.0) -> dict[str, dict]:
    """Runs the cases on a pool of `world` processes; returns {name: {"ranks": [report per
    rank or None], "status": "ok" | "failed" | "timeout", "seconds": wall time, "started":
    [ranks that began the case]}}. A case's time runs from the end of the one before it
    (start_timeout for the first case of a pool, which starts the processes)."""
    import multiprocessing as mp
    import sys
    from collections import defaultdict

    ctx = mp.get_context("spawn")
    out: dict[str, dict] = {}
    pending = list(cases)
    while pending:
        results = ctx.Queue()
        port = free_port()
        procs = [ctx.Process(target=_worker, args=(r, world, port, pending, results, list(sys.path)),
                             daemon=True) for r in range(world)]
        for p in procs:
            p.start()
        # Messages by case name: one process's messages come in order, but those of
        # different processes may overtake each other, across cases too.
        inbox: dict[str | None, dict[int, dict]] = defaultdict(dict)
        begun: dict[str, set[int]] = defaultdict(set)

        def receive(until: float) -> bool:
            try:
                msg = results.get(timeout=max(0.05, until - time.monotonic()))
            except queue_mod.Empty:
                return False
            if msg.get("started"):
                begun[msg["name"]].add(msg["rank"])
            else:
                inbox[msg["name"]][msg["rank"]] = msg
            return True

        restart = False
        first = True
        try:
            while pending and not restart:
                case = pending[0]
                name = case["name"]
                reports = inbox[name]
                t0 = time.monotonic()
                deadline = t0 + (start_timeout if first else case.get("timeout", case_timeout))
                while len(reports) < world and not inbox[None]:
                    if not receive(deadline):
                        break
                    if any(not r["ok"] and not r.get("before_comms") for r in reports.values()):
                        # give the other ranks a moment to report their own error, then stop
                        wait_end = time.monotonic() + 2.0
                        while len(reports) < world and receive(wait_end):
                            pass
                        break
                first = False
                elapsed = time.monotonic() - t0
                if inbox[None]:  # the process group did not start
                    reports = inbox[None]
                ranks = [reports.get(r) for r in range(world)]
                pending.pop(0)
                if len(reports) == world and all(r["ok"] for r in reports.values()):
                    out[name] = {"ranks": ranks, "status": "ok", "seconds": elapsed,
                                 "started": sorted(begun[name])}
                    continue
                status = "failed" if any(not r["ok"] for r in reports.values()) else "timeout"
                out[name] = {"ranks": ranks, "status": status, "seconds": elapsed,
                             "started": sorted(begun[name])}
                # Every rank refused the case before sending anything: the pool goes on.
                restart = not (len(reports) == world and all(
                    r["ok"] or r.get("before_comms") for r in reports.values()))
        finally:
            for p in procs:
                p.join(timeout=0.5 if restart else 10)
                if p.is_alive():
                    p.kill()
                    p.join(timeout=5)
            results.close()
    return out


def problems(result: dict) -> list[str]:
    """What is wrong with one case's result, as lines (empty if nothing)."""
    if result["status"] != "ok":
        lines = [f"status {result['status']} after {result['seconds']:.1f} s"]
        for r, rep in enumerate(result["ranks"]):
            if rep is None:
                where = ("started the case, no result: hung in it" if r in result.get("started", ())
                         else "did not start the case (a peer left it waiting at the barrier)")
                lines.append(f"rank {r}: {where}")
            elif rep.get("error"):
                lines.append(f"rank {r}: {rep['error'].strip().splitlines()[-1]}")
        return lines
    lines = []
    for r, rep in enumerate(result["ranks"]):
        if rep.get("loss_err", 0.0) > TOL:
            lines.append(f"rank {r}: loss relative error {rep['loss_err']:.3g}")
        if rep.get("grad_err", 0.0) > TOL:
            lines.append(f"rank {r}: gradient relative error {rep['grad_err']:.3g}")
        for what, ok in rep.get("checks", {}).items():
            if not ok:
                extra = ""
                if "executed" in rep and rep.get("expected") is not None:
                    extra = f" (ran {rep['executed']}, expected {rep['expected']})"
                elif rep.get("message") is not None:
                    extra = f" (message: {rep['message']})"
                lines.append(f"rank {r}: {what}: no{extra}")
    return lines
