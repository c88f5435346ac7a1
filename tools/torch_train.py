"""PyTorch's side of the TP-MLP training step (issue 42), imported by
tools/torch-layer.py (`--mlp --train`): forward and backward of Megatron's
sequence-parallel MLP, Y = gelu(X W1^T + b1) W2^T, written out as Megatron
and Transformer Engine run it, per communication variant:

  nocomm    the step's GEMMs and gelu at their local sizes, no collective
  nccl      all_gather_into_tensor / reduce_scatter_tensor around them
  async-tp  torch.ops.symm_mem.fused_all_gather_matmul (forward X, backward
            dY, each gathered input returned for the weight gradient) and
            fused_matmul_reduce_scatter (forward Y, backward dX)

The backward is written out (no autograd), so that each variant runs the
collectives it names: dA = AG(dY) W2, dW2 = AG(dY)^T A, dH = gelu'(H) dA,
db1 = sum_rows dH, dW1 = dH^T AG(X), dX = RS(dH W1). --check compares every
gradient with float64 autograd of the same math on the whole tensors.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F


def reference_grads(full, dy, gelu64):
    """(Y, dX, dW1, db1, dW2) in float64, by autograd on the whole tensors."""
    x, w1, c1, w2 = (full[k].double().requires_grad_() for k in ("x", "w1", "c1", "w2"))
    y = gelu64(x @ w1.T + c1) @ w2.T
    y.backward(dy.double())
    return y.detach(), x.grad, w1.grad, c1.grad, w2.grad


def run_mlp_train(ctx, p, draw, timed_ms, rel_l2, verdict, gelu64, tolerances):
    args, say = ctx.args, ctx.say
    t_, h, f, d, r = p.s, p.h, p.f, ctx.size, ctx.rank
    rows = slice(r * t_ // d, (r + 1) * t_ // d)
    cols = slice(r * f // d, (r + 1) * f // d)
    specs = {
        "x": ((t_, h), 0.0, 1.0),
        "w1": ((f, h), 0.0, 1.0 / h**0.5),
        "c1": ((f,), 0.0, 0.1),
        "w2": ((h, f), 0.0, 1.0 / f**0.5),
        "dy": ((t_, h), 0.0, 1.0),
    }
    full = draw(specs, args.seed + 3)
    x, dy = full["x"][rows].contiguous(), full["dy"][rows].contiguous()
    w1 = full["w1"][cols].contiguous()  # [F/D, H]
    w1t = w1.t().contiguous()  # [H, F/D]
    c1 = full["c1"][cols].contiguous()
    w2 = full["w2"][:, cols].contiguous()  # [H, F/D]
    w2t = w2.t().contiguous()  # [F/D, H]
    reference = None
    if args.check:
        y64, dx64, dw164, dc164, dw264 = reference_grads(
            {k: full[k] for k in ("x", "w1", "c1", "w2")}, full["dy"], gelu64)
        reference = (y64[rows], dx64[rows], dw164[cols], dc164[cols], dw264[:, cols])
    del full
    torch.cuda.empty_cache()
    group, name = ctx.group, ctx.group.group_name

    def train_step(comm):
        xg = torch.randn(t_, h, device="cuda", dtype=x.dtype)
        dyg = torch.randn(t_, h, device="cuda", dtype=x.dtype)
        y = torch.empty(t_ // d, h, device="cuda", dtype=x.dtype)
        dx = torch.empty(t_ // d, h, device="cuda", dtype=x.dtype)

        def step():
            if comm == "async-tp":
                gathered, (hidden,) = torch.ops.symm_mem.fused_all_gather_matmul(x, [w1t], 0, name)
                hidden.add_(c1)
                a = F.gelu(hidden, approximate="tanh")
                out = torch.ops.symm_mem.fused_matmul_reduce_scatter(a, w2t, "sum", 0, name)
                dys, (da,) = torch.ops.symm_mem.fused_all_gather_matmul(dy, [w2], 0, name)
            else:
                if comm == "nccl":
                    dist.all_gather_into_tensor(xg, x, group=group)
                gathered = xg
                hidden = torch.addmm(c1, gathered, w1t)
                a = F.gelu(hidden, approximate="tanh")
                partial = torch.mm(a, w2t)
                if comm == "nccl":
                    dist.reduce_scatter_tensor(y, partial, group=group)
                    dist.all_gather_into_tensor(dyg, dy, group=group)
                out = y if comm == "nccl" else partial[rows]
                dys = dyg
                da = torch.mm(dys, w2)
            dw2 = torch.mm(dys.t(), a)
            dh = torch.ops.aten.gelu_backward(da, hidden, approximate="tanh")
            dc1 = dh.sum(0)
            dw1 = torch.mm(dh.t(), gathered)
            if comm == "async-tp":
                dxs = torch.ops.symm_mem.fused_matmul_reduce_scatter(dh, w1, "sum", 0, name)
            else:
                dxg = torch.mm(dh, w1)
                if comm == "nccl":
                    dist.reduce_scatter_tensor(dx, dxg, group=group)
                dxs = dx if comm == "nccl" else dxg[rows]
            return out, dxs, dw1, dc1, dw2

        return step

    flops = 12 * t_ * h * f // d
    say(f"mlp training step (forward + backward, issue 42): T={t_} H={h} F={f} D={d} bf16")
    against = "float64 autograd" if args.check else "nccl"
    say(f"{'mode':6} {'comm':9} {'median_ms':>9} {'TFLOP/s':>8} {'vs_nocomm':>9}  "
        f"check: rel L2 of Y dX dW1 db1 dW2 vs {against}")
    if reference is None:
        reference = tuple(t.clone() for t in train_step("nccl")())
    check_tol, loose_tol = tolerances
    tol = check_tol if args.check else loose_tol
    ok, nocomm_ms = True, None
    for comm in ("nocomm", "nccl", "async-tp"):
        step = train_step(comm)
        outs = step()
        if comm == "nocomm":
            check = "- (no collectives)"
        else:
            check, good = verdict([rel_l2(o, ref, group) for o, ref in zip(outs, reference)], tol)
            ok = ok and good
        del outs
        if args.check:
            say(f"{'train':6} {comm:9} {'-':>9} {'-':>8} {'-':>9}  {check}")
        else:
            ms = timed_ms(step, group, args.iters, args.warmup)
            nocomm_ms = nocomm_ms or ms
            say(f"{'train':6} {comm:9} {ms:9.3f} {flops / ms / 1e9:8.1f} {nocomm_ms / ms:9.3f}  {check}")
        del step
        torch.cuda.empty_cache()
    return ok
