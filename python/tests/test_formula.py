"""ctpipe.formula(): the periodic certificate from Python (docs/proofs.md, "Proofs for
every m"), checked against direct simulations through ctpipe.Schedule."""

from fractions import Fraction

import pytest

import ctpipe

LATENCY = {"f": 1, "b": 2, "c": Fraction(1, 2)}


def test_1f1b_with_latency_repeats_every_p_micro_batches():
    f = ctpipe.formula("1f1b", P=4, costs=LATENCY)
    assert (f.m0, f.cycle, f.increment) == (7, 4, Fraction(15))
    assert [f.makespan(m) for m in (24, 25, 26)] == [101, 105, 108]
    assert f.peak_in_flight == (4, 3, 2, 1)
    assert f.closed_forms == {"makespan": False, "bubble_fraction": False, "peak_in_flight": True}


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


@pytest.mark.parametrize("call,message", [
    (lambda: ctpipe.formula("gpipe"), "ctpipe: no formula for gpipe: its forwards and its backwards each grow"),
    (lambda: ctpipe.formula("1f1b", m=8), "ctpipe: formula answers for every m; -m is not taken"),
    (lambda: ctpipe.formula("1f1b", P=0), "ctpipe: P (pipeline ranks) must be >= 1"),
    (lambda: ctpipe.formula("1f1b", P=True), "ctpipe: -P takes a whole number, not True"),
    (lambda: ctpipe.formula("1f1b", costs=LATENCY, max_periods=5), "ctpipe: no certificate: the state does not repeat"),
    (lambda: ctpipe.formula("1f1b").makespan(0), "ctpipe: m takes a whole number >= 1, not 0"),
    (lambda: ctpipe.formula("1f1b").makespan(2.0), "ctpipe: m takes a whole number >= 1, not 2.0"),
])
def test_refusals(call, message):
    with pytest.raises(ctpipe.Error) as e:
        call()
    assert str(e.value).startswith(message)
