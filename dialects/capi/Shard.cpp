//===- Shard.cpp - C API: the split axes of upstream shard.sharding ops ---===//
#include "hir-c/Shard.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;

intptr_t hirShardShardingRank(MlirOperation op) {
  auto sharding = llvm::dyn_cast<shard::ShardingOp>(unwrap(op));
  return sharding ? static_cast<intptr_t>(sharding.getSplitAxes().size()) : -1;
}

intptr_t hirShardShardingSplitAxes(MlirOperation op, intptr_t axis, int16_t *gridAxes,
                                   intptr_t capacity) {
  auto sharding = llvm::dyn_cast<shard::ShardingOp>(unwrap(op));
  if (!sharding || axis < 0 || axis >= static_cast<intptr_t>(sharding.getSplitAxes().size()))
    return -1;
  llvm::ArrayRef<int16_t> split = sharding.getSplitAxes().getAxes()[axis].asArrayRef();
  for (intptr_t index = 0; index < capacity && index < static_cast<intptr_t>(split.size());
       ++index)
    gridAxes[index] = split[index];
  return split.size();
}
