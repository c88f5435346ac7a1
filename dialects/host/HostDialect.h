//===- HostDialect.h - the host dialect --------------------------*- C++ -*-===//
#ifndef HIR_HOST_HOSTDIALECT_H
#define HIR_HOST_HOSTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "common/Resources.h"
#include "common/AxisMap.h"
#include "common/OpKind.h"
#include "common/SizesFit.h"

#include "host/HostDialect.h.inc"
#include "host/HostEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "host/HostTypes.h.inc"

#define GET_OP_CLASSES
#include "host/HostOps.h.inc"

#endif // HIR_HOST_HOSTDIALECT_H
