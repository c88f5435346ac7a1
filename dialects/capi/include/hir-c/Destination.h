/*===- hir-c/Destination.h - the buffer an op writes --------------*- C -*-===*/
#ifndef HIR_C_DESTINATION_H
#define HIR_C_DESTINATION_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operand number of the one buffer `op` writes, if `op` is in
 * destination-passing style (DestinationStyleOpInterface: the host compute
 * ops and the comm collectives) with a single init; -1 otherwise. */
MLIR_CAPI_EXPORTED intptr_t hirDestinationOperand(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_DESTINATION_H */
