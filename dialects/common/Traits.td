//===- Traits.td - op traits shared by the HIR dialects ----*- tablegen -*-===//

#ifndef HIR_COMMON_TRAITS_TD
#define HIR_COMMON_TRAITS_TD

include "mlir/IR/OpBase.td"

// Every statically shaped operand and result holds a number of elements, and
// of bytes, that fits in int64 (common/SizesFit.h).
def HIR_SizesFit : NativeOpTrait<"SizesFit"> {
  let cppNamespace = "::hir";
}

// What kind of computation an op is (common/OpKind.h); a compute op carries
// exactly one. Passes ask the op (the C API's hirOpKindOf, Rust's
// hir_dialects::OpKind::of) instead of keeping lists of op names.

// Each result element is computed from the elements at the same position of
// every operand.
def HIR_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::hir";
}

// Reduces the axes listed in the `axes` attribute; they are dropped from the
// result.
def HIR_Reduction : NativeOpTrait<"Reduction"> {
  let cppNamespace = "::hir";
}

// Inserts the new axes listed in the `axes` attribute, repeating the input
// along them.
def HIR_Broadcast : NativeOpTrait<"Broadcast"> {
  let cppNamespace = "::hir";
}

// A matrix product over the operands' last axis (matmul, linear).
def HIR_Contraction : NativeOpTrait<"Contraction"> {
  let cppNamespace = "::hir";
}

#endif // HIR_COMMON_TRAITS_TD
