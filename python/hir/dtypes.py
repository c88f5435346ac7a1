"""HIR's element types by their MLIR names: every one, and those that hold
real numbers (which take floating-point ops and gradients)."""

DTYPES = ("f32", "f16", "bf16", "i32", "i64")
FLOAT_DTYPES = ("f32", "f16", "bf16")
