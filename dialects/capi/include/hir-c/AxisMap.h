/*===- hir-c/AxisMap.h - how an op maps operand axes to output axes -*- C -*-===*/
#ifndef HIR_C_AXISMAP_H
#define HIR_C_AXISMAP_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For operand `operand` of `op`, the output axis each of its axes maps to,
 * -1 for an axis the op reduces (AxisMapOpInterface, common/AxisMap.td;
 * an axis of extent 1 mapped to a longer output axis is broadcast along it),
 * written to `axes` (at most `capacity` entries). Returns the operand's
 * number of axes (possibly more than `capacity`), or -1 if `op` has no axis
 * map or no such operand. */
MLIR_CAPI_EXPORTED intptr_t hirOperandAxisMap(MlirOperation op, intptr_t operand, int64_t *axes,
                                              intptr_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_AXISMAP_H */
