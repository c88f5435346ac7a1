// XFAIL: *
// The matmul example does not yet run correctly: hir-lower
// (convert-fusion-to-host) rejects it. This test flips to XPASS when that is fixed:
// then fold it into examples.mlir.
// RUN: hir-run --check -n 1 %examples/matmul.mlir
