//===- Resources.h - side-effect resources shared by host and comm -*- C++ -*-===//
#ifndef HIR_COMMON_RESOURCES_H
#define HIR_COMMON_RESOURCES_H

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace hir {
/// The state "which stream is current". Every op that enqueues work (compute,
/// communication, waits) reads it and `set_current_stream` writes it, so no
/// pass can move work across a stream switch.
struct StreamResource : public mlir::SideEffects::Resource::Base<StreamResource> {
  llvm::StringRef getName() final { return "hir.stream"; }
};
} // namespace hir

#endif // HIR_COMMON_RESOURCES_H
