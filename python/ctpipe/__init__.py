"""ctpipe: pipeline-parallel training schedules, exact, from Python.

A thin layer over the C++ library and its ``ctpipe`` tool (the extension ``ctpipe._core``):
a request is the tool's options given as keywords, parsed by the tool's own parser; every
readout is the tool's (``Schedule.readout()`` is ``ctpipe --format json``, field for field);
every exact number is a :class:`fractions.Fraction`. ``import ctpipe`` never imports torch:
:mod:`ctpipe.torch` runs ctpipe's schedules in PyTorch's own pipeline runtime.

    >>> import ctpipe
    >>> s = ctpipe.Schedule("1f1b", P=4, m=8)
    >>> s.simulate().bubble_fraction
    Fraction(3, 11)
    >>> s.actions()[3][:4]
    ['3F0', '3B0', '3F1', '3B1']

Errors: every rejected request, schedule or file raises :class:`ctpipe.Error` (a
``ValueError``) whose message is the library's or the tool's ``ctpipe:`` line.
Reference: docs/python.md.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import os
import tempfile
from collections.abc import Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from . import _core

__all__ = [
    "Error",
    "FAMILIES",
    "LOWERINGS",
    "RUNTIMES",
    "SCHEDULE_OPTIONS",
    "Schedule",
    "Simulation",
    "compare",
    "Formula",
    "Lifetime",
    "Slots",
    "fill",
    "formula",
    "fraction",
    "options_to_args",
    "rebalance",
    "run_tool",
    "search",
    "split",
    "validate",
]

__version__ = "0.1.0"

#: Raised for every rejected request, schedule or file; ``str(e)`` is the ``ctpipe:`` message.
Error = _core.Error

#: The schedule families, as the tool names them (``ctpipe --help``).
FAMILIES = (
    "gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zb-h2", "zbv",
    "interleaved-zb", "dualpipev", "dualpipe", "v-half", "v-min", "combined-1f1b",
)

#: The keywords of :class:`Schedule` beside ``family``, ``P``, ``m`` and ``V``: the tool's
#: default-view options (``ctpipe --help``), ``-`` as ``_``.
SCHEDULE_OPTIONS = (
    "placement", "variant", "group", "warmup_factor", "structural_minimum", "pair_model", "costs", "gamma",
    "stage_scale", "microbatch_scale", "model", "memory_limit", "layers", "layout", "device_flops",
    "link_bandwidth", "runtime", "lowering", "torch_passes", "max_active_stages", "width", "color",
)

#: The runtime models of lowering and execution (docs/runtimes.md): four per-transfer
#: models, then the stream models (NCCL's first-in first-out streams) by channel policy.
RUNTIMES = ("blocking", "rendezvous", "posted", "batched", "stream-rank", "stream-peer", "stream-direction",
            "stream-edge")

#: Who places the sends and receives of the lowered lists (``lowering=``, the tool's
#: ``--lowering``; docs/pytorch.md): ``own`` (ctpipe's ``lower()`` for ``runtime``),
#: ``deepseek`` (DeepSeek's ``step()``, dualpipev and dualpipe), and PyTorch's orders:
#: ``torch-asap`` (``_add_send_recv``, torch 2.13's default), ``torch-warmup`` (PR #165664's
#: warm-up RECVs after the forwards), ``torch-consumer`` (PR #172833's RECV before its
#: consumer), ``torch-parity`` (``_defer_recv_ops``, ``defer_pp_recv=True``); and
#: ``least-loss`` (under a stream model the fastest of ctpipe's three orders,
#: docs/runtimes.md; ``own`` under the other models).
LOWERINGS = ("own", "deepseek", "torch-asap", "torch-warmup", "torch-consumer", "torch-parity", "least-loss")


def fraction(text: str | int | Fraction) -> Fraction:
    """An exact number of a readout (``"3/11"``, ``"4"``) as a :class:`~fractions.Fraction`;
    raises :class:`Error` for anything else."""
    try:
        return Fraction(text)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise Error(f"ctpipe: not an exact number: {text!r}") from None


def _item(name: str, value: Any) -> str:
    """One item of a mapping or list option: a comma, '=' or line break in it would make
    further items of the tool's text, so it is refused."""
    text = _value(name, value)
    if any(c in text for c in ",=\r\n"):
        raise Error(f"ctpipe: {name}: an item's value holds ',', '=' or a line break: {text!r}")
    return text


def _value(name: str, value: Any) -> str:
    """One option's value as the tool's text: exact numbers stay exact. Integers of any
    type (``numpy.int64``) are whole numbers; floats (``float`` and its subclasses, such as
    ``numpy.float64``) are read as their shortest repr."""
    if isinstance(value, bool):
        raise Error(f"ctpipe: {name} takes a value, not {value!r}")
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, float):
        # A float is read as its shortest repr (0.1 means 1/10, 1e-05 1/100000), the number
        # typed; float() first: a subclass (numpy.float64) may print itself otherwise.
        value = Decimal(repr(float(value)))
    if isinstance(value, numbers.Real) and not isinstance(value, Decimal):
        # Another real type (numpy.float32): its own shortest text, the number typed.
        try:
            value = Decimal(str(value))
        except ArithmeticError:
            raise Error(f"ctpipe: {name} takes a finite number, not {value!r}") from None
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise Error(f"ctpipe: {name} takes a finite number, not {value}")
        return format(value, "f")
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise Error(f"ctpipe: {name} takes a number or a string, not {type(value).__name__}")
    if isinstance(value, Mapping):
        for k in value:
            if not isinstance(k, str) or not k or any(c in k for c in ",=: \t\r\n"):
                raise Error(f"ctpipe: {name}: a key is a name such as 'f' (no ',', '=', ':' or "
                            f"space), not {k!r}")
        return ",".join(f"{k}={_item(name, v)}" for k, v in value.items())
    if isinstance(value, Sequence):
        return ",".join(_item(name, v) for v in value)
    raise Error(f"ctpipe: {name} takes a number, a string, a list or a mapping, not {type(value).__name__}")


# Options the tool takes once per item: a list gives the option once per item.
_REPEATED = ("fill",)

#: The tool's options that are flags (they take no value): True gives the flag
#: (``--structural-minimum``; ``fill``'s ``--steady-state`` and ``--allow-stretch``;
#: ``compare``'s ``--rebalance``).
_FLAGS = ("structural_minimum", "steady_state", "allow_stretch", "rebalance")


def options_to_args(options: Mapping[str, Any]) -> list[str]:
    """The tool's command-line arguments for keyword options.

    ``P=4`` gives ``-P 4``; ``warmup_factor=1`` gives ``--warmup-factor 1``; ``True`` a flag
    (``structural_minimum=True``), ``False`` or ``None`` nothing; a mapping ``k=v,...``
    (``costs={"f": 1, "b": Fraction(5, 2)}``); a sequence comma-separated
    (``stage_scale=[1, 1, Fraction(5, 4), 1]``), except ``fill``, whose list gives one
    ``--fill`` per job. Raises :class:`Error` for a value of another type (bytes, a bool for
    P, m or V, True for an option that takes a value, anything but a bool for a flag),
    ``help`` or ``version``, or a value holding a NUL character.
    """
    args: list[str] = []
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise Error(f"ctpipe: an option name must be a non-empty string, not {key!r}")
        if key in ("help", "version"):
            raise Error(f"ctpipe: --{key} is the tool's, not a request's (see docs/python.md)")
        if key in ("P", "m", "V") and isinstance(value, bool):
            raise Error(f"ctpipe: -{key} takes a whole number, not {value!r}")
        flag = f"-{key}" if key in ("P", "m", "V") else "--" + key.replace("_", "-")
        if key in _FLAGS and not isinstance(value, bool) and value is not None:
            raise Error(f"ctpipe: {flag} is a flag: True or False, not {value!r}")
        if value is None or value is False:
            continue
        if value is True:
            if key not in _FLAGS:
                raise Error(f"ctpipe: {flag} takes a value, not True")
            args.append(flag)
            continue
        if key in _REPEATED and isinstance(value, (list, tuple)):
            for item in value:  # --fill a --fill b: one job each
                text = _value(flag, item)
                if "\0" in text:
                    raise Error(f"ctpipe: {flag} holds a NUL character")
                args += [flag, text]
            continue
        text = _value(flag, value)
        if "\0" in text or "\0" in key:
            raise Error(f"ctpipe: {flag} holds a NUL character")
        args += [flag, text]
    return args


def run_tool(args: Sequence[str]) -> str:
    """Runs the ``ctpipe`` tool on ``args`` in this process and returns its standard output.

    Raises :class:`Error` with the tool's ``ctpipe:`` line(s) where the tool exits with 2
    (or 1: an internal error). Notes the tool prints on success are dropped.
    """
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise Error("ctpipe: run_tool() takes a list of arguments, e.g. ['-s', 'gpipe']")
    args = [str(a) for a in args]
    if any("\0" in a for a in args):
        raise Error("ctpipe: an argument holds a NUL character")
    code, out, err = _core.invoke(args)
    if code != 0:
        raise Error(err.rstrip("\n"))
    return out.decode("utf-8", errors="replace")


def _json(args: Sequence[str]) -> dict[str, Any]:
    return json.loads(run_tool(list(args) + ["--format", "json"]))


# Options of the request that one view alone takes: left out of the others (Schedule._with).
_FORMAT_ONLY = {
    "runtime": ("json", "csv-comms"),
    "lowering": ("json", "csv-comms"),
    "torch_passes": ("json", "csv-comms"),
    "max_active_stages": ("json", "csv-comms"),
    "width": ("text",),
    "color": ("text",),
}

# Options json takes only with a torch-* lowering (they change PyTorch's order, not ctpipe's).
_TORCH_ORDER_ONLY = ("torch_passes", "max_active_stages")

# actions() makes a Python string per action: at most the tool's JSON limit of ops.
_MAX_ACTION_OPS = 1 << 21


def _check_bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise Error(f"ctpipe: {name} must be True or False, not {value!r}")


@dataclasses.dataclass(frozen=True)
class Simulation:
    """The exact simulation of a schedule under its costs (docs/spec.md §2-3).

    ``makespan``: the step's length in the costs' time unit; ``idle``: per rank, the time it
    does not compute within the makespan; ``bubble_fraction``: total idle over P times the
    makespan. All :class:`~fractions.Fraction`.
    """

    makespan: Fraction
    bubble_fraction: Fraction
    idle: tuple[Fraction, ...]


@dataclasses.dataclass(frozen=True)
class Lifetime:
    """One lifetime of :meth:`Schedule.slots`: on pipeline rank ``rank``, the saved
    activation (``kind`` ``"activation"``) or the receive buffer (``"receive"``) of
    (``stage``, ``microbatch``), live from action ``start_index`` to action ``end_index``
    of its rank's list (0-based, both included: two lifetimes conflict when they hold one
    action), from time ``start`` to ``end`` in the costs' time unit (Fractions), held in
    slot ``slot`` (0-based, per rank and kind); ``start_op`` and ``end_op`` are those
    actions (``"0F3"``, ``"0W3"``, ``"1RECV_F3"``)."""

    rank: int
    stage: int
    microbatch: int
    kind: str
    start: Fraction
    end: Fraction
    slot: int
    start_op: str
    end_op: str
    start_index: int
    end_index: int


@dataclasses.dataclass(frozen=True)
class Slots:
    """The slots of :meth:`Schedule.slots` (``ctpipe slots --format json``). Per rank:
    ``activation_slots`` and ``receive_buffers``, the slots each kind needs, and
    ``activation_overlap`` and ``receive_overlap``, the most lifetimes of that kind that
    hold one action of the rank's list: equal, the colouring is minimal. ``lifetimes``: every
    :class:`Lifetime`, by rank, activations (in the order of their F) before receives (in
    the order of their RECV). ``timeline`` is ``"simulated"`` or ``"executed"``,
    ``runtime`` the executed timeline's model (else None)."""

    timeline: str
    runtime: str | None
    activation_slots: tuple[int, ...]
    activation_overlap: tuple[int, ...]
    receive_buffers: tuple[int, ...]
    receive_overlap: tuple[int, ...]
    lifetimes: tuple[Lifetime, ...]


# The Schedule's options that `ctpipe slots` does not take and that do not change its
# timeline: left out of Schedule.slots().
_NOT_SLOTS = ("gamma", "memory_limit", "torch_passes", "max_active_stages", "width", "color")


class Schedule:
    """One generated schedule: a family and a shape, with any of the tool's options.

    ``Schedule(family="1f1b", P=4, m=8, V=None, **options)``: ``family`` is one of
    :data:`FAMILIES`; ``P`` pipeline ranks, ``m`` micro-batches, ``V`` model chunks per
    rank (default: the family's own, 2 for the chunked families, else 1). Every other
    option of the tool's default view is a keyword (``ctpipe --help``; ``-`` becomes ``_``):
    ``placement``, ``variant``, ``group``, ``warmup_factor``, ``structural_minimum``,
    ``pair_model``, ``costs``, ``gamma``, ``stage_scale``, ``microbatch_scale``, ``model``,
    ``memory_limit``, ``layers``, ``layout`` (Megatron-LM's layout string, e.g.
    ``"Et*8|(t*8|)*2,t*8L"``), ``device_flops``, ``link_bandwidth``, ``runtime``,
    ``lowering`` (one of :data:`LOWERINGS`), ``torch_passes``, ``max_active_stages`` (see
    :func:`options_to_args` for the values). The request is parsed and checked by the
    tool's parser and the schedule generated at once; a bad one raises :class:`Error` with
    the tool's message, e.g. ``ctpipe: interleaved-1f1b (megatron) needs m % group == 0 or
    m % group >= P``. Options one view alone takes (``runtime``, ``lowering``: the lowered
    lists and the readout; ``torch_passes``, ``max_active_stages``: the lowered lists, and
    the readout with a ``torch-*`` lowering, whose order they change; ``width``, ``color``:
    the text view) are left out of the others. Requests over 2^24 ops (the tool's largest
    view) are refused.
    """

    def __init__(self, family: str = "1f1b", P: int = 4, m: int = 8, V: int | None = None, **options: Any):
        if not isinstance(family, str):
            raise Error(f"ctpipe: the family is a name such as '1f1b', not {family!r}")
        for name, value in (("P", P), ("m", m)):
            if value is None:
                raise Error(f"ctpipe: {name} takes a number, not None")
        opts: dict[str, Any] = {"schedule": family, "P": P, "m": m, "V": V}
        opts.update(options)
        for reserved in ("format", "help", "version"):
            if reserved in opts:
                raise Error(f"ctpipe: --{reserved} is not a Schedule option (use readout(), csv() or render())")
        for key in options:
            if key not in SCHEDULE_OPTIONS:
                raise Error(f"ctpipe: unknown option {key!r} (known: {', '.join(SCHEDULE_OPTIONS)})")
        self._options = opts
        self._args = options_to_args(opts)
        self._core = _core.Request(self._args)

    def __repr__(self) -> str:
        return f"ctpipe.Schedule({self.family!r}, P={self.P}, m={self.m}, V={self.V})"

    # --- the request ------------------------------------------------------------------
    @property
    def family(self) -> str:
        """The family's name, as the tool prints it."""
        return self._core.family

    @property
    def P(self) -> int:  # noqa: N802 (the field's name)
        """Pipeline ranks."""
        return self._core.P

    @property
    def m(self) -> int:
        """Micro-batches per training step."""
        return self._core.m

    @property
    def V(self) -> int:  # noqa: N802
        """Model chunks (stages) per rank."""
        return self._core.V

    @property
    def placement(self) -> str:
        """The stage placement: ``loop``, ``v`` or ``bidirectional`` (dualpipe)."""
        return self._core.placement

    @property
    def num_stages(self) -> int:
        """Stages of the model: ``P * V`` (PyTorch's ``num_stages``)."""
        return self._core.num_stages

    @property
    def num_ops(self) -> int:
        """Compute ops over all ranks (an overlapped pair counts as its two words)."""
        return self._core.num_ops

    @property
    def args(self) -> list[str]:
        """The tool's command-line arguments of this request (without ``--format``)."""
        return list(self._args)

    def with_options(self, **options: Any) -> Schedule:
        """The same request with some options changed (``None`` removes one)."""
        opts = dict(self._options)
        opts.update(options)
        family, P, m, V = opts.pop("schedule"), opts.pop("P"), opts.pop("m"), opts.pop("V")
        return Schedule(family, P, m, V, **opts)

    def stages_of(self, rank: int) -> list[int]:
        """The stage indices ``rank`` holds, in its chunk order (loop: ``r, r + P, ...``;
        V-shape: ``r, 2P - 1 - r``). Raises :class:`Error` for a rank outside ``[0, P)``."""
        if not isinstance(rank, numbers.Integral) or isinstance(rank, bool):
            raise Error(f"ctpipe: stages_of(rank): rank must be an int, not {type(rank).__name__}")
        rank = int(rank)
        if not 0 <= rank < self.P:
            raise Error("ctpipe: stages_of(rank): rank must be in [0, P)")
        return self._core.stages_of(rank)

    # --- op lists -----------------------------------------------------------------------
    def _lowered(self, comms: bool, overrides: dict[str, Any]) -> Schedule:
        if not overrides:
            return self
        if not comms:
            raise Error("ctpipe: runtime, lowering, torch_passes, max_active_stages and fsdp apply with comms=True only")
        return self.with_options(**overrides)

    @staticmethod
    def _overrides(runtime, lowering, torch_passes, max_active_stages, fsdp) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if runtime is not None:
            out["runtime"] = runtime
        if lowering is not None:
            if not isinstance(lowering, str):
                raise Error(f"ctpipe: lowering must be one of {', '.join(repr(x) for x in LOWERINGS)}, not {lowering!r}")
            out["lowering"] = lowering
        if fsdp is not None:
            if not isinstance(fsdp, bool):
                raise Error(f"ctpipe: fsdp must be True or False, not {fsdp!r}")
            if torch_passes is not None:
                raise Error("ctpipe: give fsdp or torch_passes, not both")
            torch_passes = "all" if fsdp else "reduce-grad"
        if torch_passes is not None:
            out["torch_passes"] = torch_passes
        if max_active_stages is not None:
            out["max_active_stages"] = max_active_stages
        return out

    def actions(self, comms: bool = False, *, runtime: str | None = None, lowering: str | None = None,
                torch_passes: str | None = None, max_active_stages: int | None = None,
                fsdp: bool | None = None) -> list[list[str]]:
        """Per rank (a list of P lists), PyTorch's action strings in execution order.

        ``comms=False``: the compute-only schedule (``0F3``, ``1B2``, ``2I0``, ``2W0``,
        ``(0F3;3B1)OVERLAP_F_B``), what ``--format csv`` writes. ``comms=True``: ctpipe's
        lowering for ``runtime`` (``SEND_F``/``RECV_F``/``SEND_B``/``RECV_B``) with PyTorch's
        ``UNSHARD``/``RESHARD``/``REDUCE_GRAD`` placed as its ``_add_unshard_reshard`` and
        ``_add_reduce_grad`` place them (``torch_passes``: ``all``, ``reduce-grad``, ``none``;
        ``fsdp=False`` is ``reduce-grad``), what ``--format csv-comms`` writes. ``lowering``
        (one of :data:`LOWERINGS`) chooses who places the transfers: ``deepseek`` DeepSeek's
        batches; ``torch-asap``, ``torch-warmup``, ``torch-consumer``, ``torch-parity``
        PyTorch's orders, the same for every ``runtime`` (``torch-asap`` is what
        ``_PipelineScheduleRuntime`` makes of ``actions()``, ``torch-parity`` the same with
        ``defer_pp_recv=True``, token for token; the passes' actions take rounds there, so
        ``torch_passes`` changes the order).
        """
        _check_bool("comms", comms)
        s = self._lowered(comms, self._overrides(runtime, lowering, torch_passes, max_active_stages, fsdp))
        if s.num_ops > _MAX_ACTION_OPS:
            raise Error(f"ctpipe: {s.num_ops} ops are too many for actions() (at most {_MAX_ACTION_OPS}, as the "
                        "tool's JSON): arrays() gives any size without a Python object per op")
        return s._core.actions(comms)

    def arrays(self, comms: bool = False) -> dict[str, memoryview]:
        """The ops as flat arrays, without a Python object per op (CSR layout).

        ``kind`` (uint8: 0 F, 1 B, 2 I, 3 W, 4 SEND_F, 5 RECV_F, 6 SEND_B, 7 RECV_B,
        8 OVERLAP_F_B word, the pair's B following it), ``stage`` and ``microbatch`` (int32),
        one entry per op, rank 0's first; ``offsets`` (int64, P + 1): rank r's ops are
        ``offsets[r]:offsets[r + 1]``. Read-only memoryviews: ``numpy.asarray(a["stage"])``
        or ``torch.frombuffer(...)`` take them without a copy per op.
        """
        _check_bool("comms", comms)
        kinds, stages, microbatches, offsets = self._core.arrays(comms)
        return {
            "kind": memoryview(kinds).cast("B"),
            "stage": memoryview(stages).cast("i"),
            "microbatch": memoryview(microbatches).cast("i"),
            "offsets": memoryview(offsets).cast("q"),
        }

    # --- readouts -----------------------------------------------------------------------
    def simulate(self) -> Simulation:
        """The exact simulation (makespan, bubble fraction, idle per rank) under the
        request's costs and scales: the library's ``simulate()``, no readout in between."""
        r = self._core.simulate()
        return Simulation(
            makespan=Fraction(*r["makespan"]),
            bubble_fraction=Fraction(*r["bubble_fraction"]),
            idle=tuple(Fraction(*x) for x in r["idle"]),
        )

    def readout(self, **options: Any) -> dict[str, Any]:
        """The tool's ``--format json`` of this request (with ``options`` added, e.g.
        ``costs="f=1,b=2"``, ``runtime="posted"``): a dict equal to the tool's JSON, field
        for field; exact numbers are strings such as ``"3/11"`` (:func:`fraction`).
        Fields: docs/json.md."""
        return json.loads(run_tool(self._with(options, "json")))

    def execute(self, runtime: str | None = None) -> dict[str, Any]:
        """The lowered lists executed under a runtime model (``runtime``, one of
        :data:`RUNTIMES`; default every model): the readout's ``executed`` entry
        (makespan, stalls, deadlock per model; a stream model's hang also names its
        ``cycle``, and a stream model's entry has ``loss_bound``: a loss no order of the
        transfers avoids, exact). The lists are the Schedule's ``lowering`` (default ``own``: ctpipe's
        lowering for each model; ``torch-asap`` and the other orders of :data:`LOWERINGS`:
        one set of lists, run under each model, with the Schedule's ``torch_passes``)."""
        return self.readout(runtime=runtime)["executed"]

    def peak_in_flight(self) -> list[Fraction]:
        """Per rank, the peak in-flight activations (in chunks, weighted by gamma)."""
        return [Fraction(x) for x in self.readout()["peak_in_flight"]]

    def slots(self, runtime: str | None = None) -> Slots:
        """The activation slots and receive buffers each pipeline rank needs: ``ctpipe
        slots``'s JSON as a :class:`Slots` (times as :class:`~fractions.Fraction`).

        Without ``runtime`` (and without one given to the Schedule) the simulated timeline,
        activations only; with ``runtime`` (one of :data:`RUNTIMES`) the executed timeline
        of ctpipe's own lowering under that model, activations and receive buffers. The
        liveness rule is PyTorch's planned one (docs/memory.md, "Slots"): an F starts an
        activation's lifetime, its B or W ends it (an I does not), endpoints inclusive; a
        receive buffer lives from its RECV's start to the end of the op that consumes it.
        ``gamma`` and the view options are left out (a slot holds a whole activation);
        ``model``, ``layers``, ``layout``, ``device_flops``, ``link_bandwidth`` and
        ``lowering`` are refused by the tool with its message (:class:`Error`)."""
        merged = {k: v for k, v in self._options.items() if k not in _NOT_SLOTS}
        if runtime is not None:
            merged["runtime"] = runtime
        j = _json(["slots", *options_to_args(merged)])
        lifetimes = tuple(
            Lifetime(rank=r["rank"], stage=x["stage"], microbatch=x["microbatch"], kind=x["kind"],
                     start=fraction(x["start"]), end=fraction(x["end"]), slot=x["slot"], start_op=x["start_op"],
                     end_op=x["end_op"], start_index=x["start_index"], end_index=x["end_index"])
            for r in j["ranks"] for x in r["lifetimes"])
        return Slots(
            timeline=j["timeline"], runtime=j["runtime"],
            activation_slots=tuple(r["activation"]["slots"] for r in j["ranks"]),
            activation_overlap=tuple(r["activation"]["largest_overlap"] for r in j["ranks"]),
            receive_buffers=tuple(r["receive"]["slots"] for r in j["ranks"]),
            receive_overlap=tuple(r["receive"]["largest_overlap"] for r in j["ranks"]),
            lifetimes=lifetimes,
        )

    def csv(self, comms: bool = False, **options: Any) -> str:
        """The text of ``--format csv`` (``comms=True``: ``csv-comms``; ``options`` such as
        ``runtime="posted"`` or ``torch_passes="none"`` added)."""
        _check_bool("comms", comms)
        return run_tool(self._with(options, "csv-comms" if comms else "csv"))

    def render(self, format: str = "text", **options: Any) -> str:  # noqa: A002 (the tool's name)
        """The tool's view in ``format``: ``text`` (the timeline), ``svg``, ``trace`` (Chrome
        trace-event JSON) or ``json`` (text)."""
        return run_tool(self._with(options, str(format)))

    def _with(self, options: Mapping[str, Any], fmt: str) -> list[str]:
        """The tool's arguments for ``fmt`` with ``options`` added. The request's own options
        that only one view takes (_FORMAT_ONLY) are left out of the others, so that
        ``Schedule(..., runtime="posted").csv()`` is the compute-only file."""
        for key in options:
            if key in ("family", "schedule", "s", "P", "m", "V", "format"):
                raise Error(f"ctpipe: {key} is the schedule's own (or the view's): make another Schedule "
                            f"(or call render(format=...)), not a readout option")
        merged = dict(self._options)
        for key, formats in _FORMAT_ONLY.items():
            if fmt not in formats:
                merged.pop(key, None)
        if fmt == "json" and not str(merged.get("lowering", "")).startswith("torch-"):
            for key in _TORCH_ORDER_ONLY:  # json takes them with a torch order only, whose order they change
                merged.pop(key, None)
        merged.update(options)
        return options_to_args(merged) + ["--format", fmt]


def _command(name: str, options: Mapping[str, Any], *positional: str) -> dict[str, Any]:
    if "format" in options:
        raise Error(f"ctpipe: {name}() reads the tool's JSON; format is not taken")
    return _json([name, *positional, *options_to_args(options)])


def validate(source: str | os.PathLike[str] | Sequence[Sequence[str]], **options: Any) -> dict[str, Any]:
    """Checks and simulates a schedule in PyTorch's CSV format: ``ctpipe validate``'s JSON.

    ``source``: CSV text (rows of action strings, ``\\n`` or ``\\r\\n`` line ends), a path
    (:class:`os.PathLike`), or per-rank lists of action strings (text and lists read as a
    file named ``<csv>``: the JSON's ``schedule`` field). ``options``: the command's
    (``costs``, ``gamma``, ``runtime``, ...). Raises :class:`Error` with the reader's message
    (row, cell and action named) for a bad file and the validator's for an invalid schedule.
    """
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        if not isinstance(path, str):
            raise Error(f"ctpipe: validate() takes a path as str, not {type(path).__name__}")
        # A path the tool would read as an option or as standard input ("-") is a file here.
        return _command("validate", options, path if not path.startswith("-") else os.path.join(".", path))
    if isinstance(source, str):
        text = source
    else:
        rows: list[list[Any]] = []
        try:
            for r, row in enumerate(source):
                if isinstance(row, (str, bytes)):
                    raise Error(f"ctpipe: validate(): rank {r} is a string, not a list of action strings "
                                f"(CSV text is one string for all ranks)")
                rows.append(list(row))
        except TypeError as e:
            raise Error(f"ctpipe: validate() takes CSV text, a path or per-rank lists of action strings ({e})") from None
        for r, row in enumerate(rows):
            for a in row:
                if not isinstance(a, str):
                    raise Error(f"ctpipe: validate(): rank {r} holds {a!r}, not an action string")
                if any(c in a for c in ",\r\n"):
                    raise Error(f"ctpipe: validate(): rank {r} holds {a!r}: one action per string "
                                f"(no ',' or line break)")
        text = "\n".join(",".join(row) for row in rows) + "\n"
    if "\0" in text:
        raise Error("ctpipe: the CSV text holds a NUL character")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Error(f"ctpipe: the CSV text is not valid Unicode ({e.reason} at character {e.start})") from None
    with tempfile.TemporaryDirectory(prefix="ctpipe-") as folder:
        path = os.path.join(folder, "schedule.csv")
        with open(path, "wb") as f:
            f.write(data)
        try:
            out = _command("validate", options, path)
            if out.get("schedule") == path:
                out["schedule"] = "<csv>"  # the file's name: text has none
            return out
        except Error as e:
            raise Error(str(e).replace(path, "<csv>")) from None


def compare(**options: Any) -> dict[str, Any]:
    """Several schedules on one time axis: ``ctpipe compare``'s JSON (``schedules=[...]``)."""
    return _command("compare", options)


def fill(**options: Any) -> dict[str, Any]:
    """Independent work put into a schedule's bubbles: ``ctpipe fill``'s JSON
    (``fill="encoder:f=1/4,b=1/2"``, ``allow_stretch=True``, ...)."""
    return _command("fill", options)


def rebalance(**options: Any) -> dict[str, Any]:
    """Saved activations moved to idle ranks: ``ctpipe rebalance``'s JSON (``capacity``,
    ``costs={"move": Fraction(1, 4)}``, ...)."""
    return _command("rebalance", options)


@dataclasses.dataclass(frozen=True)
class Formula:
    """A schedule's makespan, idle, bubble fraction and peaks as exact functions of m, for
    every m, from its periodic certificate (``ctpipe formula``; docs/proofs.md, "Proofs
    for every m"). All numbers are :class:`~fractions.Fraction` in the costs' time unit.

    ``m0`` and ``cycle``: for every m >= m0 of the class (``m % m_step == m_residue``;
    ``m_step`` 1 but for interleaved 1F1B, combined 1F1B and interleaved ZB, whose groups
    of g micro-batches make one class per residue of m modulo g, and DualPipe, 2: m even),
    ``makespan(m) = base[(m - m0) % cycle // m_step] +
    ((m - m0) // cycle) * increment``; below m0, simulated directly at the m of
    ``below_m`` (the class's m the family accepts), their makespans in ``below`` and
    per rank their busy times in ``below_busy`` (busy time is affine in m from m0 on
    only: a rank whose warm-up takes every forward runs no overlapped pair).
    ``busy_base`` and ``busy_per_m`` per rank: busy = base + per_m * m (each rank runs each
    of its stages' ops once per micro-batch, for every m). ``peak_in_flight`` per rank
    (chunks, at m0) and ``peak_in_flight_per_m`` (added per micro-batch past m0: 1 for
    GPipe, V for looped BFS, 0 for the others): :meth:`peaks`. ``phases``: the program's
    growing segments per rank (GPipe 2, looped BFS 2V, else 1). ``closed_forms``: for
    ``"makespan"``, ``"bubble_fraction"`` and ``"peak_in_flight"``, the least m from which
    the family's closed form holds at every larger m (``None``: not for every m from some
    m on); where it holds it always equals the simulation (else :func:`formula` raises, a
    bug).
    """

    family: str
    P: int  # noqa: N815 (the field's name)
    V: int  # noqa: N815
    m0: int
    cycle: int
    base: tuple[Fraction, ...]
    increment: Fraction
    below: tuple[Fraction, ...]
    below_m: tuple[int, ...]
    below_busy: tuple[tuple[Fraction, ...], ...]
    m_step: int
    m_residue: int
    busy_base: tuple[Fraction, ...]
    busy_per_m: tuple[Fraction, ...]
    peak_in_flight: tuple[Fraction, ...]
    peak_in_flight_per_m: tuple[Fraction, ...]
    phases: int
    closed_forms: dict[str, int | None] = dataclasses.field(compare=False)

    def makespan(self, m: int) -> Fraction:
        """The makespan under ``m`` micro-batches (a whole number >= 1 of the class: any
        integer type, ``numpy.int64`` included); raises :class:`Error` for another ``m``."""
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise Error(f"ctpipe: m takes a whole number >= 1, not {m!r}")
        m = int(m)
        if m % self.m_step != self.m_residue:
            raise Error(f"ctpipe: this formula holds for m % {self.m_step} == {self.m_residue}, not m = {m}")
        if m < self.m0:
            if m not in self.below_m:
                raise Error(f"ctpipe: the family refuses m = {m}")
            return self.below[self.below_m.index(m)]
        j = (m - self.m0) % self.cycle // self.m_step
        return self.base[j] + ((m - self.m0) // self.cycle) * self.increment

    def idle(self, m: int) -> list[Fraction]:
        """Per rank, the time it does not compute within the makespan under ``m``."""
        T = self.makespan(m)  # noqa: N806 (the paper's name)
        m = int(m)  # checked by makespan()
        if m < self.m0:  # busy is affine in m from m0 on only: below, as simulated
            return [T - busy for busy in self.below_busy[self.below_m.index(m)]]
        return [T - (a + b * m) for a, b in zip(self.busy_base, self.busy_per_m)]

    def peaks(self, m: int) -> list[Fraction]:
        """Per rank, the peak in-flight activations (chunks) under ``m >= m0`` micro-batches
        of the class; raises :class:`Error` below m0 (the formula says nothing there)."""
        self.makespan(m)  # checks m
        if int(m) < self.m0:
            raise Error(f"ctpipe: the peaks are known for m >= m0 = {self.m0}, not m = {m}")
        return [p + q * (int(m) - self.m0) for p, q in zip(self.peak_in_flight, self.peak_in_flight_per_m)]

    def bubble_fraction(self, m: int) -> Fraction:
        """Total idle over P times the makespan under ``m`` micro-batches."""
        return sum(self.idle(m), Fraction(0)) / (self.P * self.makespan(m))


def _closed_form_ranges(forms: Mapping[str, Any]) -> dict[str, int | None]:
    """The JSON's closed-form ranges as {name: from}; a form that disagrees with the
    simulation is a bug, raised."""
    for name, r in forms.items():
        if not r["correct"]:
            raise Error(f"ctpipe: the {name} closed form disagrees with the simulation (a bug: please report it)")
    return {name: r["from"] for name, r in forms.items()}


def formula(family: str = "1f1b", P: int = 4, V: int | None = None, **options: Any) -> Formula:  # noqa: N803
    """The periodic certificate of ``family`` at ``P`` (and ``V``) under the tool's
    ``costs``, ``gamma`` and ``stage_scale`` (``ctpipe formula``): a :class:`Formula`.
    ``m`` is taken by interleaved 1F1B, combined 1F1B and interleaved ZB only, to choose the
    class of m modulo the group (default: the multiples of g); the answer is for every m of
    the class. Raises
    :class:`Error` with the tool's message for a family without a periodic program, for
    ``m`` with another family and for a state that does not repeat within
    ``max_periods``."""
    if "format" in options:
        raise Error("ctpipe: formula() reads the tool's JSON; format is not taken")
    if not isinstance(family, str):
        raise Error(f"ctpipe: the family is a name such as '1f1b', not {family!r}")
    if P is None:
        raise Error("ctpipe: -P takes a whole number, not None")
    if "schedule" in options:
        raise Error("ctpipe: formula() takes the family as its first argument; schedule is not taken")
    j = _json(["formula", *options_to_args({"schedule": family, "P": P, "V": V, **options})])

    def exact(values: Sequence[str]) -> tuple[Fraction, ...]:
        return tuple(fraction(x) for x in values)

    return Formula(
        family=j["schedule"], P=j["P"], V=j["V"], m0=j["m0"], cycle=j["cycle"], base=exact(j["base"]),
        increment=fraction(j["increment"]), below=exact(j["below"]), below_m=tuple(j["below_m"]),
        below_busy=tuple(exact(b) for b in j["below_busy"]),
        m_step=j["m_step"], m_residue=j["m_residue"], busy_base=exact(j["busy"]["base"]),
        busy_per_m=exact(j["busy"]["per_m"]), peak_in_flight=exact(j["peak_in_flight"]),
        peak_in_flight_per_m=exact(j["peak_in_flight_per_m"]), phases=j["phases"],
        closed_forms=_closed_form_ranges(j["closed_forms"]),
    )


def search(**options: Any) -> dict[str, Any]:
    """The split-backward schedule with the least bubble under a memory limit:
    ``ctpipe search``'s JSON (``memory_limit``, ``method``, ``placement``, ...)."""
    return _command("search", options)


def split(**options: Any) -> dict[str, Any]:
    """The model's layers split over the stages to minimise the makespan: ``ctpipe split``'s
    JSON (``model="llama2-7b"``, ``memory_limit``, ...), the split also as Megatron-LM's
    layout string (``layout``, None off the loop placement)."""
    return _command("split", options)
