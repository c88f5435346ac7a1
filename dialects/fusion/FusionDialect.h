//===- FusionDialect.h - the fusion dialect ----------------------*- C++ -*-===//
#ifndef HIR_FUSION_FUSIONDIALECT_H
#define HIR_FUSION_FUSIONDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "common/AxisMap.h"
#include "common/OpKind.h"
#include "common/SizesFit.h"

#include "fusion/FusionDialect.h.inc"
#include "fusion/FusionEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fusion/FusionAttrs.h.inc"

#define GET_OP_CLASSES
#include "fusion/FusionOps.h.inc"

#endif // HIR_FUSION_FUSIONDIALECT_H
