"""ctpipe.formula(): the periodic certificate from Python (docs/proofs.md, "Proofs for
every m"), checked against direct simulations through ctpipe.Schedule."""

import numbers
from fractions import Fraction

import pytest

import ctpipe

LATENCY = {"f": 1, "b": 2, "c": Fraction(1, 2)}


def test_1f1b_with_latency_repeats_every_p_micro_batches():
    f = ctpipe.formula("1f1b", P=4, costs=LATENCY)
    assert (f.m0, f.cycle, f.increment) == (7, 4, Fraction(15))
    assert [f.makespan(m) for m in (24, 25, 26)] == [101, 105, 108]
    assert f.peak_in_flight == (4, 3, 2, 1)
    assert f.closed_forms == {"makespan": None, "bubble_fraction": None, "peak_in_flight": 1}
    assert hash(f) == hash(ctpipe.formula("1f1b", P=4, costs=LATENCY))


def test_zero_bubble_forms_hold_from_their_thresholds():
    assert ctpipe.formula("zb-h1", P=4).closed_forms == {"makespan": 4, "bubble_fraction": 4, "peak_in_flight": 4}
    assert ctpipe.formula("zb-h2", P=3).closed_forms["makespan"] == 5  # m >= 2P-1


@pytest.mark.parametrize("family,P,costs", [
    ("1f1b", 4, LATENCY),
    ("1f1b", 3, {"f": Fraction(1, 2), "b": Fraction(5, 3)}),
    ("zb-h1", 4, {"f": 1, "i": 2, "w": 1, "c": Fraction(1, 3)}),
    ("zb-h2", 3, {"f": 1, "i": 1, "w": 1}),
    ("zbv", 3, {"f": 1, "i": 1, "w": 1, "c": Fraction(1, 4)}),
])
def test_every_m_equals_the_simulation(family, P, costs):  # noqa: N803 (the paper's name)
    f = ctpipe.formula(family, P=P, costs=costs)
    for m in range(1, f.m0 + 3 * f.cycle + 6):
        sim = ctpipe.Schedule(family, P=P, m=m, costs=costs).simulate()
        assert f.makespan(m) == sim.makespan, m
        assert f.bubble_fraction(m) == sim.bubble_fraction, m
        assert tuple(f.idle(m)) == sim.idle, m


@pytest.mark.parametrize("family,P,V,costs", [
    ("gpipe", 4, None, LATENCY),
    ("gpipe", 5, None, {"f": Fraction(1, 2), "b": Fraction(5, 3)}),
    ("looped-bfs", 4, 2, {"f": 1, "b": 2}),
    ("looped-bfs", 3, 3, LATENCY),
])
def test_phased_programs_equal_the_simulation(family, P, V, costs):  # noqa: N803
    """GPipe's and looped BFS's phased programs: makespan, idle and peaks, which grow with
    m, for every m up to three cycles past m0."""
    f = ctpipe.formula(family, P=P, V=V, costs=costs)
    assert f.phases == (2 if family == "gpipe" else 2 * V)
    for m in range(1, f.m0 + 3 * f.cycle + 6):
        s = ctpipe.Schedule(family, P=P, V=V, m=m, costs=costs)
        sim = s.simulate()
        assert f.makespan(m) == sim.makespan, m
        assert tuple(f.idle(m)) == sim.idle, m
        if m >= f.m0:
            assert f.peaks(m) == [Fraction(x) for x in s.peak_in_flight()], m


@pytest.mark.parametrize("V,group,m,costs", [
    (2, None, None, LATENCY),
    (2, 5, 9, LATENCY),
    (3, 6, 10, {"f": 1, "b": 2}),
])
def test_interleaved_classes_equal_the_simulation(V, group, m, costs):  # noqa: N803
    options = {"costs": costs, **({"group": group} if group else {}), **({"m": m} if m else {})}
    f = ctpipe.formula("interleaved-1f1b", P=4, V=V, **options)
    g = group or 4
    assert (f.m_step, f.m_residue) == (g, (m or 0) % g)
    for n in range(0, (f.m0 + 3 * f.cycle) // g + 1):
        at = f.m_residue + n * g
        if at < g:  # Megatron needs m >= g
            continue
        sim = ctpipe.Schedule("interleaved-1f1b", P=4, m=at, V=V, costs=costs,
                              **({"group": group} if group else {})).simulate()
        assert f.makespan(at) == sim.makespan, at
        assert f.bubble_fraction(at) == sim.bubble_fraction, at
    with pytest.raises(ctpipe.Error, match="holds for m % "):
        f.makespan(f.m0 + 1)


@pytest.mark.parametrize("P,costs", [(4, {"fb": 2}), (2, {"fb": 5}), (3, {"f": 1, "b": 3, "fb": 2, "c": Fraction(1, 3)})])
def test_idle_below_m0_is_the_simulated_one(P, costs):  # noqa: N803
    # A fresh tester's finding: below m0 a rank's busy time is not the affine one (a warm-up
    # holding every forward runs no overlapped pair), so idle and the bubble come from the
    # simulations there.
    f = ctpipe.formula("combined-1f1b", P=P, V=2, costs=costs)
    for m in f.below_m:
        sim = ctpipe.Schedule("combined-1f1b", P=P, m=m, V=2, costs=costs).simulate()
        assert tuple(f.idle(m)) == sim.idle, m
        assert f.bubble_fraction(m) == sim.bubble_fraction, m


def test_combined_with_an_overlap_gain_has_a_formula_for_every_m():
    # No closed form with t_fb < t_f + t_b (docs/schedules.md); the certificate still gives
    # every m of the class: 103/4 at m = 8 (the docs' figure), equal to the simulation.
    costs = {"f": 1, "b": 2, "fb": Fraction(5, 2)}
    f = ctpipe.formula("combined-1f1b", P=4, V=2, costs=costs)
    assert (f.m_step, f.m_residue) == (4, 0)
    assert f.makespan(8) == Fraction(103, 4)
    assert f.closed_forms["makespan"] is None
    for m in range(4, f.m0 + 3 * f.cycle, 4):
        sim = ctpipe.Schedule("combined-1f1b", P=4, m=m, V=2, costs=costs).simulate()
        assert f.makespan(m) == sim.makespan, m


@pytest.mark.parametrize("family,P,options", [
    ("dualpipev", 4, {}),
    ("dualpipev", 3, {"structural_minimum": True, "costs": LATENCY}),
    ("dualpipe", 4, {"costs": {"f": 1, "b": 2, "fb": Fraction(5, 2)}}),
    ("dualpipe", 6, {"structural_minimum": True, "pair_model": "split"}),
])
def test_dualpipe_formulas_equal_the_simulation(family, P, options):  # noqa: N803
    # DeepSeek's schedules: their programs step one micro-batch (DualPipeV) or two
    # (DualPipe: m even); below m0 the m the family's rule takes, simulated.
    f = ctpipe.formula(family, P=P, **options)
    assert (f.m_step, f.m_residue) == ((2, 0) if family == "dualpipe" else (1, 0))
    least = 2 * P - (f.m_step if options.get("structural_minimum") else 0)
    assert f.below_m == tuple(range(least, f.m0, f.m_step))
    for m in (*f.below_m, *range(f.m0, f.m0 + 3 * f.cycle + 2 * f.m_step, f.m_step)):
        sim = ctpipe.Schedule(family, P=P, m=m, **options).simulate()
        assert f.makespan(m) == sim.makespan, m
        assert f.bubble_fraction(m) == sim.bubble_fraction, m
        assert tuple(f.idle(m)) == sim.idle, m


@pytest.mark.parametrize("call,message", [
    (lambda: ctpipe.formula("v-half"), "ctpipe: no formula for v-half: its warm-up and cool-down are moved"),
    (lambda: ctpipe.formula("gpipe", stage_scale=[1, Fraction(3, 2), 1, 1]),
     "ctpipe: no certificate: the ranks of a phase run at different rates"),
    (lambda: ctpipe.formula("gpipe").peaks(0), "ctpipe: m takes a whole number >= 1, not 0"),
    (lambda: ctpipe.formula("looped-bfs", P=4, V=2).peaks(3), "ctpipe: the peaks are known for m >= m0 = 4"),
    (lambda: ctpipe.formula("1f1b", m=8), "ctpipe: formula answers for every m; -m is not taken"),
    (lambda: ctpipe.formula("interleaved-1f1b", V=2, m=6), "ctpipe: interleaved-1f1b (megatron) needs m % group"),
    (lambda: ctpipe.formula("interleaved-1f1b", V=2, m=6, variant="torch"),
     "ctpipe: PyTorch's interleaved 1F1B has a periodic program for m a multiple of P only"),
    (lambda: ctpipe.formula("1f1b", P=0), "ctpipe: P (pipeline ranks) must be >= 1"),
    (lambda: ctpipe.formula("1f1b", P=True), "ctpipe: -P takes a whole number, not True"),
    (lambda: ctpipe.formula("1f1b", costs=LATENCY, max_periods=5), "ctpipe: no certificate: the state does not repeat"),
    (lambda: ctpipe.formula("1f1b").makespan(0), "ctpipe: m takes a whole number >= 1, not 0"),
    (lambda: ctpipe.formula("1f1b").makespan(2.0), "ctpipe: m takes a whole number >= 1, not 2.0"),
    (lambda: ctpipe.formula("1f1b", format="json"), "ctpipe: formula() reads the tool's JSON; format is not taken"),
    (lambda: ctpipe.formula(None), "ctpipe: the family is a name such as '1f1b', not None"),
    (lambda: ctpipe.formula("1f1b", foo=1),
     "ctpipe: formula does not take '--foo 1' (`ctpipe formula --help` lists its options)"),
    (lambda: ctpipe.formula("1f1b", P=None), "ctpipe: -P takes a whole number, not None"),
    # True only for the tool's flags; a flag only True or False (a fresh tester's findings).
    (lambda: ctpipe.formula("1f1b", max_periods=True), "ctpipe: --max-periods takes a value, not True"),
    (lambda: ctpipe.Schedule("1f1b", P=4, m=8, gamma=True), "ctpipe: --gamma takes a value, not True"),
    (lambda: ctpipe.Schedule("dualpipev", P=4, m=8, structural_minimum=1),
     "ctpipe: --structural-minimum is a flag: True or False, not 1"),
    (lambda: ctpipe.compare(P=4, m=8, format="text"), "ctpipe: compare() reads the tool's JSON; format is not taken"),
])
def test_refusals(call, message):
    with pytest.raises(ctpipe.Error) as e:
        call()
    assert str(e.value).startswith(message)


class _NumpyLikeInt:
    """An integer type that is no int (numpy.int64's shape): numbers.Integral, __index__."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    __int__ = __index__

    def __lt__(self, other: int) -> bool:
        return self.value < other


numbers.Integral.register(_NumpyLikeInt)


class _NumpyLikeFloat32:
    """A real that is no float and prints its shortest text (numpy.float32's shape)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __float__(self) -> float:
        return float(self.text)


numbers.Real.register(_NumpyLikeFloat32)


def test_a_fresh_testers_findings_flags_integers_and_the_family():
    # fill()'s and compare()'s flags were refused as taking a value; numpy-like integers
    # were refused by Formula.makespan() and stages_of(); numpy.float32 costs were refused
    # with a message that contradicted itself; formula(schedule=...) overrode the family.
    assert ctpipe.options_to_args({"allow_stretch": True, "steady_state": True, "rebalance": True}) == [
        "--allow-stretch", "--steady-state", "--rebalance"]
    with pytest.raises(ctpipe.Error, match="--rebalance is a flag: True or False, not 1"):
        ctpipe.options_to_args({"rebalance": 1})
    f = ctpipe.formula("1f1b", P=4)
    assert f.makespan(_NumpyLikeInt(16)) == f.makespan(16) == 57
    assert f.idle(_NumpyLikeInt(16)) == f.idle(16)
    assert ctpipe.Schedule("zbv", P=2, m=4).stages_of(_NumpyLikeInt(1)) == [1, 2]
    s = ctpipe.Schedule("1f1b", P=2, m=2, costs={"f": _NumpyLikeFloat32("0.1"), "b": 1})
    assert s.readout()["costs"]["f"] == "1/10"
    with pytest.raises(ctpipe.Error, match="formula\\(\\) takes the family as its first argument"):
        ctpipe.formula("dualpipev", P=4, schedule="1f1b")
