"""HIR from Python: compile a fusion program (or host IR) and run it on numpy
arrays or torch tensors, without copying them.

    import hir, numpy as np
    program = hir.compile("examples/matmul.mlir")      # a path, the MLIR text, or a hir.Builder
    c = program(a, b)                                   # new outputs, or
    program(a, b, c)                                    # written into c

A call runs one rank of the program: its arguments are that rank's local
shards of the inputs (E/D along a `didx` axis of extent E over D devices), then optionally one
array per output. Arrays come through DLPack: numpy arrays on the cpu
backend, torch CUDA tensors on the cuda backend. They must be contiguous and
of the program's element types (float32, float16, bfloat16, int32, int64).

`program.as_torch_op()` is the program as a torch operator (torch.library,
with a fake implementation), which `torch.compile(fullgraph=True)` traces;
`hir.compile(..., differentiable=True)` also compiles the program's
backward (`fusion-differentiate`), and its calls on torch tensors carry a
`grad_fn`;
`program.as_dtensor_op()` takes and returns DTensors; `hir.Builder` writes
a program from shapes, meshes and op calls.

Where the ranks are (see `docs/Python.md`):
- by default, one rank in this process, on the backend of the first call's
  arrays;
- `hir.init(world_size=N)`: N ranks as threads of this process;
  `program.run_ranks([args of rank 0, args of rank 1, ...])` runs them all;
- `hir.init_from_env()`: this process is one rank of a job of processes
  (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as torchrun sets them),
  meeting the others at HIR's own store;
- `hir.init_from_torch()`: this process's rank of the torch.distributed job
  (an initialised process group, or torchrun's rendezvous), meeting the
  others at the job's own store; cpu or cuda backend either way.
"""

import atexit
import hashlib
import os
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _native, models
from ._native import CompileError, HirError, RunError
from .builder import Builder, BuildError
from .differentiable import DifferentiableProgram
from .dtypes import FLOAT_DTYPES

#: The version of HIR this package was built from.
__version__: str = _native.__version__

__all__ = [
    "BuildError",
    "Builder",
    "CompileError",
    "DifferentiableProgram",
    "HirError",
    "Program",
    "RunError",
    "compile",
    "init",
    "init_from_env",
    "init_from_torch",
    "models",
    "world",
]


class Program:
    """A compiled program. Call it with one rank's arrays."""

    def __init__(self, native: "_native.Program", source: str) -> None:
        self._native = native
        # What the program is, for its torch op's name: its text and
        # options, not the file it came from (a differentiable program's
        # forward: its backward's text too, which its op's formula runs).
        self._digest = hashlib.sha256(f"{source}\0{native.options}".encode()).hexdigest()
        # Read once: a call reads them, and each native read builds them anew.
        self._parameters = tuple((what, tuple(shape), dtype) for what, shape, dtype in native.parameters)
        self._num_inputs = native.num_inputs
        self._num_outputs = native.num_outputs

    @property
    def name(self) -> str:
        """The entry function, e.g. ``@ag_matmul``."""
        return self._native.name

    @property
    def parameters(self) -> List[Tuple[str, Tuple[int, ...], str]]:
        """What a rank passes, in order: ``(what, local shape, dtype)``."""
        return list(self._parameters)

    @property
    def distributions(self) -> List[Optional[Tuple[Tuple[int, ...], List[int], List[int], List[Optional[int]]]]]:
        """Where each parameter lives, in ``parameters`` order: ``(global
        shape, mesh devices, mesh shape, the tensor axis split over each
        mesh axis or None, outermost first)``; None for host IR."""
        return [
            None if found is None else (tuple(found[0]), list(found[1]), list(found[2]), list(found[3]))
            for found in self._native.distributions
        ]

    @property
    def num_inputs(self) -> int:
        return self._num_inputs

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    @property
    def num_streams(self) -> int:
        """``hir-lower``'s ``num-streams`` the program was lowered with (0:
        its stream loops rotate over all the pool has)."""
        return self._native.num_streams

    @property
    def options(self) -> str:
        """Every ``hir-lower`` option the program was lowered with, as the
        pipeline renders them (``num-streams=0 p2p=none ...``)."""
        return self._native.options

    def __repr__(self) -> str:
        shapes = ", ".join(f"{dtype}{list(shape)}" for _, shape, dtype in self.parameters)
        return f"<hir.Program {self.name}({shapes})>"

    def __call__(self, *arrays: Any) -> Any:
        """Runs this process's one rank on ``arrays``: its inputs, then
        optionally its outputs. Returns the outputs (one array, a tuple of
        several, or None when there are none)."""
        (full,) = self._run((arrays,))
        outputs = self._num_outputs
        if outputs == 0:
            return None
        return full[-1] if outputs == 1 else tuple(full[self._num_inputs :])

    def as_torch_op(self) -> Any:
        """This program as a torch operator (``torch.library.custom_op``,
        named ``hir::<entry>_<digest>``) taking one rank's input tensors and
        returning its outputs, with a fake implementation that gives their
        shapes and dtypes: ``torch.compile(fullgraph=True)`` traces a model
        calling it. Not differentiable: compile with ``differentiable=True``
        for that."""
        from .torch_op import as_torch_op

        return as_torch_op(self, self._digest)

    def as_dtensor_op(self) -> Any:
        """A function of DTensors over the program's mesh: inputs
        redistributed to the program's placements (``didx`` as
        ``Shard(axis)``, ``serial`` as ``Replicate()``), its torch op run on
        the local shards, outputs returned as DTensors of global shape."""
        from .dtensor import as_dtensor_op

        return as_dtensor_op(self, self.as_torch_op)

    def run_ranks(self, ranks: Sequence[Sequence[Any]]) -> List[List[Any]]:
        """Runs every rank this process holds, ``ranks[i]`` being the
        arrays of its i-th rank (inputs, then optionally outputs); returns
        each rank's outputs. On torch CUDA tensors the work is enqueued on
        each rank's device's current stream, as a torch op is: it runs
        after the work queued there, later work there runs after it, and
        the call returns without waiting for it."""
        return [arrays[self._num_inputs :] for arrays in self._run(ranks)]

    def _run(self, ranks: Sequence[Sequence[Any]]) -> List[List[Any]]:
        """Runs the ranks; each rank's arrays, its outputs made where not given."""
        try:
            full = [self._with_outputs(list(arrays)) for arrays in ranks]
            self._native.run(
                [_without_grad(arrays, rank) for rank, arrays in enumerate(full)], _caller_streams(full)
            )
        except BaseException as error:
            # A rank of a job that raises (KeyboardInterrupt included)
            # before posting its collectives tells the others, which would
            # otherwise wait for it until their timeouts; the job stays failed.
            _native.post_failure(f"{type(error).__name__}: {error}")
            raise
        return full

    def _with_outputs(self, arrays: List[Any]) -> List[Any]:
        inputs, total = self._num_inputs, len(self._parameters)
        if len(arrays) == total:
            return arrays
        if len(arrays) != inputs:
            raise TypeError(
                f"{self.name} takes {inputs} input arrays, then optionally "
                f"{total - inputs} output arrays; got {len(arrays)}"
            )
        if not arrays and total:
            raise TypeError(f"{self.name} has no input to make its outputs like: pass them")
        like = arrays[0] if arrays else None
        return arrays + [_empty_like(like, shape, dtype) for _, shape, dtype in self._parameters[inputs:]]


def _without_grad(arrays: List[Any], rank: int) -> List[Any]:
    """The arrays, tensors that require grad detached where no graph is
    recorded (torch.no_grad); DLPack exports no tensor that requires grad."""
    if not any(getattr(array, "requires_grad", False) for array in arrays):
        return arrays
    import torch

    if torch.is_grad_enabled():
        position = next(index for index, array in enumerate(arrays) if getattr(array, "requires_grad", False))
        raise TypeError(
            f"array #{position} of rank #{rank} requires grad, and this program is not differentiable: "
            "compile it with hir.compile(..., differentiable=True), call it under torch.no_grad(), "
            "or pass tensor.detach()"
        )
    return [array.detach() if getattr(array, "requires_grad", False) else array for array in arrays]


def _empty_like(like: Any, shape: Tuple[int, ...], dtype: str) -> Any:
    """A new array of ``shape`` and ``dtype`` of the same kind as ``like``."""
    module = type(like).__module__.split(".")[0]
    if module == "torch":
        import torch

        from .torch_op import TORCH_DTYPES

        return torch.empty(shape, dtype=TORCH_DTYPES[dtype], device=like.device)
    import numpy

    if dtype == "bf16":
        raise TypeError("numpy has no bfloat16: pass the bf16 outputs as arrays of your own")
    types = {"f32": numpy.float32, "f16": numpy.float16, "i32": numpy.int32, "i64": numpy.int64}
    return numpy.empty(shape, dtype=types[dtype])


def _caller_streams(ranks: List[List[Any]]) -> Optional[List[int]]:
    """Torch CUDA tensors: per rank, the raw ``CUstream`` of its tensors'
    device's current stream (``torch.cuda.current_stream(device)``), which
    the rank's call is enqueued on; None when no array is a CUDA tensor
    (the call then returns once its work is done)."""
    # A CUDA tensor's device index (`is_cuda` and `get_device()` cost a
    # sixth of `device.type`, which builds a string).
    devices = [next((array.get_device() for array in arrays if _is_cuda(array)), None) for arrays in ranks]
    if all(device is None for device in devices):
        return None
    import torch

    # The raw handle without a torch.cuda.Stream object: ~3 us a call less.
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return [0 if device is None else torch.cuda.current_stream(device).cuda_stream for device in devices]
    return [0 if device is None else raw(device) for device in devices]


def _is_cuda(array: Any) -> bool:
    return getattr(array, "is_cuda", False) is True


def compile(
    source_or_path: Union[str, "os.PathLike[str]", Builder],
    *,
    differentiable: bool = False,
    wrt: Optional[Sequence[int]] = None,
    saved: Optional[str] = None,
    **options: Union[str, int],
) -> Union[Program, DifferentiableProgram]:
    """Parses, lowers (``hir-lower``, then to LLVM) and JIT-compiles a
    program, given as MLIR text, as the path of a ``.mlir`` file, or as a
    ``hir.Builder``.

    ``options`` are ``hir-lower``'s, by the names ``hir-run``'s flags and
    ``hir-opt --hir-lower{...}`` use, with ``_`` for ``-``: ``num_streams``
    (pool streams the stream loops rotate over; 0, the default, for all the
    pool has: a world this program makes has 4, or ``num_streams``),
    ``p2p`` (``"none"``, or ring pipelines over ``"nccl"`` or ``"cuda"``
    IPC), ``ring_chunks``, ``allgather``, ``reduce_scatter``, ``allreduce``,
    ``ring_sync``, ``fuse`` and ``overlap`` (see ``docs/Passes/hir-lower.md``). A bad option
    is a ValueError; a program that does not compile raises CompileError
    with MLIR's diagnostics.

    ``differentiable=True`` (a fusion program) returns a
    ``DifferentiableProgram``: ``fusion-differentiate`` makes the entry's
    forward (its results, then the values its backward reads) and backward,
    both compiled with ``options``. ``wrt`` lists the inputs that get
    gradients, by position (by default every floating-point one);
    ``saved`` is the pass's option (``"gathered"``, the default, or
    ``"recompute"``: a gathered activation allgathered again in the
    backward instead of kept). A program the pass cannot differentiate
    raises CompileError with its diagnostic, located in the program."""
    if isinstance(source_or_path, Builder):
        source, name = source_or_path.mlir(), f"<hir.Builder {source_or_path.name}>"
    elif isinstance(source_or_path, os.PathLike) or (
        isinstance(source_or_path, str) and "\n" not in source_or_path and source_or_path.endswith(".mlir")
    ):
        path = os.fspath(source_or_path)
        with open(path, encoding="utf-8") as file:
            source, name = file.read(), path
    else:
        source, name = source_or_path, "<string>"
    pairs = [(option, str(value)) for option, value in options.items()]
    if differentiable:
        return _differentiable(source, name, pairs, wrt, saved)
    if wrt is not None or saved is not None:
        raise ValueError("wrt and saved are for hir.compile(..., differentiable=True)")
    return Program(_native.compile(source, name, pairs), source)


def _differentiable(
    source: str,
    name: str,
    pairs: List[Tuple[str, str]],
    wrt: Optional[Sequence[int]],
    saved: Optional[str],
) -> DifferentiableProgram:
    """The forward and backward of ``source``'s entry, compiled."""
    if wrt is not None:
        if isinstance(wrt, (str, bytes)) or not all(isinstance(index, int) for index in wrt):
            raise TypeError(f"wrt takes input positions (integers), not {wrt!r}")
        wrt = list(wrt)
        if not wrt or min(wrt) < 0:
            raise ValueError(f"wrt takes input positions from 0, at least one, not {wrt}")
    forward_text, backward_text, results = _native.differentiate(source, name, wrt, saved or "gathered")
    backward = Program(_native.compile(backward_text, f"{name} (backward)", pairs), backward_text)
    forward = Program(_native.compile(forward_text, f"{name} (forward)", pairs), f"{forward_text}\0{backward_text}")
    if wrt is None:
        inputs = forward.parameters[: forward.num_inputs]
        wrt = [index for index, (_, _, dtype) in enumerate(inputs) if dtype in FLOAT_DTYPES]
        if not wrt:
            raise ValueError(f"{forward.name[: -len('_forward')]} has no floating-point input to differentiate")
    return DifferentiableProgram(forward, backward, results, wrt)


def init(world_size: int = 1, *, backend: str = "cpu", num_streams: int = 4, timeout: float = 60.0) -> None:
    """Makes the world ``world_size`` ranks as threads of this process, on
    the ``"cpu"`` or ``"cuda"`` backend (rank r on GPU r)."""
    _native.init(world_size, backend, num_streams, timeout)


def init_from_env(
    environ: Optional[dict] = None,
    *,
    backend: str = "cuda",
    num_streams: int = 4,
    timeout: float = 60.0,
) -> None:
    """Makes this process one rank of a job of processes, from RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT (as torchrun sets
    them; Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and Open MPI's
    OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK stand in for the first three),
    meeting the others at HIR's own store (on MASTER_PORT, or MASTER_PORT +
    1 under torchrun, or HIR_STORE_PORT). ``backend`` is ``"cuda"`` (one GPU
    per rank, LOCAL_RANK's) or ``"cpu"`` (collectives through the store). A
    job of one rank is the default world. Raises HirError when the world
    cannot start; calls then raise too, until an init succeeds."""
    environ = dict(os.environ if environ is None else environ)
    if environ.get("WORLD_SIZE", "").strip() == "1" and environ.get("RANK", "").strip() == "0":
        _native.shutdown()
        return
    _native.init_process(environ, backend, num_streams, timeout)


#: How many times this process met its job through torch.distributed's
#: store: each world keys its exchanges under a prefix of its own, so that
#: a new world never reads what an earlier one left there.
_torch_worlds = 0


def init_from_torch(*, backend: Optional[str] = None, num_streams: int = 4, timeout: float = 60.0) -> None:
    """Makes this process's rank of the torch.distributed job its HIR rank,
    meeting the other ranks through the job's own store, with no port of
    HIR's:

    - after ``init_process_group``: the default group's rank, world size and
      store;
    - under torchrun, before any process group: torchrun's rendezvous
      (``torch.distributed.rendezvous("env://")``: its agent's store).

    ``backend`` is ``"cuda"`` (GPU LOCAL_RANK) or ``"cpu"``; by default
    ``"cuda"`` for an NCCL process group (or, with no group, when CUDA is
    available), else ``"cpu"``. Raises HirError, naming the rank and why,
    when the world cannot start; calls then raise too, until an init
    succeeds: never a world of one rank in its place."""
    global _torch_worlds
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        _fail(f"init_from_torch needs torch: {error}")
    if not dist.is_available():
        _fail("this torch has no torch.distributed")
    if dist.is_initialized():
        rank, size = dist.get_rank(), dist.get_world_size()
        store = dist.distributed_c10d._get_default_store()
        default = "cuda" if "nccl" in str(dist.get_backend()).lower() else "cpu"
    elif "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        try:
            store, rank, size = next(dist.rendezvous("env://", timeout=_timedelta(timeout)))
        except Exception as error:  # torch raises several kinds: say which rank
            _fail(f"rank {os.environ['RANK']}: torchrun's rendezvous failed: {error}")
        default = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        _fail(
            "torch.distributed is not initialized and RANK and WORLD_SIZE are not set: call "
            "torch.distributed.init_process_group first, or run under torchrun"
        )
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    _torch_worlds += 1
    store = dist.PrefixStore(f"hir/{_torch_worlds}", store)
    _native.init_torch_store(store, rank, size, local_rank, backend or default, num_streams, timeout)


def _timedelta(seconds: float) -> Any:
    import datetime

    return datetime.timedelta(seconds=seconds)


def _fail(why: str) -> None:
    """Raises HirError, and makes calls raise until an init succeeds."""
    _native.fail(why)
    raise HirError(why)


def world() -> Optional[dict]:
    """The world programs run on, or None before the first call or init."""
    info = _native.world()
    if info is None:
        return None
    backend, size, ranks, num_streams = info
    return {"backend": backend, "world_size": size, "ranks": list(ranks), "num_streams": num_streams}


atexit.register(_native.shutdown)
