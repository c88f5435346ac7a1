/*===- hir-c/Loops.h - whether an op is a loop ---------------------*- C -*-===*/
#ifndef HIR_C_LOOPS_H
#define HIR_C_LOOPS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether `op`'s body runs once per iteration: an op with
 * LoopLikeOpInterface (scf.for, scf.while, scf.parallel, scf.forall,
 * affine.for, ...) or a host.stream_for. */
MLIR_CAPI_EXPORTED bool hirOpIsLoop(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_LOOPS_H */
