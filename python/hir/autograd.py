"""The autograd formula of a differentiable program's forward op
(``torch.library.register_autograd``): ``setup_context`` keeps the saved
values the forward op returns after ``@f``'s results, and ``backward`` runs
the backward program's op on them and the results' cotangents. Being a
torch.library formula, it works eagerly and under ``torch.compile``
(AOTAutograd traces the backward op through its fake implementation).
"""

from typing import Any, Callable, List, Optional, Set, Tuple

import torch

from .dtypes import FLOAT_DTYPES
from .torch_op import TORCH_DTYPES

# Forward ops whose formula is registered: torch.library takes one per op.
# An op's name holds the digest of its forward and backward texts, so the
# formula registered first is the one every later program of that name
# needs.
_REGISTERED: Set[str] = set()


def differentiable_op(program: Any) -> Callable[..., Any]:
    """``program`` (a ``hir.DifferentiableProgram``) as a function of one
    rank's input tensors returning ``@f``'s results, differentiable."""
    forward_op = program.forward.as_torch_op()
    results = program.num_outputs
    if forward_op._qualname not in _REGISTERED:
        _register(program, forward_op)
        _REGISTERED.add(forward_op._qualname)

    def call(*tensors: torch.Tensor) -> Any:
        outputs = forward_op(*tensors)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return outputs[0] if results == 1 else outputs[:results]

    return call


def _register(program: Any, forward_op: Any) -> None:
    backward_op = program.backward.as_torch_op()
    inputs, results, wrt = program.num_inputs, program.num_outputs, program.wrt
    result_types = program.parameters[inputs:]
    # Integer results get no cotangent.
    float_results = [index for index, (_, _, dtype) in enumerate(result_types) if dtype in FLOAT_DTYPES]

    def setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> None:
        outputs = output if isinstance(output, tuple) else (output,)
        ctx.save_for_backward(*outputs[results:])
        ctx.device = inputs[0].device

    def backward(ctx: Any, *grads: Optional[torch.Tensor]) -> Tuple[Optional[torch.Tensor], ...]:
        cotangents = [_cotangent(grads[index], result_types[index], ctx.device) for index in float_results]
        made = backward_op(*ctx.saved_tensors, *cotangents)
        made = made if isinstance(made, tuple) else (made,)
        gradients: List[Optional[torch.Tensor]] = [None] * inputs
        for position, gradient in zip(wrt, made):
            gradients[position] = gradient
        return tuple(gradients)

    forward_op.register_autograd(backward, setup_context=setup_context)


def _cotangent(grad: Optional[torch.Tensor], result: Tuple[str, Tuple[int, ...], str], device: Any) -> torch.Tensor:
    """A result's gradient, or zeros where autograd gives none (the result
    did not reach the loss)."""
    _, shape, dtype = result
    if grad is None:
        return torch.zeros(shape, dtype=TORCH_DTYPES[dtype], device=device)
    return grad
