"""The Python package against the tool and the library: readouts, CSV, actions, arrays,
exact simulation, errors, and hostile arguments (no torch needed).

CTPIPE_TOOL names a built `ctpipe` executable (./scripts/test.sh sets it): the package's
readouts must equal what that process prints, field for field."""

from __future__ import annotations

import json
import pathlib
import os
import random
import re
import subprocess
from fractions import Fraction

import pytest

import ctpipe

TOOL = os.environ.get("CTPIPE_TOOL")

# Every family at shapes it accepts: (family, options). P = 1, m < P and odd P included.
GRID = [
    ("gpipe", dict(P=1, m=1)), ("gpipe", dict(P=3, m=2)), ("gpipe", dict(P=4, m=8)),
    ("1f1b", dict(P=1, m=3)), ("1f1b", dict(P=4, m=3)), ("1f1b", dict(P=5, m=7, costs="f=1,b=2,c=1/2")),
    ("interleaved-1f1b", dict(P=4, m=8, V=2)), ("interleaved-1f1b", dict(P=3, m=6, V=3, variant="megatron-legacy")),
    ("interleaved-1f1b", dict(P=2, m=3, V=1, variant="torch")), ("interleaved-1f1b", dict(P=4, m=8, V=2, variant="torch")),
    ("looped-bfs", dict(P=2, m=4, V=2)), ("looped-bfs", dict(P=3, m=2, V=3)),
    ("zb-h1", dict(P=4, m=8)), ("zb-h1", dict(P=3, m=2, costs="f=1,i=1,w=1")), ("zb-h2", dict(P=4, m=8)),
    ("zbv", dict(P=4, m=8)), ("zbv", dict(P=3, m=3)), ("interleaved-zb", dict(P=2, m=4, V=2)),
    ("dualpipev", dict(P=4, m=8)), ("dualpipev", dict(P=3, m=5, structural_minimum=True, pair_model="split")),
    ("dualpipe", dict(P=4, m=8)), ("v-half", dict(P=4, m=8)), ("v-min", dict(P=4, m=8)),
    ("combined-1f1b", dict(P=4, m=8)), ("combined-1f1b", dict(P=4, m=10, V=2, group=5, pair_model="split")),
    ("1f1b", dict(P=4, m=4, stage_scale=[1, 1, 1, Fraction(5, 4)], microbatch_scale=[1, 2, 1, 3])),
    ("1f1b", dict(P=4, m=8, model="llama2-7b")),
]


def tool(args):
    if not TOOL:
        pytest.fail("CTPIPE_TOOL must name a built ctpipe executable (./scripts/test.sh sets it)")
    return subprocess.run([TOOL, *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("family,opts", GRID, ids=[f"{f}-{i}" for i, (f, _) in enumerate(GRID)])
def test_readout_csv_and_actions_equal_the_tools(family, opts):
    s = ctpipe.Schedule(family, **opts)
    args = s.args
    run = tool(args + ["--format", "json"])
    assert run.returncode == 0, run.stderr
    assert s.readout() == json.loads(run.stdout)
    for comms, fmt in ((False, "csv"), (True, "csv-comms")):
        run = tool(args + ["--format", fmt])
        assert run.returncode == 0
        assert s.csv(comms=comms) == run.stdout
        rows = [r.split(",") if r else [] for r in run.stdout.rstrip("\n").split("\n")]
        assert s.actions(comms=comms) == rows
    # The exact simulation is the readout's numbers.
    sim = s.simulate()
    r = s.readout()
    assert sim.makespan == Fraction(r["makespan"])
    assert sim.bubble_fraction == Fraction(r["bubble_fraction"])
    assert list(sim.idle) == [Fraction(x) for x in r["idle"]]
    assert s.peak_in_flight() == [Fraction(x) for x in r["peak_in_flight"]]
    # Stages per rank, in the placement's order; every stage on exactly one rank.
    held = [st for rank in range(s.P) for st in s.stages_of(rank)]
    assert len(held) == s.num_stages
    if s.placement != "bidirectional":
        assert sorted(held) == list(range(s.num_stages))


def test_arrays_are_the_ops_of_the_action_lists():
    s = ctpipe.Schedule("dualpipev", P=4, m=8)
    a = s.arrays()
    assert a["offsets"][0] == 0 and a["offsets"][s.P] == len(a["kind"]) == len(a["stage"]) == len(a["microbatch"])
    kinds = {0: "F", 1: "B", 2: "I", 3: "W"}
    for rank, actions in enumerate(s.actions()):
        lo, hi = a["offsets"][rank], a["offsets"][rank + 1]
        words = []
        k = lo
        while k < hi:
            if a["kind"][k] == 8:  # an overlapped pair: its word carries the F, its B follows
                words.append(f"({a['stage'][k]}F{a['microbatch'][k]};{a['stage'][k + 1]}B{a['microbatch'][k + 1]})OVERLAP_F_B")
                k += 2
            else:
                words.append(f"{a['stage'][k]}{kinds[a['kind'][k]]}{a['microbatch'][k]}")
                k += 1
        assert words == actions
    lowered = s.arrays(comms=True)
    assert len(lowered["kind"]) > len(a["kind"]) and set(lowered["kind"]) >= {4, 5, 6, 7}


def test_the_articles_default_and_exact_fractions():
    s = ctpipe.Schedule()
    assert (s.family, s.P, s.m, s.V, s.num_stages) == ("1f1b", 4, 8, 1, 4)
    sim = s.simulate()
    assert sim.makespan == 33 and sim.bubble_fraction == Fraction(3, 11) and sim.idle == (9, 9, 9, 9)
    latency = ctpipe.Schedule("1f1b", P=4, m=8, costs={"f": 1, "b": 2, "c": Fraction(1, 2)})
    assert isinstance(latency.simulate().makespan, Fraction)
    assert ctpipe.Schedule("1f1b", costs={"f": 0.1}).readout()["costs"]["f"] == "1/10"  # a float as typed


def test_torch_passes_in_the_lowered_actions():
    s = ctpipe.Schedule("1f1b", P=2, m=2)
    assert s.actions(comms=True)[0] == ["0UNSHARD", "0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0",
                                        "0RECV_B1", "0B1", "0REDUCE_GRAD", "0RESHARD"]
    assert "0UNSHARD" not in s.actions(comms=True, fsdp=False)[0]
    assert "0REDUCE_GRAD" not in s.actions(comms=True, torch_passes="none")[0]
    with pytest.raises(ctpipe.Error, match="apply with comms=True only"):
        s.actions(runtime="posted")


def test_validate_csv_text_rows_paths_and_both_line_ends(tmp_path):
    s = ctpipe.Schedule("zbv", P=3, m=6)
    text = s.csv(comms=True)
    lf = ctpipe.validate(text)
    crlf = ctpipe.validate(text.replace("\n", "\r\n"))
    assert lf == crlf
    assert lf["makespan"] == s.readout()["makespan"]
    assert ctpipe.validate(s.actions())["makespan"] == lf["makespan"]
    path = tmp_path / "s.csv"
    path.write_text(s.csv())
    assert ctpipe.validate(path)["makespan"] == lf["makespan"]
    with pytest.raises(ctpipe.Error, match=r'^ctpipe: <csv>: CSV row 1 \(rank 0\), cell 2 "0X1": unknown action kind "X"'):
        ctpipe.validate("0F0,0X1\n")


def test_subcommands_return_the_tools_json():
    assert ctpipe.compare(schedules=["gpipe", "1f1b"], P=4, m=8) == json.loads(tool(
        ["compare", "--schedules", "gpipe,1f1b", "-P", "4", "-m", "8", "--format", "json"]).stdout)
    fill = ctpipe.fill(fill="encoder:f=1/4,b=1/2")
    assert fill == json.loads(tool(["fill", "--fill", "encoder:f=1/4,b=1/2", "--format", "json"]).stdout)
    assert "rebalance" in ctpipe.rebalance(costs={"move": Fraction(1, 4)})
    assert ctpipe.search(P=2, m=2, memory_limit=2)["search"] is not None
    assert ctpipe.split(model="llama2-7b", P=4, m=8) == json.loads(tool(
        ["split", "--model", "llama2-7b", "-P", "4", "-m", "8", "--format", "json"]).stdout)


@pytest.mark.parametrize("kwargs,message", [
    (dict(family="nope"), "ctpipe: unknown schedule 'nope'"),
    (dict(P=0), "ctpipe: P (pipeline ranks) must be >= 1"),
    (dict(P="x"), "ctpipe: -P takes a whole number, not 'x'"),
    (dict(family="interleaved-1f1b", P=3, m=16, V=1, variant="torch"), "ctpipe: interleaved-1f1b (torch) needs m % max(1, m / P) == 0"),
    (dict(family="dualpipev", P=4, m=4), "ctpipe: dualpipev needs m >= 2P"),
    (dict(family="combined-1f1b", P=4, m=6), "ctpipe: combined-1f1b needs m % group == 0 or m % group >= P"),
    (dict(family="combined-1f1b", P=4, m=8, V=1), "ctpipe: combined-1f1b with P > 1 needs V >= 2"),
    (dict(costs="f=-1"), "ctpipe: t_f (forward cost) must be > 0"),
    (dict(costs={"q": 1}), "ctpipe: --costs takes key=value pairs"),
    (dict(P="4\0"), "NUL"),
    (dict(format="json"), "--format is not a Schedule option"),
    (dict(bogus=3), "ctpipe: unknown option 'bogus' (known: "),
    (dict(gamma=object()), "takes a number, a string, a list or a mapping"),
    (dict(P=b"4"), "ctpipe: -P takes a number or a string, not bytes"),
    (dict(P=False), "ctpipe: -P takes a whole number, not False"),
    (dict(gamma=float("nan")), "ctpipe: --gamma takes a finite number, not NaN"),
    (dict(family="gpipe", P=4096, m=65536), "ops are too many for the Python package (at most 16777216)"),
])
def test_bad_requests_raise_ctpipe_error_with_the_tools_message(kwargs, message):
    family = kwargs.pop("family", "1f1b")
    with pytest.raises(ctpipe.Error) as e:
        ctpipe.Schedule(family, **kwargs)
    assert message in str(e.value)
    assert str(e.value).startswith("ctpipe:")
    assert isinstance(e.value, ValueError)


def test_options_of_one_view_stay_out_of_the_others_and_odd_calls_are_errors():
    s = ctpipe.Schedule("1f1b", P=2, m=2, runtime="posted", torch_passes="none", width=50)
    assert s.csv() == "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n"
    assert "UNSHARD" not in s.csv(comms=True)
    assert ctpipe.Schedule("1f1b", costs={"c": 1e-5}).readout()["costs"]["c"] == "1/100000"
    for call in (lambda: s.readout(help=True), lambda: ctpipe.compare(version=True),
                 lambda: s.actions(comms="yes"), lambda: s.arrays(comms=None), lambda: ctpipe.fraction("abc"),
                 lambda: ctpipe.run_tool("-P 4"), lambda: ctpipe.validate("\udcff0F0"),
                 lambda: ctpipe.fraction(float("inf")), lambda: ctpipe.Schedule(None, P=2, m=4),
                 lambda: ctpipe.Schedule(False, P=2, m=4), lambda: ctpipe.Schedule("1f1b", P=None, m=4),
                 lambda: ctpipe.Schedule("1f1b", P=2, m=None), lambda: s.with_options(P=None),
                 lambda: ctpipe.Schedule("1f1b", costs={"f=1,b": 2}), lambda: ctpipe.Schedule("1f1b", costs={1: 2})):
        with pytest.raises(ctpipe.Error, match="^ctpipe: "):
            call()
    # A path named "-" is a file, not standard input (which would wait for the caller's stdin).
    with pytest.raises(ctpipe.Error, match=r"^ctpipe: cannot read '\./-'"):
        ctpipe.validate(pathlib.Path("-"))
    big = ctpipe.Schedule("1f1b", P=64, m=16385)
    with pytest.raises(ctpipe.Error, match="too many for actions"):
        big.actions()
    assert len(big.arrays()["kind"]) == 64 * 16385 * 2
    # Several fill jobs: one --fill each.
    two = ctpipe.fill(P=4, m=8, fill=["encoder:f=1/4,b=1/2", "job:t=1"])
    one = ctpipe.fill(P=4, m=8, fill="encoder:f=1/4,b=1/2")
    assert two != one


def test_stages_of_rejects_ranks_outside_the_pipeline():
    s = ctpipe.Schedule("zbv", P=4, m=8)
    assert [s.stages_of(r) for r in range(4)] == [[0, 7], [1, 6], [2, 5], [3, 4]]
    for bad in (-1, 4, 2**40, True, "0", 1.0):
        with pytest.raises(ctpipe.Error):
            s.stages_of(bad)


HOSTILE = [None, True, False, 0, -1, 1, 2, 3, 7, 2**31, 2**63, -(2**70), 1e308, float("nan"), float("inf"), -0.0,
           "", " ", "1/0", "0x10", "1e5", "\n", "\x00", "é", "∞", "1,2", [], [1, -1], [Fraction(1, 3)] * 100, {},
           {"f": "x"}, {"f": None}, Fraction(-1, 2), b"4", object(), ("a", 1), 10**6]
KEYS = ["P", "m", "V", "placement", "variant", "group", "warmup_factor", "costs", "gamma", "stage_scale",
        "microbatch_scale", "model", "memory_limit", "layers", "layout", "runtime", "lowering", "torch_passes",
        "max_active_stages", "pair_model", "structural_minimum", "device_flops", "link_bandwidth", "width", "color"]


def test_hostile_arguments_give_a_schedule_or_ctpipe_error_never_a_crash():
    rng = random.Random(20261203)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(600):
        family = rng.choice(list(ctpipe.FAMILIES) + ["", "GPIPE", "1f1b ", None, 3])
        opts = {rng.choice(KEYS): rng.choice(HOSTILE) for _ in range(rng.randint(0, 4))}
        try:
            s = ctpipe.Schedule(family, **opts) if family is not None else ctpipe.Schedule(**opts)
            if s.num_ops <= 200000:
                assert len(s.actions()) == s.P
            outcomes["ok"] += 1
        except ctpipe.Error as e:
            assert str(e).startswith("ctpipe:"), str(e)
            outcomes["error"] += 1
    assert outcomes["ok"] > 20 and outcomes["error"] > 300


def test_hostile_csv_text_is_refused_with_the_readers_message():
    rng = random.Random(7)
    good = ctpipe.Schedule("interleaved-1f1b", P=2, m=4, V=2).csv(comms=True)
    alphabet = "0123456789FBIWSEND_RCV(;)OVERLAP,\n\r \"x"
    refused = 0
    for _ in range(400):
        chars = list(good)
        for _ in range(rng.randint(1, 6)):
            chars[rng.randrange(len(chars))] = rng.choice(alphabet)
        try:
            ctpipe.validate("".join(chars))
        except ctpipe.Error as e:
            assert str(e).startswith("ctpipe:")
            assert "<csv>" in str(e) or "CSV" in str(e) or "ctpipe:" in str(e)
            refused += 1
    assert refused > 300
    for junk in ("", "\n\n", "\x00", "0F0" * 10**5, "(", "0OVERLAP_F_B0\n"):
        with pytest.raises(ctpipe.Error):
            ctpipe.validate(junk)
    with pytest.raises(ctpipe.Error):
        ctpipe.validate([[1, 2], None])  # not rows of strings


def test_import_does_not_import_torch():
    code = "import sys, ctpipe; ctpipe.Schedule().simulate(); print('torch' in sys.modules)"
    out = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_new_users_values_float_subclasses_items_and_overrides():
    """A new user's findings (2026-12-04): a float subclass that prints itself otherwise
    (numpy's float64 prints np.float64(0.5)) raised decimal.InvalidOperation; a value
    holding ',' or '=' made further items of a mapping or list option; a rank given as
    one string was read character by character; readout(P=8) gave another schedule's
    readout."""

    class NumpyLikeFloat(float):
        def __repr__(self) -> str:
            return f"np.float64({float(self)!r})"

    s = ctpipe.Schedule("1f1b", P=2, m=2, costs={"f": NumpyLikeFloat(0.5), "b": 1})
    assert s.readout()["costs"]["f"] == "1/2"
    assert ctpipe.Schedule("zb-h1", P=2, m=2, gamma=NumpyLikeFloat(0.25)).readout()["gamma"] == "1/4"
    with pytest.raises(ctpipe.Error, match="holds ',', '=' or a line break"):
        ctpipe.Schedule("1f1b", P=2, m=2, costs={"f": "1,b=5"})
    with pytest.raises(ctpipe.Error, match="holds ',', '=' or a line break"):
        ctpipe.Schedule("1f1b", P=2, m=2, stage_scale=["1,2", 1])
    with pytest.raises(ctpipe.Error, match="rank 0 is a string"):
        ctpipe.validate(["0F0,0B0", "1F0,1B0"])
    with pytest.raises(ctpipe.Error, match=r"rank 0 holds '0F0\\n1F0': one action per string"):
        ctpipe.validate([["0F0\n1F0", "0B0"]])
    with pytest.raises(ctpipe.Error, match="rank 0 holds '0F0,0B0'"):
        ctpipe.validate([["0F0,0B0"]])
    zbv = ctpipe.Schedule("zbv", P=2, m=4)
    for key in ("P", "m", "V", "family", "format"):
        with pytest.raises(ctpipe.Error, match=f"{key} is the schedule's own"):
            zbv.readout(**{key: 8})
    assert zbv.readout()["P"] == 2


# The stream models (docs/runtimes.md): the names, a hang's cycle, and a bad name.
STREAMS = ("stream-rank", "stream-peer", "stream-direction", "stream-edge")
FIFO_CYCLE = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "lowered" / "stream_fifo_cycle_P2_m2_V2.csv"


def test_runtimes_are_the_tools_models_with_the_stream_policies():
    assert ctpipe.RUNTIMES[4:] == STREAMS
    assert set(ctpipe.Schedule("1f1b", P=4, m=8).execute()) == set(ctpipe.RUNTIMES)


@pytest.mark.parametrize("runtime", STREAMS)
def test_stream_models_run_ctpipes_lowering_for_them_as_the_tool_does(runtime):
    s = ctpipe.Schedule("1f1b", P=4, m=8)
    executed = s.execute(runtime=runtime)
    assert list(executed) == [runtime]
    # Without latency the lowering for streams loses nothing: the article's (m+P-1)(t_f+t_b).
    assert Fraction(executed[runtime]["makespan"]) == (8 + 4 - 1) * 3
    assert executed == json.loads(tool(["--format", "json", "--runtime", runtime]).stdout)["executed"]


def test_a_file_that_hangs_on_a_shared_stream_names_its_cycle():
    out = ctpipe.validate(FIFO_CYCLE)["executed"]
    for runtime in ("stream-rank", "stream-peer", "stream-direction"):
        assert out[runtime]["deadlock"] is True
        assert "back to rank 0's stream" in out[runtime]["cycle"]
    assert out["stream-rank"]["cycle"].startswith("rank 0 waits at 2F0 for 2RECV_F0 on rank 0's stream; ")
    assert "rank 0's stream (activations)" in out["stream-direction"]["cycle"]
    assert out["stream-edge"]["makespan"] == out["posted"]["makespan"]
    assert "cycle" not in out["stream-edge"] and "cycle" not in out["rendezvous"]
    with pytest.raises(ctpipe.Error, match=r"under stream-rank: rank 0 waits at 2F0"):
        ctpipe.validate(FIFO_CYCLE, runtime="stream-rank")


def test_an_unknown_runtime_or_policy_is_the_tools_message():
    message = ("ctpipe: --runtime takes blocking, rendezvous, posted, batched, stream-rank, stream-peer, "
               "stream-direction or stream-edge, not 'stream-fifo'")
    with pytest.raises(ctpipe.Error) as e:
        ctpipe.Schedule("1f1b", P=4, m=8).execute(runtime="stream-fifo")
    assert str(e.value) == message
    with pytest.raises(ctpipe.Error, match="^ctpipe: --runtime takes"):
        ctpipe.validate(FIFO_CYCLE, runtime="stream")


def test_actions_refuse_an_fsdp_or_lowering_of_the_wrong_type():
    """fsdp takes True or False only (a string such as "no" is not False), lowering a name
    of LOWERINGS only (a tuple holding one is refused); "least-loss" is one."""
    s = ctpipe.Schedule("1f1b", P=2, m=2)
    for bad in ("no", "false", 0, 1):
        with pytest.raises(ctpipe.Error, match=re.escape(f"fsdp must be True or False, not {bad!r}")):
            s.actions(comms=True, fsdp=bad)
    with pytest.raises(ctpipe.Error, match="lowering must be one of"):
        s.actions(comms=True, lowering=("torch-parity",))
    assert "least-loss" in ctpipe.LOWERINGS
    assert s.actions(comms=True, runtime="stream-rank", lowering="least-loss") == \
        s.actions(comms=True, runtime="stream-rank")  # 1F1B P = 2 loses nothing: the stream order is kept
