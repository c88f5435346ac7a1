//===- OpKind.cpp - C API: what kind of computation an op is --------------===//
#include "hir-c/OpKind.h"

#include "common/OpKind.h"

#include "mlir/CAPI/IR.h"

using namespace mlir;

int32_t hirOpKindOf(MlirOperation op) {
  Operation *operation = unwrap(op);
  if (operation->hasTrait<hir::Elementwise>())
    return HirOpKindElementwise;
  if (operation->hasTrait<hir::Reduction>())
    return HirOpKindReduction;
  if (operation->hasTrait<hir::Broadcast>())
    return HirOpKindBroadcast;
  if (operation->hasTrait<hir::Contraction>())
    return HirOpKindContraction;
  return HirOpKindNone;
}
