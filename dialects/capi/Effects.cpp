//===- Effects.cpp - C API: whether an op does anything -------------------===//
#include "hir-c/Effects.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

bool hirIsOpTriviallyDead(MlirOperation op) { return mlir::isOpTriviallyDead(unwrap(op)); }
