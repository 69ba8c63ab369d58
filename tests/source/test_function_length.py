"""The structure rule of docs/architecture.md: no function of the library (include/ctpipe)
or of the tool (tools/ctpipe) is longer than 60 lines, from its signature's first line to
its closing brace, as lizard (https://github.com/terryyin/lizard) measures a function's
``length``. Run by pytest in the Python step of scripts/test.sh, which installs lizard
into build/venv."""

import pathlib

import lizard
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MOST_LINES = 60
TREES = ["include/ctpipe", "tools/ctpipe"]


def functions(tree):
    """Every function lizard finds in the C++ sources under ``tree``, with its file."""
    files = sorted(p for p in (ROOT / tree).rglob("*") if p.suffix in (".hpp", ".cpp"))
    for path in files:
        for function in lizard.analyze_file(str(path)).function_list:
            yield path.relative_to(ROOT), function


@pytest.mark.parametrize("tree", TREES)
def test_no_function_over_60_lines(tree):
    found = list(functions(tree))
    # The walk reads the tree: a wrong path or a parser that finds nothing cannot pass.
    assert len(found) > 100, f"{tree}: only {len(found)} functions found"
    long = [f"{path}:{f.start_line} {f.name} ({f.length} lines)" for path, f in found if f.length > MOST_LINES]
    assert not long, f"functions over {MOST_LINES} lines:\n" + "\n".join(long)


def test_the_rule_sees_a_long_function(tmp_path):
    """The measure itself: a 61-line function is over the limit, a 60-line one is not."""
    for lines, over in ((60, False), (61, True)):
        body = "\n".join(f"  x += {k};" for k in range(lines - 3))
        source = tmp_path / f"f{lines}.hpp"
        source.write_text(f"inline int f(int x) {{\n{body}\n  return x;\n}}\n")
        (function,) = lizard.analyze_file(str(source)).function_list
        assert function.length == lines
        assert (function.length > MOST_LINES) == over
