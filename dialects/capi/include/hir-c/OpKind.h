/*===- hir-c/OpKind.h - what kind of computation an op is ---------*- C -*-===*/
#ifndef HIR_C_OPKIND_H
#define HIR_C_OPKIND_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kind an op's traits (common/Traits.td) mark it as: the fusion and host
 * compute ops carry one of Elementwise, Reduction, Broadcast, Contraction;
 * every other op, and an unregistered one, is None. */
enum HirOpKind {
  HirOpKindNone = 0,
  HirOpKindElementwise = 1,
  HirOpKindReduction = 2,
  HirOpKindBroadcast = 3,
  HirOpKindContraction = 4,
};

/* The kind of `op`, a HirOpKind. */
MLIR_CAPI_EXPORTED int32_t hirOpKindOf(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_OPKIND_H */
