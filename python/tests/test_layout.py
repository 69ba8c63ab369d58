"""Megatron-LM's layout strings through the package: ``layout=`` reaches the tool's
parser (``--layout``), its refusals come back as :class:`ctpipe.Error` with the tool's
message, and :func:`ctpipe.split` gives its answer as a layout (docs/memory.md)."""

from __future__ import annotations

import pytest

import ctpipe


def test_layout_keyword_becomes_the_tools_option():
    assert ctpipe.options_to_args({"layout": "Et*8|(t*8|)*2,t*8L"}) == ["--layout", "Et*8|(t*8|)*2,t*8L"]


def test_a_layout_gives_the_layers_per_stage_and_the_even_one_equals_layers():
    by_layout = ctpipe.Schedule("1f1b", P=4, m=8, model="llama2-7b", layout="Et*8|(t*8|)*2,t*8L").readout()
    by_layers = ctpipe.Schedule("1f1b", P=4, m=8, model="llama2-7b", layers=[8, 8, 8, 8]).readout()
    assert by_layout == by_layers
    alone = ctpipe.Schedule("1f1b", P=4, m=8, model="llama2-7b", layout="E|t*16|t*16|L").readout()
    assert alone["memory"]["layers"] == [0, 16, 16, 0]
    assert alone["stage_scale"][0] == "0"


@pytest.mark.parametrize("layout,message", [
    ("Et*8|t*8|t*16L", "ctpipe: --layout has 3 stages, P*V = 4"),
    ("Et*7|t*7|t*7|t*7L", "ctpipe: --layout holds 28 decoder layers, the model has 32"),
    ("(tt)*2*3", "ctpipe: --layout '(tt)*2*3': '*' (position 7) repeats a repetition (write one count: t*6)"),
])
def test_bad_layouts_raise_the_tools_message(layout, message):
    with pytest.raises(ctpipe.Error) as e:
        ctpipe.Schedule("1f1b", P=4, m=8, model="llama2-7b", layout=layout)
    assert str(e.value) == message


def test_split_answers_with_a_layout_that_reads_back():
    answer = ctpipe.split(schedule="interleaved-1f1b", P=4, m=8, V=2, model="llama2-7b")
    assert answer["layout"] == "Et*4|(t*4|)*3,t*5|(t*4|)*2,t*3L"
    back = ctpipe.Schedule("interleaved-1f1b", P=4, m=8, V=2, model="llama2-7b", layout=answer["layout"]).readout()
    assert back["memory"]["layers"] == answer["split"]["layers"]
