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

# What building the tool needs.
CTPIPE_TOOL_PACKAGES="cmake make g++ libboost-dev libfmt-dev nlohmann-json3-dev libcli11-dev"
# What the tests add: Catch2, Chromium, ImageMagick, Open MPI, Eigen; the Clang presets (clang, ci, asan)
# also Clang and its sanitizer runtime.
# Headless Chromium and ImageMagick for the screenshot test of the SVG pictures.
# Open MPI (mpirun and the headers) and Eigen for examples/mpi_pipeline, which a test runs on 4 and on 2
# processes.
CTPIPE_TEST_PACKAGES="$CTPIPE_TOOL_PACKAGES catch2 chromium imagemagick openmpi-bin libopenmpi-dev libeigen3-dev"
CTPIPE_CLANG_PACKAGES="clang libclang-rt-14-dev"
