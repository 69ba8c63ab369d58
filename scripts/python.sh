# Sourced by scripts/test.sh: the Python step. Makes the virtual environment build/venv
# (Python 3.11: the interpreter CTPIPE_PYTHON names, else python3.11, else python3), puts
# PyTorch 2.13.0 (pinned: an unpinned torch fetches a CUDA build of several GB), pytest,
# lizard (pinned: tests/source measures the C++ functions' lengths with it), pytest-xdist and
# the package (pip install ., which builds ctpipe._core from the headers through
# scikit-build-core, cached in build/python) into it, then runs pytest on python/tests
# and tests/source in two worker processes, a test file to a worker (--dist loadfile: the
# PyTorch runs' process pools start once per file; two pools at once on 2 cores took 80 s
# where one file a worker takes 50 and one process 62).
# The tool those tests compare the package with is $1 (a built `ctpipe`).
# ctpipe_python_venv alone makes the environment and installs the package (bench/run.sh).
ctpipe_python_venv() {
  python=${CTPIPE_PYTHON:-}
  [ -n "$python" ] || python=$(command -v python3.11 || command -v python3 || true)
  if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    ctpipe_install_missing python3 python3-venv python3-dev
    python=${python:-python3}
  fi
  if [ ! -x build/venv/bin/python ]; then
    echo "== ctpipe: making the virtual environment build/venv with $python"
    "$python" -m venv build/venv
  fi
  venv_python=build/venv/bin/python
  if ! $venv_python -c 'import torch, pytest, lizard, xdist; assert torch.__version__.startswith("2.13.0")' >/dev/null 2>&1; then
    echo "== ctpipe: installing torch==2.13.0 (CPU), pytest, pytest-xdist and lizard into build/venv"
    $venv_python -m pip install -q --disable-pip-version-check "torch==2.13.0" "pytest>=8" "pytest-xdist==3.8.0" "lizard==1.24.3"
  fi
  echo "== ctpipe: building and installing the Python package (pip install .)"
  # Warnings as errors: this Release (-O2, pyproject.toml) build of the tool's code
  # (ctpipe_cli) is also the test that the README's first command, the tool preset's
  # Release build at -O2, builds (GCC warns about some things only when optimising).
  $venv_python -m pip install -q --disable-pip-version-check -C cmake.define.CTPIPE_WARNINGS_AS_ERRORS=ON .
}

ctpipe_python_tests() {
  tool=$1
  ctpipe_python_venv
  venv_python=build/venv/bin/python
  echo "== ctpipe: pytest (python/tests, tests/source)"
  CTPIPE_TOOL="$tool" $venv_python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile python/tests tests/source
}
