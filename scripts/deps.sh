# Sourced by scripts/ctpipe.sh and scripts/test.sh: installs the Debian packages that are
# missing (as root through apt-get, otherwise through sudo), nothing else.
ctpipe_install_missing() {
  missing=""
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
  done
  [ -z "$missing" ] && return 0
  echo "ctpipe: installing missing Debian packages:$missing" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >&2
}

# What building the tool needs (CBC, found through pkg-config, for `ctpipe search`'s exact method).
CTPIPE_TOOL_PACKAGES="cmake make g++ libboost-dev libfmt-dev nlohmann-json3-dev libcli11-dev pkg-config coinor-libcbc-dev"
# What the tests add: Catch2, Chromium, ImageMagick, Open MPI, Eigen; the Clang presets (clang, ci, asan)
# also Clang and its sanitizer runtime.
# Headless Chromium and ImageMagick for the screenshot test of the SVG pictures.
# Open MPI (mpirun and the headers) and Eigen for examples/mpi_pipeline, which a test runs on 4 and on 2
# processes.
CTPIPE_TEST_PACKAGES="$CTPIPE_TOOL_PACKAGES catch2 chromium imagemagick openmpi-bin libopenmpi-dev libeigen3-dev"
CTPIPE_CLANG_PACKAGES="clang"

# Clang's sanitizer runtime, named after its major version (Debian 12: clang 14,
# libclang-rt-14-dev; Debian 13: clang 19, libclang-rt-19-dev): installed once clang is.
ctpipe_install_clang_runtime() {
  major=$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
  [ -n "$major" ] || { echo "ctpipe: cannot read clang's version" >&2; return 1; }
  ctpipe_install_missing "libclang-rt-$major-dev"
}

# What the page (preset web, docs/web.md) needs: Debian's emscripten (3.1.6, on clang 14)
# to build it, the header-only libraries of the tool's request parser it compiles ({fmt},
# CLI11, nlohmann-json) and python3 to serve it (scripts/web.sh); its test
# (tests/web/page_test.mjs) adds Chromium, ImageMagick's compare, and node with npm for
# puppeteer-core.
CTPIPE_WEB_PACKAGES="cmake make emscripten libfmt-dev libcli11-dev nlohmann-json3-dev python3"
CTPIPE_WEB_TEST_PACKAGES="$CTPIPE_WEB_PACKAGES chromium imagemagick"

# Installs node and npm when either command is missing: Debian's nodejs and npm. A node
# from elsewhere (NodeSource's, which provides npm itself and conflicts with Debian's
# npm package) is kept as it is.
ctpipe_install_node() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && return 0
  ctpipe_install_missing nodejs npm
}
