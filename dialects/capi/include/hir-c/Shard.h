/*===- hir-c/Shard.h - what convert-shard-to-fusion reads of shard ops -*- C -*-===*/
#ifndef HIR_C_SHARD_H
#define HIR_C_SHARD_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of tensor axes the `split_axes` of `op`, a `shard.sharding`,
 * names (tensor axes past it are not split), or -1 if `op` is not a
 * `shard.sharding`. The C API has no accessor for shard's attributes. */
MLIR_CAPI_EXPORTED intptr_t hirShardShardingRank(MlirOperation op);

/* The grid axes that tensor axis `axis` of `op`, a `shard.sharding`, is split
 * along, in order, written to `gridAxes` (at most `capacity` entries).
 * Returns their number (possibly more than `capacity`; 0: not split), or -1
 * if `op` is not a `shard.sharding` or `axis` is not below its rank. */
MLIR_CAPI_EXPORTED intptr_t hirShardShardingSplitAxes(MlirOperation op, intptr_t axis,
                                                      int16_t *gridAxes, intptr_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* HIR_C_SHARD_H */
