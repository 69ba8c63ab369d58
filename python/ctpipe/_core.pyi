"""Type stubs of ctpipe._core, the nanobind extension (python/src/core.cpp). Use the
ctpipe package; this module is its implementation."""

class Error(ValueError):
    """A rejected request, schedule or file; the message is the `ctpipe:` line."""

def invoke(args: list[str]) -> tuple[int, bytes, str]:
    """Runs the tool on `args` in this process: (exit code, stdout, stderr)."""

class Request:
    """One checked request of the tool's default view and its generated schedule."""

    def __init__(self, args: list[str]) -> None: ...
    @property
    def family(self) -> str: ...
    @property
    def P(self) -> int: ...  # noqa: N802
    @property
    def m(self) -> int: ...
    @property
    def V(self) -> int: ...  # noqa: N802
    @property
    def placement(self) -> str: ...
    @property
    def num_stages(self) -> int: ...
    @property
    def num_ops(self) -> int: ...
    def stages_of(self, rank: int) -> list[int]: ...
    def actions(self, comms: bool = False) -> list[list[str]]: ...
    def arrays(self, comms: bool = False) -> tuple[bytes, bytes, bytes, bytes]:
        """kind (uint8), stage (int32), microbatch (int32), offsets (int64, P + 1)."""
    def simulate(self) -> dict[str, object]:
        """makespan and bubble_fraction as (numerator, denominator); idle: a list of them."""
