//===- Destination.cpp - C API: the buffer an op writes -------------------===//
#include "hir-c/Destination.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

intptr_t hirDestinationOperand(MlirOperation op) {
  auto destination = dyn_cast<DestinationStyleOpInterface>(unwrap(op));
  if (!destination || destination.getNumDpsInits() != 1)
    return -1;
  return destination.getDpsInitOperand(0)->getOperandNumber();
}
