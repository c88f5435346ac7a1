//===- Fusion.td - the fusion dialect: tensor programs over a device mesh -===//
//
// A fusion is a `func.func` over ranked tensors whose encoding says how each
// axis is distributed over a device mesh. Ops here are value-semantic; the
// lowering to `host` and `comm` bufferizes them.
//
//===----------------------------------------------------------------------===//

#ifndef HIR_FUSION_TD
#define HIR_FUSION_TD

include "mlir/IR/OpBase.td"
include "common/Traits.td"
include "common/AxisMap.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fusion_Dialect : Dialect {
  let name = "fusion";
  let cppNamespace = "::hir::fusion";
  let summary = "Tensor programs whose axes are distributed over a device mesh";
  let description = [{
    The user-facing stage of HIR. Tensors carry a `#fusion.dist` encoding that
    names a `fusion.mesh` and gives every axis a parallel type: `serial`,
    `didx` (one slice per device of the mesh) or `stream` (slices computed on a
    pool of streams). Types hold global shapes: a `didx` axis of extent E over
    a mesh of D devices (E a multiple of D) is split into D contiguous
    slices, one per device.
  }];
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Distribution
//===----------------------------------------------------------------------===//

def Fusion_ParallelType : I32EnumAttr<"ParallelType",
    "how one axis of a tensor is distributed", [
      I32EnumAttrCase<"serial", 0>,
      I32EnumAttrCase<"didx", 1>,
      I32EnumAttrCase<"stream", 2>,
      I32EnumAttrCase<"didy", 3>,
      I32EnumAttrCase<"didz", 4>
    ]> {
  let cppNamespace = "::hir::fusion";
  let genSpecializedAttr = 0;
}

def Fusion_DistAttr : AttrDef<Fusion_Dialect, "Dist",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "dist";
  let summary = "distribution of a tensor over a device mesh";
  let description = [{
    A tensor encoding: the mesh the tensor lives on and one parallel type per
    axis. At most one axis is each of `didx`, `didy`, `didz` and `stream`.
    A `didx` axis is split over the mesh's last axis (its only one on a 1-D
    mesh), a `didy` axis over the axis before, a `didz` axis over the one
    before that (the first axis of a 3-D mesh): an axis of extent E split
    over D devices holds E/D contiguous indices per device.

    A `stream` axis runs its producer as a loop over the axis: `stream` takes
    one index per iteration, `stream<k>` splits the axis into k chunks of E/k
    contiguous indices (nvFuser's outer split with the outer part `Stream`),
    chunk i computed by iteration i.

    ```mlir
    tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>
    tensor<1024x4096xbf16, #fusion.dist<@tp, [didx, serial]>>
    tensor<1024x4096xbf16, #fusion.dist<@tp, [stream<4>, serial]>>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::hir::fusion::ParallelType", "parallel type per axis">:$axes,
    DefaultValuedParameter<"int64_t", "0",
      "chunks of the stream axis; 0 when it takes one index per iteration">:$streamChunks
  );
  let builders = [
    AttrBuilderWithInferredContext<(ins "::mlir::FlatSymbolRefAttr":$mesh,
        "::llvm::ArrayRef<::hir::fusion::ParallelType>":$axes), [{
      return $_get(mesh.getContext(), mesh, axes, 0);
    }]>
  ];
  // Custom so that a rank-0 tensor's empty list `[]` round-trips.
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The axis of the given parallel type, if any.
    std::optional<unsigned> findAxis(::hir::fusion::ParallelType type) const;
    /// How many iterations the stream loop over axis `axis` (of extent
    /// `extent`) runs: its chunk count, or one per index.
    int64_t streamIterations(int64_t extent) const {
      return getStreamChunks() ? getStreamChunks() : extent;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Tensors hold floats or signless integers (i32, i64: signed, wrapping, in
// the runtime); the transcendental ops, div, cast, matmul and linear take
// floats only.
def Fusion_Tensor : StaticShapeTensorOf<[F16, BF16, F32, I32, I64]>;
def Fusion_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32]>;

class Fusion_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusion_Dialect, mnemonic, !listconcat(traits, [HIR_SizesFit])>;

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def Fusion_MeshOp : Fusion_Op<"mesh", [Symbol]> {
  let summary = "a named, ordered set of devices, of one, two or three axes";
  let description = [{
    Declares a mesh: the devices (global ranks) a distributed tensor is spread
    over, in order. Device ids are non-negative and distinct. A 2-D mesh is
    written as its rows; `didx` splits over its columns (within a row, the
    last axis), `didy` over its rows. `[[0, 1, 2, 3], [4, 5, 6, 7]]` is two
    data-parallel replicas of a 4-way tensor-parallel group: a `didx`
    collective runs within each row, a `didy` one within each column. A 3-D
    mesh is written as its planes of rows; `didz` splits over its planes. A
    collective over one mesh axis runs within each team of the devices that
    differ only along that axis.

    ```mlir
    fusion.mesh @tp = [0, 1, 2, 3]
    fusion.mesh @tp_dp = [[0, 1, 2, 3], [4, 5, 6, 7]]
    fusion.mesh @tp_sp_dp = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$devices,
                       OptionalAttr<DenseI64ArrayAttr>:$shape);
  let assemblyFormat = "$sym_name `=` custom<MeshDevices>($devices, $shape) attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getSize() { return getDevices().size(); }
  }];
}

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

def Fusion_SetOp : Fusion_Op<"set", [Pure, HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = "copy a tensor, possibly redistributing it";
  let description = [{
    The result holds the same values as the input; shapes and element types
    match, distributions may differ. A `set` whose distributions differ is a
    resharding, which lowers to communication.

    ```mlir
    %1 = fusion.set %0 : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
                      -> tensor<4x8xf32, #fusion.dist<@tp, [serial, serial]>>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Fusion_UnaryOp<string mnemonic, string doc, TypeConstraint tensor = Fusion_Tensor>
    : Fusion_Op<mnemonic, [Pure, HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = doc;
  let description = [{
    Elementwise; shapes and element types of input and result match.

    ```mlir
    %1 = fusion.}] # mnemonic # [{ %0 : tensor<8x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins tensor:$input);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  // One verifier for the class: an op added by its def line needs no C++.
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyElementwise(*this); }
  }];
}

def Fusion_NegOp : Fusion_UnaryOp<"neg", "elementwise negation">;
def Fusion_ExpOp : Fusion_UnaryOp<"exp", "elementwise exponential", Fusion_FloatTensor>;
def Fusion_TanhOp : Fusion_UnaryOp<"tanh", "elementwise hyperbolic tangent",
    Fusion_FloatTensor>;
def Fusion_AbsOp : Fusion_UnaryOp<"abs", "elementwise absolute value">;
def Fusion_ReluOp : Fusion_UnaryOp<"relu", "elementwise max(x, 0) (NaN stays NaN)">;
def Fusion_GeluOp : Fusion_UnaryOp<"gelu",
    "elementwise GELU, tanh approximation (torch's gelu(approximate='tanh'))",
    Fusion_FloatTensor>;
def Fusion_RsqrtOp : Fusion_UnaryOp<"rsqrt", "elementwise reciprocal square root",
    Fusion_FloatTensor>;

def Fusion_CastOp : Fusion_Op<"cast", [Pure, HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Shapes match; element types may differ, any of f32, f16, bf16, i32 and
    i64 to any other (torch's `tensor.to(dtype)`): to a float type, rounding
    to nearest even, once; from a float type to an integer one, truncating
    toward zero, with NaN giving 0 and values out of the integer's range its
    smallest or largest value (saturating; torch leaves these undefined);
    i64 to i32 keeps the low 32 bits (wraps).

    ```mlir
    %1 = fusion.cast %0 : tensor<8x16xf32> -> tensor<8x16xbf16>
    %2 = fusion.cast %0 : tensor<8x16xf32> -> tensor<8x16xi32>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Fusion_BinaryOp<string mnemonic, string doc, TypeConstraint tensor = Fusion_Tensor>
    : Fusion_Op<mnemonic, [Pure, HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = doc;
  let description = [{
    Elementwise over two tensors of the same shape and element type.

    ```mlir
    %2 = fusion.}] # mnemonic # [{ %0, %1 : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins tensor:$lhs, tensor:$rhs);
  let results = (outs tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyElementwise(*this); }
  }];
}

def Fusion_AddOp : Fusion_BinaryOp<"add", "elementwise addition">;
def Fusion_SubOp : Fusion_BinaryOp<"sub", "elementwise subtraction">;
def Fusion_MulOp : Fusion_BinaryOp<"mul", "elementwise multiplication">;
def Fusion_DivOp : Fusion_BinaryOp<"div", "elementwise division", Fusion_FloatTensor>;
def Fusion_MaxOp : Fusion_BinaryOp<"max", "elementwise maximum">;
def Fusion_MinOp : Fusion_BinaryOp<"min", "elementwise minimum">;

def Fusion_WhereOp : Fusion_Op<"where", [Pure, HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = "elementwise select by a mask";
  let description = [{
    `lhs` where `mask` is nonzero, `rhs` elsewhere: `torch.where(mask != 0,
    lhs, rhs)`. The mask is a tensor of the operands' element type (a NaN is
    nonzero, so it selects `lhs`; -0.0 is zero); mask, lhs, rhs and result
    have one shape and element type.

    ```mlir
    %r = fusion.where %m, %a, %b : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
                                -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$mask, Fusion_Tensor:$lhs, Fusion_Tensor:$rhs);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = [{
    $mask `,` $lhs `,` $rhs attr-dict `:` type($mask) `,` type($lhs) `,` type($rhs)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Fusion_TransposeOp : Fusion_Op<"transpose", [Pure, HIR_AxisMapOpInterface]> {
  let summary = "permute the axes of a tensor";
  let description = [{
    Result axis `i` is input axis `permutation[i]` (`torch.permute(input,
    permutation)`); the permutation lists every axis once, and the element
    types match. The distribution moves with the axes: result axis `i` has
    the parallel type of input axis `permutation[i]`, so a `didx` axis stays
    split wherever it goes and the transpose is local to each device.

    ```mlir
    %t = fusion.transpose %x [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::permutationAxisMaps(*this); }
  }];
}

def Fusion_ReshapeOp : Fusion_Op<"reshape", [Pure, HIR_AxisMapOpInterface]> {
  let summary = "the same elements, in row-major order, in another shape";
  let description = [{
    `torch.reshape`: input and result hold as many elements, of one element
    type. The axes fall into groups, the smallest runs of input and result
    axes with equal products: an axis alone in its group on both sides is
    kept whole and may be distributed (its parallel type moves with it). In
    a group the reshape merges or splits, the outermost axis may be
    distributed when it is so alike on both sides (`didx`, `didy` or `didz`,
    never `stream`) and the group's other axes are `serial`: an outer split,
    each device holding one contiguous run of the group's elements on both
    sides (fusion-verify-sharding checks that the device count divides both
    outer extents). A side left unannotated is inferred
    (fusion-propagate-sharding carries the outer split across). Any other
    distributed axis in a group is a located error.

    ```mlir
    %r = fusion.reshape %x : tensor<4x8x16xf32> -> tensor<4x128xf32>
    // [S, H] with H split over the devices, as [S, heads, dh] with the heads split.
    %h = fusion.reshape %y : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
                          -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::reshapeAxisMaps(*this); }
  }];
}

def Fusion_SliceOp : Fusion_Op<"slice", [Pure, HIR_AxisMapOpInterface]> {
  let summary = "a strided box of a tensor";
  let description = [{
    Result index `i` along axis `a` is input index `offsets[a] + i *
    strides[a]` (`input[o0 : o0 + n0 * s0 : s0, ...]` in PyTorch, `n` the
    result's extents): one offset (at least 0) and one stride (at least 1)
    per axis, the box inside the input, one element type. An axis taken
    whole (offset 0, stride 1, the input's extent) maps to itself and may be
    distributed, its parallel type moving with it; an axis the slice cuts is
    `serial` on both sides (a located error otherwise: a device's part of a
    cut axis would be another device's to send), so the slice is local to
    each device. Megatron's fused QKV projection, `[S, 3H]` with H split,
    reaches its three heads' views as `[S, heads, 3 dh]` (an outer split of
    the heads) and a slice of the serial last axis each.

    ```mlir
    %q = fusion.slice %qkv offsets [0, 0, 0] strides [1, 1, 1]
        : tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>>
       -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
    // Every other row.
    %e = fusion.slice %x offsets [1, 0] strides [2, 1] : tensor<8x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets `strides` $strides attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::sliceAxisMaps(*this); }
  }];
}

def Fusion_FillOp : Fusion_Op<"fill", [Pure, HIR_AxisMapOpInterface]> {
  let summary = "a tensor whose every element is one constant";
  let description = [{
    `torch.full(shape, value)`: `value` rounded to the result's element type
    (`torch.zeros` is `fill 0.0`); an integer result's value is an integer
    of its type (`fill 7.0 : tensor<8xi32>`). The result may be distributed like any
    tensor; each device fills its own part.

    ```mlir
    %z = fusion.fill 0.0 : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Fusion_IotaOp : Fusion_Op<"iota", [Pure, HIR_AxisMapOpInterface]> {
  let summary = "each element's index along one axis";
  let description = [{
    `result[i0, ..., in] = i_axis`, rounded to the result's element type
    (exact, wrapping, in an integer type):
    `torch.arange(E)` along `axis`, repeated along the other axes. The index
    is the global one: where `axis` is split over devices, each device's part
    holds the indices of its slice (device d of D holds d*E/D, ...).

    ```mlir
    %i = fusion.iota 1 : tensor<4x8xf32>   // every row is 0, 1, ..., 7
    ```
  }];
  let arguments = (ins I64Attr:$axis);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Fusion_ReductionOp<string mnemonic, string doc>
    : Fusion_Op<mnemonic, [Pure, HIR_Reduction, HIR_AxisMapOpInterface]> {
  let summary = doc;
  let description = [{
    Reduces the listed axes; they are dropped from the result. Axes are
    distinct and in range. Reducing a `didx` axis leaves a partial result on
    every device, which the lowering completes with an allreduce (or a
    reduce-scatter when the result is `didx`-sharded).

    ```mlir
    %1 = fusion.}] # mnemonic # [{ %0 [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$input $axes attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Fusion_SumOp : Fusion_ReductionOp<"sum", "sum over axes">;
def Fusion_AmaxOp : Fusion_ReductionOp<"amax", "maximum over axes">;

def Fusion_BroadcastOp : Fusion_Op<"broadcast", [Pure, HIR_Broadcast, HIR_AxisMapOpInterface]> {
  let summary = "insert new axes, repeating the input along them";
  let description = [{
    `axes` are the positions, in the result, of the new axes; the extents come
    from the result type. The other axes of the result are the input's, in
    order.

    ```mlir
    %1 = fusion.broadcast %0 [0] : tensor<16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Fusion_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Fusion_Tensor:$result);
  let assemblyFormat = "$input $axes attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Fusion_MatmulOp : Fusion_Op<"matmul", [Pure, HIR_Contraction, HIR_AxisMapOpInterface]> {
  let summary = "matrix product, batched over leading axes";
  let description = [{
    `lhs` is `[B1..., M, K]`, `rhs` is `[B2..., K, N]` (or `[K, N]`), the
    result is `[B..., M, N]`; all of one float type (accumulation is in
    f32). The batch axes broadcast as `torch.matmul`'s: B1 and B2 are aligned
    from the right, each pair is equal or one of them is 1 or missing, and B
    takes the larger extent of each pair. An operand's batch axis of extent 1
    is read at index 0 for every index of the result's axis (never copied).

    ```mlir
    %c = fusion.matmul %a, %b : tensor<4x256x1024xbf16>, tensor<1024x2048xbf16>
                             -> tensor<4x256x2048xbf16>
    // A per-device weight shard beside a stream axis: B's unit axis is
    // broadcast along A's axis 1.
    %p = fusion.matmul %a, %w : tensor<4x4x64x32xf32>, tensor<4x1x32x16xf32>
                             -> tensor<4x4x64x16xf32>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$lhs, Fusion_FloatTensor:$rhs);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::matmulAxisMaps(*this); }
  }];
}

def Fusion_LinearOp : Fusion_Op<"linear", [Pure, HIR_Contraction, HIR_AxisMapOpInterface]> {
  let summary = "input times transposed weight, plus an optional bias";
  let description = [{
    `input` is `[B..., K]`, `weight` is `[N, K]`, `bias` is `[N]`, the result
    is `[B..., N]`: `result = input @ weight^T + bias`, as `torch.nn.Linear`;
    float types only.

    ```mlir
    %y = fusion.linear %x, %w, %b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>
                                 -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$input, Fusion_FloatTensor:$weight,
                       Optional<Fusion_FloatTensor>:$bias);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::linearAxisMaps(*this); }
  }];
}

def Fusion_AttentionOp : Fusion_Op<"attention", [Pure, HIR_AxisMapOpInterface]> {
  let summary = "scaled dot-product attention, batched over leading axes";
  let description = [{
    `q` is `[B..., Sq, D]`, `k` is `[B..., Sk, D]`, `v` is `[B..., Sk, Dv]`,
    the result is `[B..., Sq, Dv]`: zero or more batch (or head) axes B,
    identical in all four (no broadcasting); all of one float type.
    For each batch index, the scores `q k^T * scale` (`[Sq, Sk]`), plus the
    optional `mask [Sq, Sk]` (the same for every batch index), go through a
    softmax over the keys, and the result is the probabilities times `v`
    (`torch.nn.functional.scaled_dot_product_attention` with a float
    `attn_mask`). `scale` defaults to `1 / sqrt(D)`; `causal` hides key `j`
    from query `i` where `j > i` (top-left aligned, as torch's `is_causal`);
    a query that sees no key gets zeros.

    Distribution: a batch axis may be split over devices (heads over a
    tensor-parallel mesh) or `stream`, alike in `q`, `k`, `v` and the
    result (`stream` places nothing: it compares as `serial`); the Sq, Sk, D
    and Dv axes are `serial`, and so is every axis of the mask, which every
    device reads whole. The op is local to each device.

    ```mlir
    %o = fusion.attention %q, %k, %v causal
        : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16>
        -> tensor<8x128x64xbf16>
    // Heads split over @tp, an additive mask and an explicit scale.
    %p = fusion.attention %q, %k, %v, %m scale 0.125
        : tensor<8x16x64xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
          tensor<8x32x64xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
          tensor<8x32x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>,
          tensor<16x32xf32, #fusion.dist<@tp, [serial, serial]>>
        -> tensor<8x16x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$q, Fusion_FloatTensor:$k, Fusion_FloatTensor:$v,
                       Optional<Fusion_FloatTensor>:$mask, OptionalAttr<F64Attr>:$scale,
                       UnitAttr:$causal);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`,` $mask^)? (`scale` $scale^)? (`causal` $causal^)? attr-dict
    `:` type($q) `,` type($k) `,` type($v) (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::attentionAxisMaps(*this); }
  }];
}

#endif // HIR_FUSION_TD
