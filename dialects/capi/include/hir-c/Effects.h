/*===- hir-c/Effects.h - whether an op does anything --------------*- C -*-===*/
#ifndef HIR_C_EFFECTS_H
#define HIR_C_EFFECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether `op` could be erased without changing what the program does: its
 * results are unused and it has no memory effects but reads, as its
 * MemoryEffectOpInterface (and, for region ops with RecursiveMemoryEffects,
 * its body's ops) says (MLIR's isOpTriviallyDead). */
MLIR_CAPI_EXPORTED bool hirIsOpTriviallyDead(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_EFFECTS_H */
