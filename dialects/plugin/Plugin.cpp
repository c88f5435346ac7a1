//===- Plugin.cpp - HIR's dialects as a plugin for stock mlir-opt ---------===//
//
// Built against libMLIR.so: `mlir-opt --load-dialect-plugin=libHIRDialects.so`
// parses, verifies and prints fusion, host and comm IR.
//
//===----------------------------------------------------------------------===//
#include "comm/CommDialect.h"
#include "fusion/FusionDialect.h"
#include "host/HostDialect.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "HIRDialects", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<hir::fusion::FusionDialect, hir::host::HostDialect,
                             hir::comm::CommDialect>();
          }};
}
