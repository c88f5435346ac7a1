"""A differentiable program: what ``hir.compile(..., differentiable=True)``
returns. ``fusion-differentiate`` splits the program's entry ``@f`` into

- ``@f_forward``: ``@f``'s results, then the saved values (the forward
  values the backward reads: its saved activations);
- ``@f_backward``: the saved values, then one cotangent per floating-point
  result of ``@f``; it returns the gradient of each ``wrt`` input.

Both are compiled as programs of their own (``forward``, ``backward``). A
call on torch tensors goes through the forward's torch op, whose autograd
formula (``hir/autograd.py``) runs the backward's op: the outputs carry a
``grad_fn``, eagerly and under ``torch.compile``. A call on numpy arrays runs
the forward and returns ``@f``'s results.
"""

from typing import Any, List, Optional, Tuple

from .dtypes import FLOAT_DTYPES


class DifferentiableProgram:
    """A program and its backward. Called as ``@f`` is, on one rank's
    input arrays; on torch tensors the outputs are differentiable."""

    def __init__(self, forward: Any, backward: Any, results: int, wrt: List[int]) -> None:
        #: ``@f_forward`` compiled: ``@f``'s inputs; its results, then the saved values.
        self.forward = forward
        #: ``@f_backward`` compiled: the saved values, then the cotangents; the gradients.
        self.backward = backward
        #: The inputs that get gradients, in the order the backward returns them.
        self.wrt = wrt
        self._results = results

    @property
    def name(self) -> str:
        """The entry differentiated, e.g. ``@tp_mlp``."""
        return self.forward.name[: -len("_forward")]

    @property
    def num_inputs(self) -> int:
        return self.forward.num_inputs

    @property
    def num_outputs(self) -> int:
        """``@f``'s results (the forward's saved values left out)."""
        return self._results

    @property
    def num_saved(self) -> int:
        """How many values the forward saves for the backward."""
        return self.forward.num_outputs - self._results

    @property
    def parameters(self) -> List[Tuple[str, Tuple[int, ...], str]]:
        """``@f``'s, as ``Program.parameters``: inputs, then results."""
        return self.forward.parameters[: self.num_inputs + self._results]

    @property
    def distributions(self) -> List[Optional[Any]]:
        """``@f``'s, as ``Program.distributions``."""
        return self.forward.distributions[: self.num_inputs + self._results]

    @property
    def options(self) -> str:
        return self.forward.options

    def __repr__(self) -> str:
        shapes = ", ".join(f"{dtype}{list(shape)}" for _, shape, dtype in self.parameters)
        return f"<hir.DifferentiableProgram {self.name}({shapes}) wrt={self.wrt}>"

    def __call__(self, *arrays: Any) -> Any:
        """``@f`` on one rank's inputs. Torch tensors go through the
        differentiable op (``as_torch_op``); numpy arrays through the
        forward, its saved values dropped."""
        if any(type(array).__module__.split(".")[0] == "torch" for array in arrays):
            return self.as_torch_op()(*arrays)
        if len(arrays) != self.num_inputs:
            raise TypeError(f"{self.name} takes {self.num_inputs} input arrays, got {len(arrays)}")
        outputs = self.forward(*arrays)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return outputs[0] if self._results == 1 else outputs[: self._results]

    def as_torch_op(self) -> Any:
        """A function of one rank's input tensors returning ``@f``'s results,
        through the forward's torch op (``hir::<entry>_forward_<digest>``),
        whose autograd formula runs the backward's op: the results carry a
        ``grad_fn``, and ``torch.compile(fullgraph=True)`` traces both."""
        from .autograd import differentiable_op

        return differentiable_op(self)

    def as_dtensor_op(self) -> Any:
        """``as_torch_op`` on DTensors, as ``Program.as_dtensor_op``; the
        gradients are DTensors of the inputs' placements."""
        from .dtensor import as_dtensor_op

        return as_dtensor_op(self, self.as_torch_op)
