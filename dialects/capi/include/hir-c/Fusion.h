/*===- hir-c/Fusion.h - C API of the fusion dialect ---------------*- C -*-===*/
#ifndef HIR_C_FUSION_H
#define HIR_C_FUSION_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Fusion, fusion);

/* How one axis of a tensor is distributed; the values of fusion's ParallelType. */
enum HirFusionParallelType {
  HirFusionParallelTypeSerial = 0,
  HirFusionParallelTypeDIDx = 1,
  HirFusionParallelTypeStream = 2,
  HirFusionParallelTypeDIDy = 3,
  HirFusionParallelTypeDIDz = 4,
};

/* #fusion.dist<@mesh, [axes...]>; `streamChunks` is k of a `stream<k>` axis,
 * 0 for a `stream` axis that takes one index per iteration (or none). */
MLIR_CAPI_EXPORTED bool hirAttributeIsAFusionDist(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute hirFusionDistAttrGet(MlirContext ctx, MlirStringRef mesh,
                                                      intptr_t rank, const int32_t *axes,
                                                      int64_t streamChunks);
MLIR_CAPI_EXPORTED MlirStringRef hirFusionDistAttrGetMesh(MlirAttribute attr);
MLIR_CAPI_EXPORTED intptr_t hirFusionDistAttrGetRank(MlirAttribute attr);
MLIR_CAPI_EXPORTED int32_t hirFusionDistAttrGetAxis(MlirAttribute attr, intptr_t axis);
MLIR_CAPI_EXPORTED int64_t hirFusionDistAttrGetStreamChunks(MlirAttribute attr);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_FUSION_H */
