# PyTorch's side of the layer benchmark (issue 38, item 5): the forward of
# one Megatron-LM sequence-parallel transformer block, with the math of HIR's
# block (`hir-bench program block`, tools/src/blocks.rs), over D ranks, one
# process per GPU, bf16:
#   y  = LayerNorm(x; g1, b1)                 x [S, H], tokens split over the ranks
#   yg = allgather(y); q, k, v = yg Wq, yg Wk, yg Wv   heads/D heads per rank, dh = H/heads
#   o  = softmax(q k^T / sqrt(dh), causal) v
#   x1 = x + reduce_scatter(o Wo)             row parallel, back to token shards
#   y2 = LayerNorm(x1; g2, b2); yg2 = allgather(y2)
#   x2 = x1 + reduce_scatter(gelu_tanh(yg2 W1^T + c1) W2^T)   W1 [F, H], W2 [H, F]
# (no bias but FC1's c1; LayerNorm eps 1e-5; gelu's tanh approximation), each
# block as three communication variants:
#   nocomm   each rank's compute alone, the collectives removed (the ceiling;
#            its GEMMs read a stale gathered buffer and it keeps its own rows of
#            the partial sums, so its output is not the block's and is not checked),
#   nccl     all_gather_into_tensor then the GEMM; the GEMM then reduce_scatter_tensor,
#   async-tp torch.ops.symm_mem.fused_all_gather_matmul (Q, K, V as one
#            [H, 3H/D] weight, or three with --qkv list) and fused_matmul_reduce_scatter,
# each with attention as F.scaled_dot_product_attention(is_causal=True)
# (`sdpa`) and unfused (`math`: q k^T * scale, masked_fill, softmax in f32, @ v).
# --mlp times the MLP alone as HIR's tp_mlp example computes it
# (examples/tp_mlp.mlir: y = RS(gelu_tanh(AG(x) W1^T + c1) W2^T), no
# LayerNorm, no residual; T 8192, H 4096, F 16384 by default) in the three
# communication variants; --train (with or without --mlp) times that MLP's
# training step, forward and backward (tools/torch_train.py, issue 42);
# --attention-only times causal attention alone at
# the block's per-rank shapes [1, heads/D, S, dh]: SDPA as it dispatches,
# each SDPA backend forced (flash, cudnn, efficient, math) and the unfused
# math, with TFLOP/s counting the causal half (2*2*S*S*dh*heads/D/2).
# Timed as tools/torch-async-tp.py times (median of --iters after --warmup,
# a barrier before each, CUDA events, the slowest rank's time); TFLOP/s is
# per rank, attention counted causal (half of S*S, the math variant's whole
# S*S too). Before it is timed, each variant's output is checked against
# nccl/sdpa's (relative L2 error over all ranks, of the attention's
# reduce-scattered output, the MLP's and the block's; nocomm excepted).
# --check runs every variant of the block, the MLP and attention at a small
# size (S=256 H=256 heads=4 F=512 unless given) against a float64 reference
# computed on rank 0 from the full tensors (every rank draws the same seeded
# tensors and slices its shards from them), prints the relative L2 errors and
# exits 1 if one is over 2e-2; a timing run exits 1 on a mismatch too.
# Run on the device machine, one process per GPU (D = --d, default 2):
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/torch-layer.py --d 2 --check
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/torch-layer.py --d 2
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/torch-layer.py --d 2 --mlp
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/torch-layer.py --d 2 --attention-only
# (--all times the block, the MLP and attention in one run.)
import argparse
import math
import multiprocessing
import os
import sys
import warnings
from types import SimpleNamespace

# NVLink multicast stays off (the device machines require it): NCCL's NVLS and
# symmetric memory's multimem paths. Set before torch reads them; an explicit
# value in the environment wins.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.distributed import _symmetric_memory as symm_mem  # noqa: E402

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:  # torch < 2.3
    SDPBackend = sdpa_kernel = None

EPS = 1e-5
CHECK_TOL = 2e-2  # --check, against float64
LOOSE_TOL = 5e-2  # a timing run, against nccl/sdpa's bf16 output
DTYPE = torch.bfloat16
COMMS = ("nocomm", "nccl", "async-tp")
ATTENTIONS = ("sdpa", "math")
BLOCK_SIZES = {"s": 8192, "h": 8192, "heads": 64, "f": 32768}
MLP_SIZES = {"s": 8192, "h": 4096, "heads": 1, "f": 16384}
CHECK_SIZES = {"s": 256, "h": 256, "heads": 4, "f": 512}


def timed_ms(fn, group, iters, warmup):
    """tools/torch-async-tp.py's timing: the median, over ranks the slowest."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        dist.barrier(group)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        elapsed = torch.tensor([start.elapsed_time(end)], device="cuda")
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=group)
        times.append(elapsed.item())
    times.sort()
    return times[len(times) // 2]


def rel_l2(result, reference, group):
    """||result - reference|| / ||reference|| over every rank's shard (the same on each rank)."""
    sums = torch.stack([
        (result.double() - reference.double()).pow(2).sum(),
        reference.double().pow(2).sum(),
    ])
    dist.all_reduce(sums, group=group)
    diff, norm = sums.tolist()
    return math.sqrt(diff / norm) if norm > 0 else float("nan")


def verdict(errors, tol):
    """'1.2e-03 4.5e-03 ... ok' (NaN fails)."""
    ok = all(e <= tol for e in errors)
    return " ".join(f"{e:.2e}" for e in errors) + (" ok" if ok else " MISMATCH"), ok


def draw(specs, seed):
    """Seeded tensors, the same on every rank: {name: (shape, mean, std)} -> bf16 on this GPU."""
    generator = torch.Generator(device=torch.device("cuda", torch.cuda.current_device()))
    generator.manual_seed(seed)
    tensors = {}
    for name, (shape, mean, std) in specs.items():
        t = torch.randn(shape, generator=generator, device="cuda", dtype=torch.float32)
        tensors[name] = (t.mul_(std).add_(mean)).to(DTYPE)
        del t
    return tensors


def same_on_every_rank(ctx, tensors):
    """Whether every rank drew the same tensors (sums and absolute sums in f64 agree)."""
    sums = torch.stack(
        [t.sum(dtype=torch.float64) for t in tensors]
        + [t.abs().sum(dtype=torch.float64) for t in tensors]
    )
    everyone = torch.empty(ctx.size, sums.numel(), dtype=torch.float64, device="cuda")
    dist.all_gather_into_tensor(everyone, sums, group=ctx.group)
    agree = torch.tensor(
        [int(torch.allclose(everyone, sums.expand_as(everyone), rtol=1e-12, atol=0.0))],
        device="cuda",
    )
    dist.all_reduce(agree, op=dist.ReduceOp.MIN, group=ctx.group)
    return bool(agree.item())


def broadcast_reference(ctx, compute, shape):
    """compute() on rank 0 (float64), sent to every rank."""
    reference = compute() if ctx.rank == 0 else torch.empty(shape, dtype=torch.float64, device="cuda")
    reference = reference.contiguous()
    dist.broadcast(reference, 0, group=ctx.group)
    return reference


def gelu_tanh64(t):
    return 0.5 * t * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (t + 0.044715 * t * t * t)))


def layer_norm64(t, g, b):
    centered = t - t.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)
    return centered * torch.rsqrt(var + EPS) * g + b


def attention64(q, k, v):
    """Causal softmax attention in float64, written out: q, k, v [..., S, dh]."""
    s = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    pos = torch.arange(s, device=q.device)
    scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))  # key j > query i hidden
    scores = scores - scores.amax(-1, keepdim=True)
    e = scores.exp()
    return (e / e.sum(-1, keepdim=True)) @ v


def reference_block(full, heads):
    """The block in float64 from the full tensors: (attention out, MLP out, x2), each [S, H]."""
    w = {name: t.double() for name, t in full.items()}
    x = w["x"]
    y = layer_norm64(x, w["ln1_g"], w["ln1_b"])
    q = torch.einsum("sh,ahd->asd", y, w["wq"])
    k = torch.einsum("sh,ahd->asd", y, w["wk"])
    v = torch.einsum("sh,ahd->asd", y, w["wv"])
    attn = torch.einsum("asd,adh->sh", attention64(q, k, v), w["wo"])
    x1 = x + attn
    y2 = layer_norm64(x1, w["ln2_g"], w["ln2_b"])
    mlp = gelu_tanh64(y2 @ w["w1"].T + w["c1"]) @ w["w2"].T
    return torch.stack([attn, mlp, x1 + mlp])


def reference_mlp(full):
    w = {name: t.double() for name, t in full.items()}
    return gelu_tanh64(w["x"] @ w["w1"].T + w["c1"]) @ w["w2"].T


def causal_math(q, k, v, mask):
    """The unfused attention: scores = q k^T * scale, masked_fill, softmax in f32, @ v."""
    scores = torch.matmul(q, k.transpose(-2, -1)).mul_(1.0 / math.sqrt(q.shape[-1]))
    scores.masked_fill_(mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
    del scores
    probs = probs.to(q.dtype)
    return torch.matmul(probs, v)


def causal_mask(s):
    """[S, S] bool, True where key j > query i (hidden)."""
    return torch.ones(s, s, dtype=torch.bool, device="cuda").triu_(1)


def backend_names():
    names = {}
    if SDPBackend is None:
        return names
    for name in ("ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE"):
        member = getattr(SDPBackend, name, None)
        if member is None:
            continue
        try:
            names[int(member)] = name
        except TypeError:
            names[int(member.value)] = name
    return names


def sdpa_choice(q, k, v):
    """The backend F.scaled_dot_product_attention(is_causal=True) dispatches to for these inputs."""
    try:
        choice = torch._fused_sdp_choice(q, k, v, None, 0.0, True)
    except Exception as error:  # private API: report, do not fail
        return f"unknown ({type(error).__name__})"
    return backend_names().get(int(choice), f"backend {int(choice)}")


# ---------------------------------------------------------------- the block


def block_weights(ctx, p):
    """Every rank's shards, sliced from the full tensors, in the GEMMs' layouts."""
    s, h, heads, f = p.s, p.h, p.heads, p.f
    dh = h // heads
    std_h, std_f = 1.0 / math.sqrt(h), 1.0 / math.sqrt(f)
    specs = {
        "x": ((s, h), 0.0, 1.0),
        "ln1_g": ((h,), 1.0, 0.1),
        "ln1_b": ((h,), 0.0, 0.1),
        "wq": ((heads, h, dh), 0.0, std_h),
        "wk": ((heads, h, dh), 0.0, std_h),
        "wv": ((heads, h, dh), 0.0, std_h),
        "wo": ((heads, dh, h), 0.0, std_h),
        "ln2_g": ((h,), 1.0, 0.1),
        "ln2_b": ((h,), 0.0, 0.1),
        "w1": ((f, h), 0.0, std_h),
        "c1": ((f,), 0.0, 0.1),
        "w2": ((h, f), 0.0, std_f),
    }
    full = draw(specs, ctx.args.seed)
    d, r = ctx.size, ctx.rank
    hl = heads // d
    rows = slice(r * s // d, (r + 1) * s // d)
    local_heads = slice(r * hl, (r + 1) * hl)
    cols = slice(r * f // d, (r + 1) * f // d)

    def columns(weight):  # [hl, H, dh] -> [H, hl*dh], column a*dh + e = head a, element e
        return weight[local_heads].permute(1, 0, 2).reshape(h, hl * dh)

    qkv = [columns(full["wq"]), columns(full["wk"]), columns(full["wv"])]
    w = SimpleNamespace(
        x=full["x"][rows].contiguous(),
        ln1_g=full["ln1_g"].clone(),
        ln1_b=full["ln1_b"].clone(),
        qkv=[torch.cat(qkv, dim=1).contiguous()] if ctx.args.qkv == "fused" else [t.contiguous() for t in qkv],
        wo=full["wo"][local_heads].reshape(hl * dh, h).contiguous(),  # row a*dh + e
        ln2_g=full["ln2_g"].clone(),
        ln2_b=full["ln2_b"].clone(),
        w1t=full["w1"][cols].t().contiguous(),  # [H, F/D]
        c1=full["c1"][cols].contiguous(),
        w2t=full["w2"][:, cols].t().contiguous(),  # [F/D, H]
    )
    return full, w


def split_heads(qkv, hl, dh):
    """q, k, v [1, hl, S, dh], views of the QKV GEMM's output(s): one [S, 3*hl*dh] or three [S, hl*dh]."""
    s = qkv[0].shape[0]
    if len(qkv) == 1:
        t = qkv[0].view(s, 3, hl, dh)
        return [t[:, i].transpose(0, 1).unsqueeze(0) for i in range(3)]
    return [t.view(s, hl, dh).transpose(0, 1).unsqueeze(0) for t in qkv]


def block_step(ctx, p, w, comm, attention):
    """One forward of the block on this rank: returns (attention out, MLP out, x2), each [S/D, H]."""
    s, h = p.s, p.h
    d, r = ctx.size, ctx.rank
    hl, dh = p.heads // d, h // p.heads
    rows = slice(r * s // d, (r + 1) * s // d)
    group, name = ctx.group, ctx.group.group_name
    gathered = None
    if comm != "async-tp":
        # nocomm's GEMMs read this stale buffer: the allgather is removed.
        gathered = torch.randn(s, h, device="cuda", dtype=DTYPE)
    attn_out = torch.empty(s // d, h, device="cuda", dtype=DTYPE)
    mlp_out = torch.empty(s // d, h, device="cuda", dtype=DTYPE)
    mask = causal_mask(s) if attention == "math" else None

    def ag_mm(y, weights, bias=None):
        if comm == "async-tp":
            # return_A stays True (the default, as in torch-async-tp.py): with
            # False, small M may take symmetric memory's multimem path.
            _, outs = torch.ops.symm_mem.fused_all_gather_matmul(y, weights, 0, name)
            if bias is not None:
                outs[0].add_(bias)
            return outs
        if comm == "nccl":
            dist.all_gather_into_tensor(gathered, y, group=group)
        if bias is not None:
            return [torch.addmm(bias, gathered, weights[0])]
        return [torch.mm(gathered, weight) for weight in weights]

    def mm_rs(a, b, out):
        if comm == "async-tp":
            return torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, name)
        partial = torch.mm(a, b)
        if comm == "nccl":
            dist.reduce_scatter_tensor(out, partial, group=group)
            return out
        return partial[rows]  # nocomm: this rank's rows, unsummed

    def step():
        y = F.layer_norm(w.x, (h,), w.ln1_g, w.ln1_b, EPS)
        q, k, v = split_heads(ag_mm(y, w.qkv), hl, dh)
        if attention == "sdpa":
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            o = causal_math(q, k, v, mask)
        o = o.transpose(1, 2).reshape(s, hl * dh)  # column a*dh + e, as wo's rows
        attn = mm_rs(o, w.wo, attn_out)
        x1 = w.x + attn
        y2 = F.layer_norm(x1, (h,), w.ln2_g, w.ln2_b, EPS)
        (hidden,) = ag_mm(y2, [w.w1t], bias=w.c1)
        hidden = F.gelu(hidden, approximate="tanh")
        mlp = mm_rs(hidden, w.w2t, mlp_out)
        return attn, mlp, x1 + mlp

    return step


def run_block(ctx, p):
    args, say = ctx.args, ctx.say
    s, h, heads, f, d = p.s, p.h, p.heads, p.f, ctx.size
    hl, dh = heads // d, h // heads
    rows = slice(ctx.rank * s // d, (ctx.rank + 1) * s // d)
    full, w = block_weights(ctx, p)
    ok = same_on_every_rank(ctx, list(full.values()))
    if not ok:
        say("block: the ranks drew different tensors (seeded generation differs): FAIL")
    reference = None
    if args.check:
        reference = broadcast_reference(ctx, lambda: reference_block(full, heads), (3, s, h))[:, rows]
    del full
    torch.cuda.empty_cache()
    # The SDPA backend for the block's own q, k, v (strided views of the QKV GEMM's output).
    probe = split_heads([torch.empty(s, t.shape[1], device="cuda", dtype=DTYPE) for t in w.qkv], hl, dh)
    backend = sdpa_choice(*probe)
    del probe
    flops = (2 * s * h * (4 * h + 2 * f) + 2 * s * s * h) // d  # per rank: QKV, out-proj, FC1, FC2, causal attention
    say(f"block: S={s} H={h} heads={heads} ({hl} a rank, dh {dh}) F={f} D={d} bf16, "
        f"QKV {'one fused weight' if args.qkv == 'fused' else 'three weights'}; "
        f"sdpa dispatches to {backend} for the block's q, k, v")
    against = "float64 reference" if args.check else "nccl/sdpa"
    say(f"{'mode':6} {'comm':9} {'attention':14} {'median_ms':>9} {'TFLOP/s':>8} {'vs_nocomm':>9}  "
        f"check: rel L2 vs {against} (attn-out mlp-out x2)")
    if reference is None:
        step = block_step(ctx, p, w, "nccl", "sdpa")
        reference = [t.clone() for t in step()]
        del step
        torch.cuda.empty_cache()
    tol = CHECK_TOL if args.check else LOOSE_TOL
    for attention in ATTENTIONS:
        nocomm_ms = None
        for comm in COMMS:
            step = block_step(ctx, p, w, comm, attention)
            outs = step()
            if comm == "nocomm":
                check = "- (no collectives: not the block's output)"
            else:
                check, good = verdict([rel_l2(o, ref, ctx.group) for o, ref in zip(outs, reference)], tol)
                ok = ok and good
            del outs
            if args.check:
                say(f"{'block':6} {comm:9} {attention:14} {'-':>9} {'-':>8} {'-':>9}  {check}")
            else:
                ms = timed_ms(step, ctx.group, args.iters, args.warmup)
                nocomm_ms = nocomm_ms or ms
                say(f"{'block':6} {comm:9} {attention:14} {ms:9.3f} {flops / ms / 1e9:8.1f} "
                    f"{nocomm_ms / ms:9.3f}  {check}")
            del step
            torch.cuda.empty_cache()
    del w, reference
    torch.cuda.empty_cache()
    return ok


# ---------------------------------------------------------------- the MLP alone


def run_mlp(ctx, p):
    args, say = ctx.args, ctx.say
    t_, h, f, d = p.s, p.h, p.f, ctx.size
    r = ctx.rank
    rows = slice(r * t_ // d, (r + 1) * t_ // d)
    cols = slice(r * f // d, (r + 1) * f // d)
    specs = {
        "x": ((t_, h), 0.0, 1.0),
        "w1": ((f, h), 0.0, 1.0 / math.sqrt(h)),
        "c1": ((f,), 0.0, 0.1),
        "w2": ((h, f), 0.0, 1.0 / math.sqrt(f)),
    }
    full = draw(specs, args.seed + 1)
    ok = same_on_every_rank(ctx, list(full.values()))
    if not ok:
        say("mlp: the ranks drew different tensors (seeded generation differs): FAIL")
    x = full["x"][rows].contiguous()
    w1t = full["w1"][cols].t().contiguous()
    c1 = full["c1"][cols].contiguous()
    w2t = full["w2"][:, cols].t().contiguous()
    reference = None
    if args.check:
        reference = broadcast_reference(ctx, lambda: reference_mlp(full), (t_, h))[rows]
    del full
    torch.cuda.empty_cache()
    group, name = ctx.group, ctx.group.group_name

    def mlp_step(comm):
        gathered = torch.randn(t_, h, device="cuda", dtype=DTYPE) if comm != "async-tp" else None
        out = torch.empty(t_ // d, h, device="cuda", dtype=DTYPE)

        def step():
            if comm == "async-tp":
                _, (hidden,) = torch.ops.symm_mem.fused_all_gather_matmul(x, [w1t], 0, name)
                hidden = F.gelu(hidden.add_(c1), approximate="tanh")
                return torch.ops.symm_mem.fused_matmul_reduce_scatter(hidden, w2t, "sum", 0, name)
            if comm == "nccl":
                dist.all_gather_into_tensor(gathered, x, group=group)
            hidden = F.gelu(torch.addmm(c1, gathered, w1t), approximate="tanh")
            partial = torch.mm(hidden, w2t)
            if comm == "nccl":
                dist.reduce_scatter_tensor(out, partial, group=group)
                return out
            return partial[rows]

        return step

    flops = 4 * t_ * h * f // d
    say(f"mlp (examples/tp_mlp.mlir, no LayerNorm, no residual): T={t_} H={h} F={f} D={d} bf16")
    against = "float64 reference" if args.check else "nccl"
    say(f"{'mode':6} {'comm':9} {'attention':14} {'median_ms':>9} {'TFLOP/s':>8} {'vs_nocomm':>9}  "
        f"check: rel L2 vs {against}")
    if reference is None:
        reference = mlp_step("nccl")().clone()
    tol = CHECK_TOL if args.check else LOOSE_TOL
    nocomm_ms = None
    for comm in COMMS:
        step = mlp_step(comm)
        out = step()
        if comm == "nocomm":
            check = "- (no collectives)"
        else:
            check, good = verdict([rel_l2(out, reference, ctx.group)], tol)
            ok = ok and good
        del out
        if args.check:
            say(f"{'mlp':6} {comm:9} {'-':14} {'-':>9} {'-':>8} {'-':>9}  {check}")
        else:
            ms = timed_ms(step, ctx.group, args.iters, args.warmup)
            nocomm_ms = nocomm_ms or ms
            say(f"{'mlp':6} {comm:9} {'-':14} {ms:9.3f} {flops / ms / 1e9:8.1f} {nocomm_ms / ms:9.3f}  {check}")
        del step
        torch.cuda.empty_cache()
    del x, w1t, c1, w2t, reference
    torch.cuda.empty_cache()
    return ok


# ---------------------------------------------------------------- attention alone


def run_attention(ctx, p):
    args, say = ctx.args, ctx.say
    s, d = p.s, ctx.size
    hl, dh = p.heads // d, p.h // p.heads
    generator = torch.Generator(device=torch.device("cuda", torch.cuda.current_device()))
    generator.manual_seed(args.seed + 2 + ctx.rank)
    q, k, v = (
        torch.randn(1, hl, s, dh, generator=generator, device="cuda", dtype=torch.float32).to(DTYPE)
        for _ in range(3)
    )
    mask = causal_mask(s)
    flops = 2 * 2 * s * s * dh * hl // 2

    def sdpa(backend):
        if backend is None:
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)

        def forced():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        return forced

    rows = [("sdpa", sdpa(None))]
    for label, member in (("sdpa-flash", "FLASH_ATTENTION"), ("sdpa-cudnn", "CUDNN_ATTENTION"),
                          ("sdpa-efficient", "EFFICIENT_ATTENTION"), ("sdpa-math", "MATH")):
        backend = getattr(SDPBackend, member, None) if SDPBackend is not None else None
        if backend is not None:
            rows.append((label, sdpa(backend)))
    rows.append(("math", lambda: causal_math(q, k, v, mask)))

    say(f"attention: causal, per rank [1, {hl}, {s}, {dh}] (heads={p.heads}/D={d}, H={p.h}) bf16; "
        f"sdpa dispatches to {sdpa_choice(q, k, v)}")
    against = "float64 reference" if args.check else "sdpa"
    say(f"{'mode':6} {'comm':9} {'attention':14} {'median_ms':>9} {'TFLOP/s':>8} {'vs_sdpa':>9}  "
        f"check: rel L2 vs {against}")
    if args.check:
        reference = attention64(q.double(), k.double(), v.double())
    else:
        reference = rows[0][1]().clone()
    tol = CHECK_TOL if args.check else LOOSE_TOL
    ok = True
    sdpa_ms = None
    for label, fn in rows:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = fn()
            available = 1
        except RuntimeError as error:
            out, available, why = None, 0, str(error).splitlines()[0][:60]
        # Every rank times a row or none (the barriers inside timed_ms pair up).
        flag = torch.tensor([available], device="cuda")
        dist.all_reduce(flag, op=dist.ReduceOp.MIN, group=ctx.group)
        if not flag.item():
            say(f"{'attn':6} {'-':9} {label:14} {'-':>9} {'-':>8} {'-':>9}  unavailable"
                + (f": {why}" if not available else " on another rank"))
            continue
        check, good = verdict([rel_l2(out, reference, ctx.group)], tol)
        ok = ok and good
        del out
        if args.check:
            say(f"{'attn':6} {'-':9} {label:14} {'-':>9} {'-':>8} {'-':>9}  {check}")
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ms = timed_ms(fn, ctx.group, args.iters, args.warmup)
            sdpa_ms = sdpa_ms or ms
            say(f"{'attn':6} {'-':9} {label:14} {ms:9.3f} {flops / ms / 1e9:8.1f} {sdpa_ms / ms:9.3f}  {check}")
        torch.cuda.empty_cache()
    del q, k, v, mask, reference, rows
    torch.cuda.empty_cache()
    return ok


# ---------------------------------------------------------------- the MLP's training step


def run_train(ctx, p):
    from torch_train import run_mlp_train  # beside this file

    return run_mlp_train(ctx, p, draw, timed_ms, rel_l2, verdict, gelu_tanh64, (CHECK_TOL, LOOSE_TOL))


# ---------------------------------------------------------------- driver


def sizes(args, mode):
    """--s/--h/--heads/--f where given, else the mode's defaults (--check: small)."""
    base = CHECK_SIZES if args.check else (MLP_SIZES if mode in ("mlp", "train") else BLOCK_SIZES)
    p = SimpleNamespace(**{key: getattr(args, key) or base[key] for key in ("s", "h", "heads", "f")})
    if mode in ("mlp", "train"):
        p.heads = 1
    elif args.check and args.heads is None and p.heads % args.d:
        p.heads = args.d  # heads split over the ranks
    d = args.d
    problems = []
    if p.s % d:
        problems.append(f"S={p.s} is not a multiple of D={d}")
    if p.f % d:
        problems.append(f"F={p.f} is not a multiple of D={d}")
    if mode not in ("mlp", "train"):
        if p.heads % d:
            problems.append(f"heads={p.heads} is not a multiple of D={d}")
        if p.h % p.heads:
            problems.append(f"H={p.h} is not a multiple of heads={p.heads}")
    if problems:
        sys.exit(f"torch-layer {mode}: " + "; ".join(problems))
    return p


def worker(rank, args, modes, failed):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=args.d, device_id=torch.device("cuda", rank))
    group = dist.group.WORLD
    enable = getattr(symm_mem, "enable_symm_mem_for_group", None)
    if enable is not None:  # deprecated (and unneeded) in newer torch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enable(group.group_name)

    def say(*parts):
        if rank == 0:
            print(*parts, flush=True)

    ctx = SimpleNamespace(rank=rank, size=args.d, group=group, args=args, say=say)
    say(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
        f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {torch.cuda.get_device_name(rank)} x D={args.d}, "
        f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')} "
        f"TORCH_SYMM_MEM_DISABLE_MULTICAST={os.environ.get('TORCH_SYMM_MEM_DISABLE_MULTICAST')}")
    if args.check:
        say(f"--check: every variant against float64, relative L2 error at most {CHECK_TOL:g}")
    else:
        say(f"median of {args.iters} after {args.warmup}, slowest rank, ms per forward; TFLOP/s per rank; "
            f"outputs checked first (at most {LOOSE_TOL:g})")
    ok = True
    runners = {"block": run_block, "mlp": run_mlp, "attention": run_attention, "train": run_train}
    for mode in modes:
        say("")
        ok = runners[mode](ctx, sizes(args, mode)) and ok
    say("")
    say("all checks passed" if ok else "FAILED: a check is over its tolerance (see MISMATCH/FAIL above)")
    dist.barrier(group)
    dist.destroy_process_group()
    if rank == 0 and not ok:
        failed.value = 1


def main():
    parser = argparse.ArgumentParser(
        description="PyTorch's Megatron sequence-parallel transformer block (HIR's `hir-bench program block`), "
        "timed per communication variant and attention; see the header of this file.")
    parser.add_argument("--s", type=int, help="S: tokens, split over the ranks [8192; --mlp: T 8192; --check: 256]")
    parser.add_argument("--h", type=int, help="H: hidden size [8192; --mlp 4096; --check 256]")
    parser.add_argument("--heads", type=int, help="attention heads, split over the ranks [64; --check 4]")
    parser.add_argument("--f", type=int,
                        help="F: the MLP's width, split over the ranks [32768; --mlp 16384; --check 512]")
    parser.add_argument("--d", type=int, default=2, help="D: ranks, one GPU each [2]")
    parser.add_argument("--iters", type=int, default=20, help="timed iterations, the median reported [20]")
    parser.add_argument("--warmup", type=int, default=5, help="untimed iterations first [5]")
    parser.add_argument("--check", action="store_true",
                        help="check every variant against float64 at a small size, no timing; exit 1 on a mismatch")
    parser.add_argument("--mlp", action="store_true", help="the MLP alone (tp_mlp.mlir)")
    parser.add_argument("--train", action="store_true",
                        help="the MLP's training step, forward and backward (tools/torch_train.py)")
    parser.add_argument("--attention-only", action="store_true", help="causal attention alone, per SDPA backend")
    parser.add_argument("--all", action="store_true", help="the block, the MLP and attention")
    parser.add_argument("--qkv", choices=("fused", "list"), default="fused",
                        help="Q, K, V as one [H, 3H/D] weight (one GEMM) or three [default: fused]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=29534, help="MASTER_PORT unless set [29534]")
    args = parser.parse_args()
    if args.all or (args.check and not (args.mlp or args.train or args.attention_only)):
        modes = ["block", "mlp", "attention"]
    else:
        chosen = (("mlp", args.mlp), ("train", args.train), ("attention", args.attention_only))
        modes = [mode for mode, on in chosen if on] or ["block"]
    for key in ("s", "h", "heads", "f", "d", "iters"):
        value = getattr(args, key)
        if value is not None and value < 1:
            parser.error(f"--{key} must be at least 1")
    if args.warmup < 0:
        parser.error("--warmup must be at least 0")
    for mode in modes:
        sizes(args, mode)  # fail here, before spawning, on sizes that do not split
    if args.d > torch.cuda.device_count():
        parser.error(f"--d {args.d}: only {torch.cuda.device_count()} GPUs")
    failed = multiprocessing.get_context("spawn").Value("i", 0)  # rank 0 sets it on a failed check
    mp.spawn(worker, args=(args, modes, failed), nprocs=args.d)
    sys.exit(1 if failed.value else 0)


if __name__ == "__main__":
    main()
