"""Schedule.slots(): the activation slots and receive buffers per pipeline rank
(``ctpipe slots``, docs/memory.md "Slots"), checked against brute-force overlap counts
made here from the lifetimes, and against the in-flight peaks of the tool's readout."""

from fractions import Fraction

import pytest

import ctpipe

UNEVEN = {"f": 1, "i": 2, "w": 1, "c": Fraction(1, 2)}


def overlap(lifetimes):
    """The most lifetimes that hold one action of the rank's list (reached at some
    lifetime's first action), both ends included."""
    best = 0
    for at in lifetimes:
        s = at.start_index
        n = sum(1 for x in lifetimes if x.start_index <= s <= x.end_index)
        best = max(best, n)
    return best


def of(slots, rank, kind):
    return [x for x in slots.lifetimes if x.rank == rank and x.kind == kind]


def check_sound(slots, P):  # noqa: N803 (the paper's name)
    """Counts equal overlaps and brute-force counts; one slot's lifetimes are disjoint."""
    for r in range(P):
        for kind, count, largest in (("activation", slots.activation_slots, slots.activation_overlap),
                                     ("receive", slots.receive_buffers, slots.receive_overlap)):
            lives = of(slots, r, kind)
            assert count[r] == largest[r] == overlap(lives), (r, kind)
            assert all(0 <= x.slot < count[r] and x.start <= x.end and x.start_index <= x.end_index for x in lives)
            for a in lives:
                for b in lives:
                    if a is not b and a.slot == b.slot:
                        assert a.end_index < b.start_index or b.end_index < a.start_index, (a, b)


@pytest.mark.parametrize("family,P,m", [("1f1b", 4, 8), ("zb-h1", 4, 6), ("interleaved-1f1b", 4, 8),
                                         ("zbv", 3, 6), ("dualpipev", 2, 4), ("gpipe", 3, 5)])
def test_simulated_slots_are_minimal_and_the_peak(family, P, m):  # noqa: N803
    s = ctpipe.Schedule(family, P=P, m=m, costs=UNEVEN)
    slots = s.slots()
    assert slots.timeline == "simulated" and slots.runtime is None
    assert slots.receive_buffers == (0,) * P
    assert all(isinstance(x.start, Fraction) and isinstance(x.end, Fraction) for x in slots.lifetimes)
    check_sound(slots, P)
    # The readout's in-flight count holds an activation from its F to its B or W in list
    # order, as a lifetime does: its peak is the slot count.
    peaks = s.peak_in_flight()
    for r in range(P):
        assert slots.activation_slots[r] == peaks[r]


def test_gpipe_needs_m_slots_and_1f1b_its_peak():
    # GPipe: every F of a rank before its first B, all m lifetimes hold its last F.
    assert ctpipe.Schedule("gpipe", P=4, m=6).slots().activation_slots == (6, 6, 6, 6)
    # 1F1B at the article's costs: a B ends as the next F starts, and the F takes its slot.
    s = ctpipe.Schedule("1f1b", P=4, m=8)
    assert s.slots().activation_slots == tuple(s.peak_in_flight()) == (4, 3, 2, 1)


def test_split_backward_lifetimes_end_at_their_w():
    slots = ctpipe.Schedule("zb-h1", P=4, m=6, costs=UNEVEN).slots()
    for x in slots.lifetimes:
        assert x.end_op == f"{x.stage}W{x.microbatch}"
        assert x.start_op == f"{x.stage}F{x.microbatch}"


@pytest.mark.parametrize("runtime", ["blocking", "posted", "stream-rank", "stream-edge"])
def test_executed_slots_hold_receive_buffers(runtime):
    P = 4  # noqa: N806
    s = ctpipe.Schedule("1f1b", P=P, m=8, costs=UNEVEN)
    slots = s.slots(runtime=runtime)
    assert slots.timeline == "executed" and slots.runtime == runtime
    check_sound(slots, P)
    receives = [x for x in slots.lifetimes if x.kind == "receive"]
    # One buffer per RECV of the lowered lists.
    lowered = [a for row in s.actions(comms=True, runtime=runtime) for a in row]
    assert len(receives) == sum(1 for a in lowered if "RECV_" in a)
    for x in receives:
        assert "RECV_" in x.start_op and "RECV_" not in x.end_op
    assert ctpipe.Schedule("1f1b", P=P, m=8, costs=UNEVEN, runtime=runtime).slots() == slots


def test_bad_input_raises_the_tools_message():
    with pytest.raises(ctpipe.Error, match="^ctpipe: --runtime takes blocking"):
        ctpipe.Schedule("1f1b").slots(runtime="fast")
    with pytest.raises(ctpipe.Error, match="^ctpipe: "):
        ctpipe.Schedule("1f1b", model="llama2-7b").slots()
