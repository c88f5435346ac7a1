//===- CommDialect.h - the comm dialect --------------------------*- C++ -*-===//
#ifndef HIR_COMM_COMMDIALECT_H
#define HIR_COMM_COMMDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "common/Resources.h"
#include "common/SizesFit.h"

namespace hir::comm {
/// The network and peers' memory: communications are never dropped, merged
/// or reordered against each other.
struct CommResource : public mlir::SideEffects::Resource::Base<CommResource> {
  llvm::StringRef getName() final { return "hir.comm"; }
};
} // namespace hir::comm

#include "comm/CommDialect.h.inc"
#include "comm/CommEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "comm/CommTypes.h.inc"

#define GET_OP_CLASSES
#include "comm/CommOps.h.inc"

#endif // HIR_COMM_COMMDIALECT_H
