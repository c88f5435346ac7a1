//===- AxisMap.td - how an op maps operand axes to output axes -*- tablegen -*-===//

#ifndef HIR_COMMON_AXISMAP_TD
#define HIR_COMMON_AXISMAP_TD

include "mlir/IR/OpBase.td"

// How each operand's axes map to the axes of the op's output (a fusion op's
// result, a host op's destination), in the spirit of upstream MLIR's
// ShardingInterface and linalg's indexing maps: passes that move
// distributions or slices through an op (fusion-propagate-sharding,
// convert-fusion-to-host and its stream loops) ask the op, through the
// C API's hirOperandAxisMap and Rust's hir_dialects::axis_map.
def HIR_AxisMapOpInterface : OpInterface<"AxisMapOpInterface"> {
  let cppNamespace = "::hir";
  let methods = [
    InterfaceMethod<[{
        For each operand, for each of its axes, the output axis it maps to,
        or -1 for an axis the op reduces (a reduction's `axes`, a
        contraction's K). The default follows the op's kind trait
        (common/OpKind.h): elementwise ops map every axis to itself,
        reductions their kept axes in order, broadcasts each input axis to
        the output axis that is not new; contractions define their own.
        An operand axis of extent 1 mapped to a longer output axis is
        broadcast along it (a matmul's batch axes, as torch.matmul's): every
        index of the output axis reads index 0 of the operand's, so a pass
        slicing or distributing the output along that axis keeps the
        operand whole there (hir_dialects::broadcast_axes).
      }],
      "::llvm::SmallVector<::llvm::SmallVector<int64_t>>", "getOperandAxisMaps", (ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{ return ::hir::axisMapsByKind($_op); }]>,
  ];
}

#endif // HIR_COMMON_AXISMAP_TD
