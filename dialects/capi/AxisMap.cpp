//===- AxisMap.cpp - C API: how an op maps operand axes to output axes ----===//
#include "hir-c/AxisMap.h"

#include "common/AxisMap.h"

#include "mlir/CAPI/IR.h"

intptr_t hirOperandAxisMap(MlirOperation op, intptr_t operand, int64_t *axes, intptr_t capacity) {
  auto mapped = llvm::dyn_cast<hir::AxisMapOpInterface>(unwrap(op));
  if (!mapped)
    return -1;
  hir::AxisMaps maps = mapped.getOperandAxisMaps();
  if (operand < 0 || operand >= static_cast<intptr_t>(maps.size()))
    return -1;
  const llvm::SmallVector<int64_t> &map = maps[operand];
  for (intptr_t axis = 0; axis < capacity && axis < static_cast<intptr_t>(map.size()); ++axis)
    axes[axis] = map[axis];
  return map.size();
}
