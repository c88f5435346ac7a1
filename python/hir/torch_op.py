"""Compiled programs as torch operators, so that ``torch.compile`` traces a
model that calls them (``fullgraph=True``: no graph break).

``as_torch_op(program)`` registers the program through
``torch.library.custom_op`` as ``hir::<entry>_<digest>``: the digest is the
program's (its text and options), so two programs never share a name and
one program compiled twice shares one op. The op's fake (meta)
implementation makes outputs of the local shapes and dtypes of
``program.parameters`` and checks its inputs against them, so a mismatch
is caught while tracing; its real implementation calls the program (CPU
tensors on the cpu backend, CUDA tensors on the cuda backend, on the
current stream).

The op has no autograd formula: a program compiled with
``differentiable=True`` registers one on its forward's op
(``hir/autograd.py``).
"""

import re
from typing import Any, Dict, List, Sequence, Tuple

import torch

#: HIR's element types (``program.parameters``) as torch's.
TORCH_DTYPES: Dict[str, torch.dtype] = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "i32": torch.int32,
    "i64": torch.int64,
}

# One op per name: a program compiled again from the same text and options
# is the same op, which torch.library would refuse to define twice.
_OPS: Dict[str, Any] = {}


def op_name(entry: str, digest: str) -> str:
    """``hir::<entry>_<first 16 hex digits of digest>``, the entry's ``@``
    dropped and anything not fit for an identifier made ``_``."""
    identifier = re.sub(r"\W", "_", entry.lstrip("@")) or "program"
    if identifier[0].isdigit():
        identifier = "_" + identifier
    return f"hir::{identifier}_{digest[:16]}"


def as_torch_op(program: Any, digest: str) -> Any:
    """``program`` (a ``hir.Program`` whose text and options hash to
    ``digest``) as a torch custom op: a ``CustomOpDef`` taking the rank's
    input tensors and returning its outputs (one tensor, or a tuple)."""
    if program.num_inputs == 0:
        raise ValueError(f"{program.name} takes no input: a torch op makes its outputs on its inputs' device")
    if program.num_outputs == 0:
        raise ValueError(f"{program.name} returns nothing: a torch op without outputs would be traced away")
    name = op_name(program.name, digest)
    if name not in _OPS:
        _OPS[name] = _define(program, name)
    return _OPS[name]


def _define(program: Any, name: str) -> Any:
    inputs = program.parameters[: program.num_inputs]
    outputs = program.parameters[program.num_inputs :]
    arguments = ", ".join(f"Tensor input{index}" for index in range(len(inputs)))
    results = "Tensor" if len(outputs) == 1 else "(" + ", ".join("Tensor" for _ in outputs) + ")"

    def run(*tensors: torch.Tensor) -> Any:
        # Below autograd a tensor may still say requires_grad; DLPack
        # refuses those, and no graph is recorded here anyway.
        return program(*[tensor.detach().contiguous() for tensor in tensors])

    op = torch.library.custom_op(name, run, mutates_args=(), schema=f"({arguments}) -> {results}")

    @op.register_fake
    def _(*tensors: torch.Tensor) -> Any:
        _check(program.name, inputs, tensors)
        made = [tensors[0].new_empty(shape, dtype=TORCH_DTYPES[dtype]) for _, shape, dtype in outputs]
        return made[0] if len(made) == 1 else tuple(made)

    return op


def _check(entry: str, parameters: List[Tuple[str, Tuple[int, ...], str]], tensors: Sequence[torch.Tensor]) -> None:
    """The tensors against the rank's inputs, each mismatch named."""
    for (what, shape, dtype), tensor in zip(parameters, tensors):
        if tensor.dtype != TORCH_DTYPES[dtype]:
            raise TypeError(f"{entry}: {what} is {tensor.dtype}, the program takes {TORCH_DTYPES[dtype]} ({dtype})")
        if tuple(tensor.shape) != tuple(shape):
            raise ValueError(f"{entry}: {what} has shape {list(tensor.shape)}, the program takes {list(shape)}")
    devices = {tensor.device for tensor in tensors}
    if len(devices) > 1:
        raise ValueError(f"{entry}: inputs on several devices ({', '.join(sorted(map(str, devices)))})")
