//===- SizesFit.h - the op trait: static sizes fit in 64 bits ----*- C++ -*-===//
//
// Every op of the HIR dialects carries `SizesFit` (common/Traits.td): each
// statically shaped operand and result holds a number of elements, and of
// bytes, that fits in int64, so that lowering and the runtime can compute
// extents and byte sizes without overflow. Dynamic extents are checked by
// the runtime when the program runs.
//
//===----------------------------------------------------------------------===//
#ifndef HIR_COMMON_SIZESFIT_H
#define HIR_COMMON_SIZESFIT_H

#include "mlir/IR/OpDefinition.h"

namespace hir {

/// Reports through `op` the first operand or result whose static element
/// count or byte size overflows int64.
mlir::LogicalResult verifySizesFit(mlir::Operation *op);

template <typename ConcreteType>
class SizesFit : public mlir::OpTrait::TraitBase<ConcreteType, SizesFit> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) { return verifySizesFit(op); }
};

} // namespace hir

#endif // HIR_COMMON_SIZESFIT_H
