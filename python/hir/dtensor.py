"""Compiled programs on DTensors: each parameter's distribution mapped to
DTensor placements, one per mesh axis, outermost first: the tensor axis a
``didx`` (``didy``, ``didz``) splits over that mesh axis is ``Shard(axis)``,
an axis nothing splits ``Replicate()`` (``serial`` and ``stream`` axes).

``as_dtensor_op(program, make_op)`` wraps the program's torch op: inputs whose
placements differ are redistributed to the program's, the op runs on the
local shards, and the outputs come back as DTensors of the program's
placements and global shapes. The DeviceMesh must be the program's mesh:
the same ranks in the same layout (HIR rank r is torch rank r, as
``hir.init_from_torch`` makes them).
"""

from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch
from torch.distributed.tensor import DTensor, Replicate, Shard

#: ``(global shape, mesh devices, mesh shape, split axis per mesh axis)``.
Distribution = Tuple[Tuple[int, ...], List[int], List[int], List[Optional[int]]]


def placements(distribution: Distribution) -> List[Any]:
    """DTensor's placements of a parameter, one per mesh axis."""
    _, _, _, split_axes = distribution
    return [Replicate() if axis is None else Shard(axis) for axis in split_axes]


def as_dtensor_op(program: Any, make_op: Callable[[], Any]) -> Any:
    """A function of the program's global inputs as DTensors, returning its
    outputs as DTensors (one, or a tuple), through the program's torch op on
    local tensors, which ``make_op`` returns."""
    distributions = program.distributions
    if any(distribution is None for distribution in distributions):
        raise ValueError(f"{program.name} is host IR: its parameters have no distribution to map to DTensor")
    op = make_op()
    inputs = distributions[: program.num_inputs]
    outputs = distributions[program.num_inputs :]

    def call(*tensors: Any) -> Any:
        if len(tensors) != len(inputs):
            raise TypeError(f"{program.name} takes {len(inputs)} input DTensors, got {len(tensors)}")
        mesh = None
        local = []
        for index, (tensor, distribution) in enumerate(zip(tensors, inputs)):
            what = f"{program.name}: input #{index}"
            if not isinstance(tensor, DTensor):
                raise TypeError(
                    f"{what} is a {type(tensor).__name__}, not a DTensor (call program.as_torch_op() on local tensors)"
                )
            mesh = _check_mesh(what, tensor.device_mesh, distribution) if mesh is None else mesh
            if tensor.device_mesh != mesh:
                raise ValueError(f"{what} is on another DeviceMesh than input #0")
            if tuple(tensor.shape) != tuple(distribution[0]):
                raise ValueError(
                    f"{what} has global shape {list(tensor.shape)}, the program takes {list(distribution[0])}"
                )
            local.append(tensor.redistribute(mesh, placements(distribution)).to_local())
        results = op(*local)
        results = results if isinstance(results, tuple) else (results,)
        made = tuple(
            DTensor.from_local(
                result,
                mesh,
                placements(distribution),
                run_check=False,
                shape=torch.Size(distribution[0]),
                stride=_row_major_strides(distribution[0]),
            )
            for result, distribution in zip(results, outputs)
        )
        return made[0] if len(made) == 1 else made

    return call


def _check_mesh(what: str, mesh: Any, distribution: Distribution) -> Any:
    """``mesh`` if it holds the program mesh's ranks in its layout."""
    _, devices, shape, _ = distribution
    problem = _mesh_problem(mesh, tuple(shape), tuple(devices))
    if problem:
        raise ValueError(f"{what} {problem}")
    return mesh


# A mesh's shape and ranks are fixed once it is made: torch.compile takes
# the check's verdict as a constant instead of tracing the mesh. (torch
# 2.11's Dynamo can trace neither `tuple(mesh.shape)` nor a comparison with
# a tuple such a function returns; a string it can.)
@torch._dynamo.assume_constant_result
def _mesh_problem(mesh: Any, shape: Tuple[int, ...], devices: Tuple[int, ...]) -> str:
    """Why ``mesh`` does not hold ``devices`` laid out in ``shape``, or ''."""
    mesh_shape, ranks = tuple(mesh.shape), tuple(mesh.mesh.flatten().tolist())
    if mesh_shape == shape and ranks == devices:
        return ""
    return (
        f"is on a DeviceMesh of ranks {_nested(ranks, mesh_shape)}, "
        f"the program's mesh holds {_nested(devices, shape)}"
    )


def _nested(devices: Sequence[int], shape: Sequence[int]) -> Any:
    return torch.tensor(devices).reshape(list(shape)).tolist()


def _row_major_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))
