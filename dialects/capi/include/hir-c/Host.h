/*===- hir-c/Host.h - C API of the host dialect -------------------*- C -*-===*/
#ifndef HIR_C_HOST_H
#define HIR_C_HOST_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Host, host);

/* !host.stream */
MLIR_CAPI_EXPORTED bool hirTypeIsAHostStream(MlirType type);
MLIR_CAPI_EXPORTED MlirType hirHostStreamTypeGet(MlirContext ctx);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_HOST_H */
