"""Programs to start from, written with ``hir.Builder``."""

from .builder import Builder


def tp_mlp(devices: int, tokens: int, hidden: int, ffn: int, dtype: str = "f32") -> Builder:
    """Megatron's tensor-parallel MLP, ``Y = gelu(X W1^T + b1) W2^T`` (gelu in
    its tanh form, torch's ``approximate="tanh"``), over ``devices`` ranks of a
    mesh ``tp``: X's tokens split (sequence parallel) and gathered before the
    first linear, W1 (``[ffn, hidden]``) and b1 split along ffn, W2
    (``[hidden, ffn]``) along ffn, Y's tokens split (the partial products
    reduce-scattered). Its inputs are ``x, w1, b1, w2``, each rank's shard;
    one output."""
    b = Builder("tp_mlp")
    tp = b.mesh("tp", list(range(devices)))
    x = b.input("x", (tokens, hidden), dtype, tp, ["didx", "serial"])
    w1 = b.input("w1", (ffn, hidden), dtype, tp, ["didx", "serial"])
    b1 = b.input("b1", (ffn,), dtype, tp, ["didx"])
    w2 = b.input("w2", (hidden, ffn), dtype, tp, ["serial", "didx"])
    h = b.linear(b.set(x, ["serial", "serial"]), w1, b1, axes=["serial", "didx"])
    b.output(b.linear(b.gelu(h), w2, axes=["didx", "serial"]))
    return b
