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

/* The type `host.select` infers for a view of `source` at one index of
   `axis`; null if the axis is out of range or `source` is not a strided
   memref. */
MLIR_CAPI_EXPORTED MlirType hirHostSelectViewType(MlirType source, int64_t axis);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_HOST_H */
