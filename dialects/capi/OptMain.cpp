//===- OptMain.cpp - the mlir-opt driver over HIR's dialects --------------===//
#include "hir-c/Registration.h"

#include "mlir/CAPI/IR.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int hirOptMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  hirRegisterAllDialects(wrap(&registry));
  hirRegisterUpstreamPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "HIR optimizer driver\n", registry));
}
