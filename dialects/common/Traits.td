//===- Traits.td - op traits shared by the HIR dialects ----*- tablegen -*-===//

#ifndef HIR_COMMON_TRAITS_TD
#define HIR_COMMON_TRAITS_TD

include "mlir/IR/OpBase.td"

// Every statically shaped operand and result holds a number of elements, and
// of bytes, that fits in int64 (common/SizesFit.h).
def HIR_SizesFit : NativeOpTrait<"SizesFit"> {
  let cppNamespace = "::hir";
}

#endif // HIR_COMMON_TRAITS_TD
