//===- Loops.cpp - C API: whether an op's body runs once per iteration ----===//
#include "hir-c/Loops.h"

#include "host/HostDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

bool hirOpIsLoop(MlirOperation op) {
  // host.stream_for implements no loop interface (its iterations run on
  // other streams, which LoopLikeOpInterface's users, such as loop-invariant
  // code motion, do not know of), but its body runs once per iteration.
  return mlir::isa<mlir::LoopLikeOpInterface, hir::host::StreamForOp>(unwrap(op));
}
