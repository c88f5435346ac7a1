//===- AxisMap.h - how an op maps operand axes to output axes -------------===//
//
// The AxisMapOpInterface (common/AxisMap.td) and the maps it is made of. An
// op's output is its result (fusion) or its destination-passing-style init
// (host), which maps every axis to itself.
//
//===----------------------------------------------------------------------===//
#ifndef HIR_COMMON_AXISMAP_H
#define HIR_COMMON_AXISMAP_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

namespace hir {

using AxisMaps = llvm::SmallVector<llvm::SmallVector<int64_t>>;

/// The maps of an elementwise, reduction or broadcast op (its kind trait).
AxisMaps axisMapsByKind(mlir::Operation *op);
/// `[B.., M, K] x [K, N]` or `[B.., K, N] -> [B.., M, N]`: K reduced, a
/// batched rhs maps its batch axes like the lhs's.
AxisMaps matmulAxisMaps(mlir::Operation *op);
/// `[B.., K] x [N, K] (+ [N]) -> [B.., N]`: K reduced, the weight's and the
/// bias's N to the last output axis.
AxisMaps linearAxisMaps(mlir::Operation *op);

} // namespace hir

#include "common/AxisMapInterface.h.inc"

#endif // HIR_COMMON_AXISMAP_H
