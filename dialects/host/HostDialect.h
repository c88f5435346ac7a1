//===- HostDialect.h - the host dialect --------------------------*- C++ -*-===//
#ifndef HIR_HOST_HOSTDIALECT_H
#define HIR_HOST_HOSTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace hir::host {
/// The state "which stream is current": ops that read or switch it are never
/// reordered across each other.
struct StreamResource : public mlir::SideEffects::Resource::Base<StreamResource> {
  llvm::StringRef getName() final { return "hir.host.stream"; }
};
} // namespace hir::host

#include "host/HostDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "host/HostTypes.h.inc"

#define GET_OP_CLASSES
#include "host/HostOps.h.inc"

#endif // HIR_HOST_HOSTDIALECT_H
