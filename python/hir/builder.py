"""Writes a fusion program from Python, so that no one spells a tensor type
by hand: meshes, inputs with their shapes, dtypes and distributions, op
calls whose result shapes and dtypes the builder works out, and outputs.

    b = hir.Builder("mlp")
    tp = b.mesh("tp", [0, 1])
    x = b.input("x", (8, 16), "f32", tp, ["didx", "serial"])
    w = b.input("w", (32, 16), "f32", tp, ["didx", "serial"])
    h = b.linear(b.set(x, ["serial", "serial"]), w, axes=["serial", "didx"])
    b.output(b.relu(h))                                  # placed as h
    program = hir.compile(b)                             # or b.mlir(), the text

A result's distribution is the call's ``axes`` (one parallel type per result
axis, on the operands' mesh); without them, an elementwise op's result is
placed as its first operand (a ``stream`` axis made ``serial``), and any
other result is left to ``fusion-propagate-sharding`` (the first pass of
``hir.compile``). Each call checks what the op's
verifier checks (shapes, dtypes, axes, meshes) and raises ``BuildError``
naming the call, before MLIR sees the text.
"""

import math
import re
from typing import List, Optional, Sequence, Tuple, Union

from .dtypes import DTYPES, FLOAT_DTYPES

UNARY = ("neg", "exp", "tanh", "abs", "relu", "gelu", "rsqrt")
FLOAT_UNARY = ("exp", "tanh", "gelu", "rsqrt")
BINARY = ("add", "sub", "mul", "div", "max", "min")
ELEMENTWISE = UNARY + BINARY + ("cast",)
# The device axes of a mesh's shape that didx, didy and didz split over,
# counted from its last axis.
DEVICE_AXES = {"didx": 1, "didy": 2, "didz": 3}
_STREAM_CHUNKS = re.compile(r"stream<([1-9][0-9]*)>")

Axes = Optional[Sequence[str]]


class BuildError(ValueError):
    """A builder call that would make an invalid program; the message names the call."""


class Mesh:
    """A ``fusion.mesh``: devices (global ranks), flat or as nested rows."""

    def __init__(self, name: str, devices: Sequence, shape: Tuple[int, ...]) -> None:
        self.name = name
        self.devices = devices
        self.shape = shape

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"<hir.Mesh @{self.name} {self.devices}>"


class Tensor:
    """A value of the program being built: its SSA name, global shape,
    dtype, and distribution (a mesh and one parallel type per axis, or
    None where propagation is to infer it)."""

    def __init__(self, name: str, shape: Tuple[int, ...], dtype: str, mesh: Mesh, axes: Optional[Tuple[str, ...]]):
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.mesh = mesh
        self.axes = axes

    @property
    def type(self) -> str:
        """The MLIR type, e.g. ``tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>``."""
        extents = "".join(f"{extent}x" for extent in self.shape)
        if self.axes is None:
            return f"tensor<{extents}{self.dtype}>"
        return f"tensor<{extents}{self.dtype}, #fusion.dist<@{self.mesh.name}, [{', '.join(self.axes)}]>>"

    def __repr__(self) -> str:
        return f"<hir.Tensor %{self.name}: {self.type}>"


class Builder:
    """A fusion program of one entry function, built call by call."""

    def __init__(self, name: str = "main") -> None:
        if not _identifier(name):
            raise BuildError(f"Builder({name!r}): the entry's name must be an identifier")
        self.name = name
        self._meshes: List[Mesh] = []
        self._inputs: List[Tensor] = []
        self._lines: List[str] = []
        self._outputs: List[Tensor] = []
        self._names = set()

    # Declarations.

    def mesh(self, name: str, devices: Sequence) -> Mesh:
        """Declares ``fusion.mesh @name``: a list of ranks, or rows (a 2-D
        mesh) or planes of rows (3-D) of them."""
        call = f"mesh({name!r})"
        if not _identifier(name):
            raise BuildError(f"{call}: the name must be an identifier")
        if any(mesh.name == name for mesh in self._meshes) or name == self.name:
            raise BuildError(f"{call}: a mesh or the entry has that name already (one symbol each)")
        shape, flat = _mesh_shape(call, devices)
        if len(set(flat)) != len(flat):
            raise BuildError(f"{call}: a device appears twice in {list(devices)}")
        mesh = Mesh(name, _nested_lists(devices), shape)
        self._meshes.append(mesh)
        return mesh

    def input(
        self,
        name: str,
        shape: Sequence[int],
        dtype: str,
        mesh: Union[Mesh, str, None] = None,
        axes: Axes = None,
    ) -> Tensor:
        """A parameter of the entry: its global shape, dtype, mesh (the only
        one declared when left out; ``@dev = [0]`` when none is) and
        parallel types (all ``serial`` when left out)."""
        call = f"input({name!r})"
        if not _identifier(name) or name in self._names:
            raise BuildError(f"{call}: the name must be an identifier not used before")
        if self._lines:
            raise BuildError(f"{call}: declare every input before the first op")
        shape = _shape(call, shape)
        _dtype(call, dtype)
        mesh = self._mesh(call, mesh)
        axes = ("serial",) * len(shape) if axes is None else _axes(call, axes, shape, mesh)
        self._names.add(name)
        tensor = Tensor(name, shape, dtype, mesh, axes)
        self._inputs.append(tensor)
        return tensor

    def output(self, *tensors: Tensor) -> None:
        """Returns ``tensors`` from the entry, in this order after any
        returned before. On a mesh of several devices each needs its
        distribution written (the ``axes`` of the call that made it): the
        program's signature, the local shapes a rank passes, is read from
        the returned types."""
        for tensor in tensors:
            call = f"output(%{getattr(tensor, 'name', '?')})"
            self._own(call, tensor)
            if tensor.axes is None and tensor.mesh.size > 1:
                raise BuildError(
                    f"{call}: its distribution over @{tensor.mesh.name} is left to inference; "
                    "give the call that makes it axes=[...]"
                )
        self._outputs.extend(tensors)

    # Ops.

    def set(self, tensor: Tensor, axes: Axes = None, mesh: Union[Mesh, str, None] = None) -> Tensor:
        """``fusion.set``: the same values placed as ``axes`` say (on
        ``mesh``, by default the tensor's): a resharding."""
        call = self._call("set", tensor)
        target = tensor.mesh if mesh is None else self._mesh(call, mesh)
        return self._emit(call, "set", [tensor], "", tensor.shape, tensor.dtype, axes, target)

    def unary(self, op: str, tensor: Tensor, axes: Axes = None) -> Tensor:
        """One of ``neg exp tanh abs relu gelu rsqrt``, elementwise."""
        call = self._call(op, tensor)
        if op not in UNARY:
            raise BuildError(f"{call}: no such unary op; there are {', '.join(UNARY)}")
        if op in FLOAT_UNARY:
            _float(call, tensor)
        return self._emit(call, op, [tensor], "", tensor.shape, tensor.dtype, axes)

    def neg(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        return self.unary("neg", tensor, axes)

    def exp(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        return self.unary("exp", tensor, axes)

    def tanh(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        return self.unary("tanh", tensor, axes)

    def abs(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        return self.unary("abs", tensor, axes)

    def relu(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        return self.unary("relu", tensor, axes)

    def gelu(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        """GELU in its tanh form (torch's ``approximate='tanh'``)."""
        return self.unary("gelu", tensor, axes)

    def rsqrt(self, tensor: Tensor, axes: Axes = None) -> Tensor:
        return self.unary("rsqrt", tensor, axes)

    def binary(self, op: str, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        """One of ``add sub mul div max min``, elementwise on tensors of one
        shape and dtype (no implicit broadcasting: ``broadcast`` first)."""
        call = self._call(op, lhs, rhs)
        if op not in BINARY:
            raise BuildError(f"{call}: no such binary op; there are {', '.join(BINARY)}")
        if lhs.shape != rhs.shape:
            raise BuildError(f"{call}: shapes differ: {_dims(lhs.shape)} vs {_dims(rhs.shape)} (broadcast first)")
        _same_dtype(call, lhs, rhs)
        if op == "div":
            _float(call, lhs)
        return self._emit(call, op, [lhs, rhs], "", lhs.shape, lhs.dtype, axes)

    def add(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        return self.binary("add", lhs, rhs, axes)

    def sub(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        return self.binary("sub", lhs, rhs, axes)

    def mul(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        return self.binary("mul", lhs, rhs, axes)

    def div(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        return self.binary("div", lhs, rhs, axes)

    def max(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        return self.binary("max", lhs, rhs, axes)

    def min(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        return self.binary("min", lhs, rhs, axes)

    def cast(self, tensor: Tensor, dtype: str, axes: Axes = None) -> Tensor:
        """``fusion.cast`` to ``dtype``, as torch's ``tensor.to(dtype)``."""
        call = self._call("cast", tensor, dtype)
        _dtype(call, dtype)
        return self._emit(call, "cast", [tensor], "", tensor.shape, dtype, axes)

    def matmul(self, lhs: Tensor, rhs: Tensor, axes: Axes = None) -> Tensor:
        """``[B1.., M, K] @ [B2.., K, N] -> [B.., M, N]``, the batch axes
        broadcast as ``torch.matmul``'s."""
        call = self._call("matmul", lhs, rhs)
        if len(lhs.shape) < 2 or len(rhs.shape) < 2:
            raise BuildError(f"{call}: operands need rank 2 or more, not {len(lhs.shape)} and {len(rhs.shape)}")
        _same_dtype(call, lhs, rhs)
        _float(call, lhs)
        if lhs.shape[-1] != rhs.shape[-2]:
            raise BuildError(
                f"{call}: contraction extents differ: lhs has K = {lhs.shape[-1]}, rhs has K = {rhs.shape[-2]}"
            )
        batch = _broadcast_batch(call, lhs.shape[:-2], rhs.shape[:-2])
        shape = batch + (lhs.shape[-2], rhs.shape[-1])
        return self._emit(call, "matmul", [lhs, rhs], "", shape, lhs.dtype, axes)

    def linear(self, input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, axes: Axes = None) -> Tensor:
        """``input @ weight^T + bias``, as ``torch.nn.functional.linear``:
        ``[B.., K]``, ``[N, K]`` and an optional ``[N]`` give ``[B.., N]``."""
        operands = [input, weight] + ([] if bias is None else [bias])
        call = self._call("linear", *operands)
        if not input.shape or len(weight.shape) != 2:
            raise BuildError(f"{call}: the input needs rank 1 or more and the weight rank 2")
        for operand in operands[1:]:
            _same_dtype(call, input, operand)
        _float(call, input)
        n, k = weight.shape
        if input.shape[-1] != k:
            raise BuildError(f"{call}: the input's last extent {input.shape[-1]} is not the weight's K = {k}")
        if bias is not None and bias.shape != (n,):
            raise BuildError(f"{call}: bias must be [{n}], got {_dims(bias.shape)}")
        return self._emit(call, "linear", operands, "", input.shape[:-1] + (n,), input.dtype, axes)

    def sum(self, tensor: Tensor, dims: Sequence[int], axes: Axes = None) -> Tensor:
        """The sum over ``dims``, which the result drops."""
        return self._reduce("sum", tensor, dims, axes)

    def amax(self, tensor: Tensor, dims: Sequence[int], axes: Axes = None) -> Tensor:
        """The maximum over ``dims``, which the result drops."""
        return self._reduce("amax", tensor, dims, axes)

    def broadcast(self, tensor: Tensor, shape: Sequence[int], dims: Sequence[int], axes: Axes = None) -> Tensor:
        """``tensor`` repeated along the new axes ``dims`` of the result
        ``shape``; its other axes are the tensor's, in order."""
        call = self._call("broadcast", tensor, list(dims))
        shape = _shape(call, shape)
        dims = _dims_of(call, dims, len(shape), "broadcast axis")
        kept = tuple(extent for axis, extent in enumerate(shape) if axis not in dims)
        if kept != tensor.shape:
            raise BuildError(
                f"{call}: shape {_dims(shape)} without the broadcast axes is {_dims(kept)}, "
                f"not the input's {_dims(tensor.shape)}"
            )
        return self._emit(call, "broadcast", [tensor], f" {list(dims)}", shape, tensor.dtype, axes)

    def transpose(self, tensor: Tensor, permutation: Sequence[int], axes: Axes = None) -> Tensor:
        """Result axis ``i`` is input axis ``permutation[i]`` (``torch.permute``)."""
        call = self._call("transpose", tensor, list(permutation))
        permutation = _dims_of(call, permutation, len(tensor.shape), "permuted axis")
        if len(permutation) != len(tensor.shape):
            raise BuildError(f"{call}: the permutation has {len(permutation)} axes, the input {len(tensor.shape)}")
        shape = tuple(tensor.shape[axis] for axis in permutation)
        return self._emit(call, "transpose", [tensor], f" {list(permutation)}", shape, tensor.dtype, axes)

    def reshape(self, tensor: Tensor, shape: Sequence[int], axes: Axes = None) -> Tensor:
        """The elements in row-major order, in ``shape`` (``torch.reshape``)."""
        call = self._call("reshape", tensor, list(shape))
        shape = _shape(call, shape)
        if math.prod(shape) != math.prod(tensor.shape):
            raise BuildError(
                f"{call}: shape {_dims(shape)} holds {math.prod(shape)} elements, "
                f"the input {_dims(tensor.shape)} {math.prod(tensor.shape)}"
            )
        return self._emit(call, "reshape", [tensor], "", shape, tensor.dtype, axes)

    # The program.

    def mlir(self) -> str:
        """The program's MLIR text, which ``hir.compile`` takes."""
        if not self._outputs:
            raise BuildError(f"{self.name}: no output; call output(tensor)")
        meshes = [f"fusion.mesh @{mesh.name} = {mesh.devices}" for mesh in self._meshes]
        parameters = ",\n    ".join(f"%{tensor.name}: {tensor.type}" for tensor in self._inputs)
        types = [tensor.type for tensor in self._outputs]
        results = types[0] if len(types) == 1 else f"({', '.join(types)})"
        returned = ", ".join(f"%{tensor.name}" for tensor in self._outputs)
        body = "".join(f"  {line}\n" for line in self._lines)
        return (
            "\n".join(meshes)
            + f"\nfunc.func @{self.name}(\n    {parameters})\n    -> {results} {{\n{body}"
            + f"  return {returned} : {', '.join(types)}\n}}\n"
        )

    def __str__(self) -> str:
        return self.mlir()

    # Helpers.

    def _mesh(self, call: str, mesh: Union[Mesh, str, None]) -> Mesh:
        if mesh is None:
            if not self._meshes:
                self.mesh("dev", [0])
            if len(self._meshes) > 1:
                raise BuildError(f"{call}: several meshes are declared; say which")
            return self._meshes[0]
        name = mesh.name if isinstance(mesh, Mesh) else mesh
        for declared in self._meshes:
            if declared.name == name and (not isinstance(mesh, Mesh) or declared is mesh):
                return declared
        names = ", ".join(f"@{declared.name}" for declared in self._meshes) or "none"
        raise BuildError(f"{call}: unknown mesh '@{name}' (declared: {names})")

    def _own(self, call: str, tensor: object) -> None:
        if not isinstance(tensor, Tensor):
            raise BuildError(f"{call}: expected a hir.Tensor of this builder, got {type(tensor).__name__}")
        if tensor.mesh not in self._meshes:
            raise BuildError(f"{call}: %{tensor.name} belongs to another builder")

    def _call(self, op: str, *operands: object) -> str:
        """``op(%a, %b, ...)``, as errors name the call, once every tensor
        operand is checked to be this builder's."""
        text = ", ".join(f"%{operand.name}" if isinstance(operand, Tensor) else repr(operand) for operand in operands)
        call = f"{op}({text})"
        tensors = [operand for operand in operands if isinstance(operand, Tensor)]
        for tensor in tensors:
            self._own(call, tensor)
        meshes = {tensor.mesh.name for tensor in tensors}
        if len(meshes) > 1:
            raise BuildError(f"{call}: operands on several meshes ({', '.join(sorted(meshes))}): set one first")
        return call

    def _reduce(self, op: str, tensor: Tensor, dims: Sequence[int], axes: Axes) -> Tensor:
        call = self._call(op, tensor, list(dims))
        dims = _dims_of(call, dims, len(tensor.shape), "reduced axis")
        if not dims:
            raise BuildError(f"{call}: reduces no axis")
        shape = tuple(extent for axis, extent in enumerate(tensor.shape) if axis not in dims)
        return self._emit(call, op, [tensor], f" {list(dims)}", shape, tensor.dtype, axes)

    def _emit(
        self,
        call: str,
        op: str,
        operands: List[Tensor],
        attributes: str,
        shape: Tuple[int, ...],
        dtype: str,
        axes: Axes,
        mesh: Optional[Mesh] = None,
    ) -> Tensor:
        mesh = operands[0].mesh if mesh is None else mesh
        if axes is None and op in ELEMENTWISE and operands[0].axes is not None:
            # The identity map: what propagation would infer, written out so
            # that it also holds against what the result's users imply.
            axes = ["serial" if kind.startswith("stream") else kind for kind in operands[0].axes]
        result = Tensor(
            str(len(self._lines)), shape, dtype, mesh, None if axes is None else _axes(call, axes, shape, mesh)
        )
        names = ", ".join(f"%{operand.name}" for operand in operands)
        types = ", ".join(operand.type for operand in operands)
        self._lines.append(f"%{result.name} = fusion.{op} {names}{attributes} : {types} -> {result.type}")
        return result


def _identifier(name: object) -> bool:
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def _dims(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def _shape(call: str, shape: Sequence[int]) -> Tuple[int, ...]:
    if not isinstance(shape, (tuple, list)) or not all(isinstance(e, int) and e > 0 for e in shape):
        raise BuildError(f"{call}: a shape is a list of positive integers, not {shape!r}")
    return tuple(shape)


def _dtype(call: str, dtype: str) -> None:
    if dtype not in DTYPES:
        raise BuildError(f"{call}: dtype {dtype!r} is none of HIR's {', '.join(DTYPES)}")


def _float(call: str, tensor: Tensor) -> None:
    if tensor.dtype not in FLOAT_DTYPES:
        raise BuildError(f"{call}: takes {', '.join(FLOAT_DTYPES)}, not {tensor.dtype} (%{tensor.name})")


def _same_dtype(call: str, lhs: Tensor, rhs: Tensor) -> None:
    if lhs.dtype != rhs.dtype:
        raise BuildError(f"{call}: dtypes differ: %{lhs.name} is {lhs.dtype}, %{rhs.name} {rhs.dtype} (cast first)")


def _dims_of(call: str, dims: Sequence[int], rank: int, what: str) -> Tuple[int, ...]:
    for axis in dims:
        if not isinstance(axis, int) or not 0 <= axis < rank:
            raise BuildError(f"{call}: {what} {axis!r} is out of range for rank {rank}")
    if len(set(dims)) != len(dims):
        raise BuildError(f"{call}: a {what} is listed twice in {list(dims)}")
    return tuple(dims)


def _broadcast_batch(call: str, lhs: Tuple[int, ...], rhs: Tuple[int, ...]) -> Tuple[int, ...]:
    """torch.matmul's batch axes: aligned from the right, each pair equal or 1."""
    rank = max(len(lhs), len(rhs))
    lhs, rhs = (1,) * (rank - len(lhs)) + lhs, (1,) * (rank - len(rhs)) + rhs
    for left, right in zip(lhs, rhs):
        if left != right and 1 not in (left, right):
            raise BuildError(f"{call}: batch axes do not broadcast: {_dims(lhs)} and {_dims(rhs)}")
    return tuple(max(pair) for pair in zip(lhs, rhs))


def _nested_lists(devices: Sequence) -> list:
    return [_nested_lists(row) if isinstance(row, (list, tuple)) else row for row in devices]


def _mesh_shape(call: str, devices: Sequence) -> Tuple[Tuple[int, ...], List[int]]:
    """A mesh's shape and its devices in row-major order."""
    if isinstance(devices, (list, tuple)) and devices and all(isinstance(device, int) for device in devices):
        if any(device < 0 for device in devices):
            raise BuildError(f"{call}: device ids are non-negative, not {list(devices)}")
        return (len(devices),), list(devices)
    if isinstance(devices, (list, tuple)) and devices and all(isinstance(row, (list, tuple)) for row in devices):
        shapes = [_mesh_shape(call, row) for row in devices]
        if len({shape for shape, _ in shapes}) != 1 or len(shapes[0][0]) > 2:
            raise BuildError(f"{call}: a mesh is a list of ranks, or equal rows of them (2-D or 3-D)")
        return (len(devices),) + shapes[0][0], [device for _, flat in shapes for device in flat]
    raise BuildError(f"{call}: a mesh is a non-empty list of ranks, or of equal rows of them, not {devices!r}")


def _axes(call: str, axes: Sequence[str], shape: Tuple[int, ...], mesh: Mesh) -> Tuple[str, ...]:
    """Checked parallel types: one per axis, at most one stream axis and
    one of each device axis, a device axis a multiple of its mesh extent."""
    if isinstance(axes, str) or not isinstance(axes, (list, tuple)) or len(axes) != len(shape):
        raise BuildError(f"{call}: axes {axes!r} give no parallel type per axis of a tensor of rank {len(shape)}")
    for axis, (kind, extent) in enumerate(zip(axes, shape)):
        chunks = _STREAM_CHUNKS.fullmatch(kind) if isinstance(kind, str) else None
        if chunks and extent % int(chunks.group(1)):
            raise BuildError(
                f"{call}: stream axis {axis} of extent {extent} does not split into {chunks.group(1)} chunks"
            )
        if isinstance(kind, str) and kind in DEVICE_AXES:
            if DEVICE_AXES[kind] > len(mesh.shape):
                raise BuildError(
                    f"{call}: {kind} needs a mesh of {DEVICE_AXES[kind]} axes; @{mesh.name} has {len(mesh.shape)}"
                )
            devices = mesh.shape[-DEVICE_AXES[kind]]
            if extent % devices:
                raise BuildError(
                    f"{call}: axis {axis} of extent {extent} is {kind} "
                    f"but not a multiple of the {devices} devices of @{mesh.name}"
                )
        elif kind not in ("serial", "stream") and not chunks:
            raise BuildError(f"{call}: unknown parallel type {kind!r} (serial, didx, didy, didz, stream, stream<k>)")
    streams = [kind for kind in axes if kind.startswith("stream")]
    for kind in ["stream"] + list(DEVICE_AXES):
        if (len(streams) if kind == "stream" else list(axes).count(kind)) > 1:
            raise BuildError(f"{call}: more than one {kind!r} axis in {list(axes)}")
    return tuple(axes)
