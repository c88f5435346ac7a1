/*===- hir-c/Comm.h - C API of the comm dialect -------------------*- C -*-===*/
#ifndef HIR_C_COMM_H
#define HIR_C_COMM_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Comm, comm);

/* !comm.request */
MLIR_CAPI_EXPORTED bool hirTypeIsACommRequest(MlirType type);
MLIR_CAPI_EXPORTED MlirType hirCommRequestTypeGet(MlirContext ctx);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_COMM_H */
