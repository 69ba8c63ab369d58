"""Predicted against measured: ctpipe's exact makespan of a schedule, with costs measured on
this machine, against the step PyTorch's own `_PipelineScheduleRuntime` runs with it.

Usage: python bench/torch_predicted.py [--P 2 [4 ...]] [--m 8] [--width 512] [--layers 8]
                                       [--mb 64] [--steps 3] [--calibrate 1f1b,zb-h1]
                                       [--families gpipe,1f1b,...]

For each P, P local processes (gloo, CPU, float32, one thread each) build an MLP of --layers
blocks (Linear(width, width) + tanh), split evenly into the P*V stages of each family, and
run every family through ctpipe.torch.pipeline_schedule (route compute_only): one warm-up
step, then --steps profiled steps (round-robin over the families: each family's k-th step
before any family's k+1-th). The runtime wraps every action in
record_function("PP:<action>"); from those slices each rank reports

- the net duration of each compute action (F, B, I, W, an OVERLAP_F_B pair): the slice
  minus the time it waited for its receive (the slice's stretch before the matching
  gloo:recv ended in which the main thread ran no operator);
- the span of its PP: slices (first start to last end) and the wall time of step().

The costs given to ctpipe are means of those net durations in microseconds, per whole rank
(ctpipe's unit: an op of a stage costs t/V): "calibrated" from the --calibrate families
(f, b, i, w pooled over their runs) and used for every family; "self" from the family's own
run. dualpipev's pairs are predicted with pair_model="split" (PyTorch runs an OVERLAP_F_B's
two halves one after the other); the fused reading (fb = f + b) is printed beside it.

Table (per P; the median step of --steps): ctpipe's exact makespan with the calibrated
costs (deterministic for those costs), then the measured span, span / predicted, ctpipe's
and the measured bubble fraction (1 - sum of net compute / (P * span)), the share of P*span
spent in non-compute PP: slices (sends, receives, UNSHARD/RESHARD/REDUCE_GRAD), and the
measured compute against the model's busy time (how well the calibrated costs transfer).

A benchmark, not a test; keep the model small on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import sys
import time
from fractions import Fraction

FAMILIES = ("gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zb-h2", "zbv",
            "interleaved-zb", "dualpipev", "v-half", "v-min")

_ACTION = re.compile(r"^(\d+)(F|B|I|W|SEND_F|RECV_F|SEND_B|RECV_B)(\d+)$")
_PAIR = re.compile(r"^\((\d+F\d+);(\d+B\d+)\)OVERLAP_F_B$")


# --------------------------------------------------------------------------- worker


def _union_within(intervals, lo, hi):
    """Length of the union of the intervals clipped to [lo, hi]."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        s, e = max(s, lo), min(e, hi)
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def _slices(events):
    """Per-rank slices from the profiler's raw events: [(action, start_ns, end_ns, net_ns)],
    net_ns the compute time (for compute actions; the slice's length otherwise)."""
    pp = sorted((e.start_ns(), e.end_ns(), e.name()[3:], e.start_thread_id())
                for e in events if e.name().startswith("PP:"))
    if not pp:
        return []
    main_tid = pp[0][3]
    ops = [(e.start_ns(), e.end_ns()) for e in events
           if e.start_thread_id() == main_tid
           and not e.name().startswith(("PP:", "gloo:", "c10d::")) and "wait" not in e.name().lower()]
    recvs = sorted((e.start_ns(), e.end_ns()) for e in events if e.name() == "gloo:recv")
    # Each RECV_F / RECV_B slice posts one irecv: its gloo:recv starts inside the slice.
    arrived = {}
    for s, e, name, _ in pp:
        m = _ACTION.match(name)
        if m and m.group(2) in ("RECV_F", "RECV_B"):
            inside = [r for r in recvs if s <= r[0] <= e]
            if inside:
                key = ("F" if m.group(2) == "RECV_F" else "B", int(m.group(1)), int(m.group(3)))
                arrived[key] = inside[0][1]
    out = []
    for s, e, name, _ in pp:
        needs = []
        m = _ACTION.match(name)
        pair = _PAIR.match(name)
        if pair:
            for sub in pair.groups():
                k = _ACTION.match(sub)
                needs.append(("F" if k.group(2) == "F" else "B", int(k.group(1)), int(k.group(3))))
        elif m and m.group(2) in ("F", "B", "I"):
            needs.append(("F" if m.group(2) == "F" else "B", int(m.group(1)), int(m.group(3))))
        wait = 0
        for key in needs:
            end = arrived.get(key)
            if end is not None and end > s:
                # blocked: before the message arrived and no operator running
                hi = min(end, e)
                wait += (hi - s) - _union_within(ops, s, hi)
        out.append((name, s, e, max(0, (e - s) - wait)))
    return out


def _worker(rank, world, port, cfg, results):
    os.environ["OMP_NUM_THREADS"] = "1"
    import warnings

    warnings.filterwarnings("ignore")
    import datetime
    import logging

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    logging.getLogger("torch.distributed.pipelining").setLevel(logging.CRITICAL)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    W, L, MB, m = cfg["width"], cfg["layers"], cfg["mb"], cfg["m"]
    g = torch.Generator().manual_seed(1)
    layers = []
    for _ in range(L):
        lin = torch.nn.Linear(W, W)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(W, W, generator=g) / W ** 0.5)
            lin.bias.zero_()
        layers.append(lin)
    x = torch.randn(m * MB, W, generator=g)
    y = torch.randn(m * MB, W, generator=g)

    def loss_fn(out, target):
        return torch.nn.functional.mse_loss(out, target)

    try:
        fams = cfg["families"]
        built = {f: _build_family(f, rank, world, cfg, layers, x, y, loss_fn) for f in fams}
        runs = {f: [] for f in fams}
        for f in fams:
            dist.barrier()
            built[f][1]()  # warm-up
        # Round-robin: step k of every family before step k + 1 of any, so that a change in
        # the machine's load during the run falls on every family alike.
        for _ in range(cfg["steps"]):
            for f in fams:
                runs[f].append(_profiled_step(built[f][1]))
        for f in fams:
            results.put({"rank": rank, "family": f, "V": built[f][0], "runs": runs[f]})
        del built
        dist.barrier()
    except BaseException as exc:  # report and leave; the parent stops the others
        results.put({"rank": rank, "family": None, "error": repr(exc)})
        raise
    finally:
        dist.destroy_process_group()
        import gc

        gc.collect()  # the runtimes and schedules of the families, before the interpreter exits


def _build_family(family, rank, world, cfg, layers, x, y, loss_fn):
    """The family's stages on this rank and its runtime; returns (V, step function)."""
    import torch
    from torch.distributed.pipelining import PipelineStage

    import ctpipe
    import ctpipe.torch as ct

    W, L, MB, m = cfg["width"], cfg["layers"], cfg["mb"], cfg["m"]
    schedule = ctpipe.Schedule(family, P=world, m=m)
    S = schedule.num_stages
    if L % S:
        raise ValueError(f"--layers {L} does not split into {S} stages ({family})")
    per = L // S
    held = schedule.stages_of(rank)

    def example(grad):
        return torch.zeros(MB, W, requires_grad=grad)

    mods = {s: torch.nn.Sequential(*[mod for lin in layers[s * per:(s + 1) * per]
                                     for mod in (lin, torch.nn.Tanh())]) for s in held}
    stages = [PipelineStage(mods[s], s, S, torch.device("cpu"), input_args=example(s > 0),
                            output_args=example(True)) for s in held]
    sched = ct.pipeline_schedule(stages, schedule, loss_fn=loss_fn)

    def step():
        for mod in mods.values():
            mod.zero_grad(set_to_none=True)
        args = (x,) if 0 in held else ()
        kwargs = {"target": y, "losses": []} if S - 1 in held else {}
        sched.step(*args, **kwargs)

    return schedule.V, step


def _profiled_step(step):
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        dist.barrier()
        t0 = time.perf_counter()
        step()
        wall = time.perf_counter() - t0
    return {"wall_us": wall * 1e6, "slices": _slices(prof.profiler.kineto_results.events())}


# --------------------------------------------------------------------------- analysis


def _kind(name):
    if _PAIR.match(name):
        return "FB", None
    m = _ACTION.match(name)
    if m and m.group(2) in ("F", "B", "I", "W"):
        return m.group(2), int(m.group(1))
    return None, None


def _run_figures(per_rank_runs, i):
    """One step (index i) of a family: span, wall, net compute and other time per rank, and
    the net compute samples by kind and by (kind, stage)."""
    spans, walls, busy, other = [], [], [], []
    by_kind, by_stage = {}, {}
    for runs in per_rank_runs:
        run = runs[i]
        sl = run["slices"]
        spans.append((max(e for _, _, e, _ in sl) - min(s for _, s, _, _ in sl)) / 1e3)
        walls.append(run["wall_us"])
        b = o = 0.0
        for name, s, e, net in sl:
            kind, stage = _kind(name)
            if kind is None:
                o += (e - s) / 1e3
                continue
            b += net / 1e3
            by_kind.setdefault(kind, []).append(net / 1e3)
            if stage is not None:
                by_stage.setdefault((kind, stage), []).append(net / 1e3)
        busy.append(b)
        other.append(o)
    return {"span": max(spans), "wall": max(walls), "busy": busy, "other": other,
            "by_kind": by_kind, "by_stage": by_stage}


def _costs(samples_by_kind, V):
    """ctpipe's per-rank costs (integers, microseconds) from per-op means: t = V * mean."""
    c = {}
    for k in ("F", "B", "I", "W", "FB"):
        if samples_by_kind.get(k):
            c[k.lower()] = Fraction(round(V * statistics.fmean(samples_by_kind[k])))
    if "b" not in c and "i" in c and "w" in c:
        c["b"] = c["i"] + c["w"]
    if "b" not in c and "fb" in c and "f" in c:
        c["b"] = c["fb"] - c["f"]
    c.pop("fb", None)
    return c


def _predict(ctpipe, family, P, m, costs, split):
    given = {k: v for k, v in costs.items() if k in ("f", "b", "i", "w")}
    kw = {"pair_model": "split"} if split else {}
    sim = ctpipe.Schedule(family, P=P, m=m, costs=given, **kw).simulate()
    return sim


def run_pool(P, cfg):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(r, P, port, cfg, q), daemon=True) for r in range(P)]
    for p in procs:
        p.start()
    got = {}
    want = P * len(cfg["families"])
    deadline = time.monotonic() + cfg["timeout"]
    try:
        while sum(len(v) for v in got.values()) < want:
            msg = q.get(timeout=max(1.0, deadline - time.monotonic()))
            if msg.get("error"):
                raise RuntimeError(f"P = {P}, rank {msg['rank']}: {msg['error']}")
            got.setdefault(msg["family"], {})[msg["rank"]] = msg
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
    return got


def report(P, cfg, got):
    import ctpipe

    m = cfg["m"]
    fams = cfg["families"]
    data = {}
    for f in fams:
        per_rank = [got[f][r]["runs"] for r in range(P)]
        steps = [_run_figures(per_rank, i) for i in range(cfg["steps"])]
        order = sorted(range(len(steps)), key=lambda i: steps[i]["span"])
        med = steps[order[len(order) // 2]]
        pooled = {}
        for st in steps:
            for k, v in st["by_kind"].items():
                pooled.setdefault(k, []).extend(v)
        stage_pooled = {}
        for st in steps:
            for k, v in st["by_stage"].items():
                stage_pooled.setdefault(k, []).extend(v)
        data[f] = {"V": got[f][0]["V"], "med": med, "pooled": pooled, "stages": stage_pooled}

    calib_samples = {}
    for f in cfg["calibrate"]:
        if f not in data:
            raise SystemExit(f"--calibrate {f}: not among the families run")
        if data[f]["V"] != 1:
            raise SystemExit(f"--calibrate {f}: use a family with V = 1")
        for k, v in data[f]["pooled"].items():
            calib_samples.setdefault(k, []).extend(v)
    calib = _costs(calib_samples, 1)
    medians = {k.lower(): round(statistics.median(v)) for k, v in calib_samples.items()}

    print(f"\nP = {P}, m = {m}: {cfg['layers']} blocks Linear({cfg['width']}, {cfg['width']}) + tanh, "
          f"{cfg['mb']} samples per micro-batch, float32, gloo, 1 thread per process; "
          f"median of {cfg['steps']} profiled steps after a warm-up")
    print("calibrated costs (us per whole rank, from " + ", ".join(cfg["calibrate"]) + "): "
          + ", ".join(f"{k}={v}" for k, v in sorted(calib.items()))
          + " (the medians: " + ", ".join(f"{k}={v}" for k, v in sorted(medians.items())) + ")")
    for f in cfg["calibrate"]:
        st = data[f]["stages"]
        parts = []
        for (k, s) in sorted(st):
            parts.append(f"{k}{s} {statistics.fmean(st[(k, s)]):.0f}")
        print(f"  {f} per stage (mean us): " + ", ".join(parts))

    head = (f"{'family':<17}{'V':>2} {'predicted us':>13} {'measured us':>12} {'wall us':>9} "
            f"{'meas/pred':>9} {'bubble pred':>11} {'bubble meas':>11} {'other':>6} "
            f"{'busy meas/model':>15} {'self-cost pred':>14}")
    print(head)
    print("-" * len(head))
    rows = []
    for f in fams:
        d = data[f]
        split = f == "dualpipev"
        sim = _predict(ctpipe, f, P, m, calib, split)
        T = sim.makespan
        model_busy = sum(T - idle for idle in sim.idle)
        med = d["med"]
        span = med["span"]
        busy = sum(med["busy"])
        meas_bubble = 1 - busy / (P * span)
        other = sum(med["other"]) / (P * span)
        own = _costs(d["pooled"], d["V"])
        own_T = _predict(ctpipe, f, P, m, own, split).makespan
        name = f + (" (split)" if split else "")
        print(f"{name:<17}{d['V']:>2} {str(T):>13} {span:>12.0f} {med['wall']:>9.0f} "
              f"{span / float(T):>9.3f} {float(sim.bubble_fraction):>11.3f} {meas_bubble:>11.3f} "
              f"{other:>6.3f} {busy / float(model_busy):>15.3f} {str(own_T):>14}")
        rows.append((f, T, span))
        if split:
            fused = ctpipe.Schedule(f, P=P, m=m, costs={k: v for k, v in calib.items()}).simulate()
            print(f"{'dualpipev (fused)':<17}{d['V']:>2} {str(fused.makespan):>13} {'':>12} {'':>9} "
                  f"{span / float(fused.makespan):>9.3f} {float(fused.bubble_fraction):>11.3f}")
    own_costs = {f: _costs(data[f]["pooled"], data[f]["V"]) for f in fams}
    print("self costs (us per whole rank, V * mean per op): "
          + "; ".join(f"{f} " + ",".join(f"{k}={v}" for k, v in sorted(c.items()))
                      for f, c in own_costs.items()))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--P", type=int, nargs="+", default=[2])
    ap.add_argument("--m", type=int, default=8)
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--calibrate", default="1f1b,zb-h1")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)
    cfg = {"m": a.m, "width": a.width, "layers": a.layers, "mb": a.mb, "steps": a.steps,
           "families": a.families.split(","), "calibrate": a.calibrate.split(","),
           "timeout": a.timeout}
    print(f"torch_predicted: python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.2f}")
    for P in a.P:
        t0 = time.monotonic()
        got = run_pool(P, cfg)
        report(P, cfg, got)
        print(f"(P = {P}: {time.monotonic() - t0:.1f} s wall for the pool; "
              f"load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
