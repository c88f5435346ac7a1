//===- Host.td - the host dialect: buffers, streams and compute on buffers -===//
//
// The host program: what every rank runs. Buffers are memrefs holding the
// local shard; compute ops write into preallocated outputs (destination-passing
// style) and run on the current stream.
//
//===----------------------------------------------------------------------===//

#ifndef HIR_HOST_TD
#define HIR_HOST_TD

include "mlir/IR/OpBase.td"
include "common/Traits.td"
include "common/AxisMap.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"

def Host_Dialect : Dialect {
  let name = "host";
  let cppNamespace = "::hir::host";
  let summary = "Buffers, CUDA streams and compute on buffers, per rank";
  let description = [{
    Buffers are memrefs. Work is enqueued on the current stream; streams come
    from a fixed pool and are ordered against each other by `sync_stream`
    (an event record on one, a wait on the other).
  }];
  let useDefaultTypePrinterParser = 1;
  // The dialect defines no discardable attribute: the verifier rejects any
  // `host.`-prefixed one (state passes between passes in the IR's structure,
  // e.g. host.stream_for, not in marks).
  let hasOperationAttrVerify = 1;
}

def Host_StreamResource : Resource<"::hir::StreamResource">;

def Host_StreamType : TypeDef<Host_Dialect, "Stream"> {
  let mnemonic = "stream";
  let summary = "a handle to a stream of the runtime";
  let description = [{
    ```mlir
    %s = host.get_current_stream : !host.stream
    ```
  }];
}

// Buffers hold floats or signless integers (i32, i64: signed, wrapping, in
// the runtime); the transcendental ops, div, cast, matmul, linear and fused
// take floats only.
def Host_Buffer : MemRefOf<[F16, BF16, F32, I32, I64]>;
def Host_FloatBuffer : MemRefOf<[F16, BF16, F32]>;

// An activation a GEMM applies in its epilogue: to the f32 product plus
// bias, before the one rounding to the output's element type (cuBLASLt's
// GELU epilogues).
def Host_Activation : I32EnumAttr<"Activation", "an activation in a GEMM's epilogue", [
    I32EnumAttrCase<"gelu", 0>
  ]> {
  let cppNamespace = "::hir::host";
}

class Host_Op<string mnemonic, list<Trait> traits = []>
    : Op<Host_Dialect, mnemonic, !listconcat(traits, [HIR_SizesFit])>;

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def Host_AllocOp : Host_Op<"alloc"> {
  let summary = "allocate a buffer";
  let description = [{
    A buffer of static shape with the identity layout, from the runtime's
    caching allocator: the same allocation site and size give the same buffer
    on every call.

    ```mlir
    %g = host.alloc : memref<4x4x256x1024xbf16>
    ```
  }];
  let results = (outs Res<Host_Buffer, "", [MemAlloc<DefaultResource>]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Host_DeallocOp : Host_Op<"dealloc"> {
  let summary = "free a buffer from host.alloc";
  let description = [{
    ```mlir
    host.dealloc %g : memref<4x4x256x1024xbf16>
    ```
  }];
  let arguments = (ins Arg<Host_Buffer, "", [MemFree<DefaultResource>]>:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
}

def Host_SelectOp : Host_Op<"select", [Pure, InferTypeOpAdaptor]> {
  let summary = "rank-reducing view of a buffer at one index of one axis";
  let description = [{
    The slice `source[..., index, ...]` along `axis`, as a view with that axis
    dropped. The result type keeps the source's strides and has a dynamic
    offset: the op infers it (`InferTypeOpInterface`), and every pass asks
    the op for it. A constant index must be in range.

    ```mlir
    %ai = host.select %a[0][%i] : memref<4x1x256x1024xbf16>
        to memref<1x256x1024xbf16, strided<[262144, 1024, 1], offset: ?>>
    ```
  }];
  let arguments = (ins Host_Buffer:$source, I64Attr:$axis, Index:$index);
  let results = (outs Host_Buffer:$result);
  let assemblyFormat = [{
    $source `[` $axis `]` `` `[` $index `]` attr-dict `:` type($source) `to` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The type of the view of `source` at one index of `axis`; null if the
    /// axis is out of range or the source has no strided layout.
    static ::mlir::MemRefType inferResultType(::mlir::MemRefType source, int64_t axis);
  }];
}

//===----------------------------------------------------------------------===//
// Streams and ranks
//===----------------------------------------------------------------------===//

def Host_GetCurrentStreamOp : Host_Op<"get_current_stream",
    [MemoryEffects<[MemRead<Host_StreamResource>]>]> {
  let summary = "the stream work is enqueued on now";
  let description = [{
    ```mlir
    %main = host.get_current_stream : !host.stream
    ```
  }];
  let results = (outs Host_StreamType:$stream);
  let assemblyFormat = "attr-dict `:` type($stream)";
}

def Host_SetCurrentStreamOp : Host_Op<"set_current_stream",
    [MemoryEffects<[MemWrite<Host_StreamResource>]>]> {
  let summary = "make a stream the current one";
  let description = [{
    ```mlir
    host.set_current_stream %s
    ```
  }];
  let arguments = (ins Host_StreamType:$stream);
  let assemblyFormat = "$stream attr-dict";
}

def Host_StreamFromPoolOp : Host_Op<"stream_from_pool", [Pure]> {
  let summary = "stream `index mod pool size` of the stream pool";
  let description = [{
    ```mlir
    %s = host.stream_from_pool %i : !host.stream
    ```
  }];
  let arguments = (ins Index:$index);
  let results = (outs Host_StreamType:$stream);
  let assemblyFormat = "$index attr-dict `:` type($stream)";
}

def Host_SyncStreamOp : Host_Op<"sync_stream",
    [MemoryEffects<[MemRead<Host_StreamResource>, MemWrite<Host_StreamResource>]>]> {
  let summary = "the current stream waits for the work enqueued so far on a stream";
  let description = [{
    An event recorded on `stream` and waited for on the current stream; the
    host does not block.

    ```mlir
    host.sync_stream %s
    ```
  }];
  let arguments = (ins Host_StreamType:$stream);
  let assemblyFormat = "$stream attr-dict";
}

def Host_StreamForOp : Host_Op<"stream_for",
    [SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "a loop whose iterations run on the pool's streams, forked from and joined into a stream";
  let description = [{
    Iteration `i` of `lower` to `upper` by `step` runs its body with the pool
    stream `i` (`host.stream_from_pool i`, or `(i mod streams)` when
    `streams` is given; the runtime maps it onto its pool modulo the pool's
    size) as the current stream. The body's block arguments are the index and
    that stream. Around the iterations, with `caller` the stream given after
    `from`:

    - fork: before iteration 0, every pool stream an iteration uses waits for
      the work enqueued so far on `caller` (all the waits before any
      iteration's work, so that no iteration's work waits on a sync queued
      behind another iteration's; a pool stream that several iterations use
      waits once);
    - join: at the end of each iteration `caller` waits for that iteration's
      stream and becomes the current stream again. Only a body that uses
      `caller` can tell this from one join after the last iteration, which
      is what `host-lower-stream-for` makes of the others (each pool stream
      runs its iterations in order).

    Work after the op, enqueued on `caller`, is therefore ordered after every
    iteration; the iterations are not ordered against each other.
    The op's memory effects are its body's (`RecursiveMemoryEffects`): a
    loop whose iterations do nothing but take views does nothing, since
    every pool stream's work is joined where it was forked.
    `convert-fusion-to-host` makes one per stream-parallel op,
    `host-stream-parallelize` fuses them, `host-lower-stream-for` lowers it to
    `scf.for` loops (the fork loop, the work loop, and the join loop after
    it, or a join at the end of each iteration where the body uses
    `caller`).

    ```mlir
    %main = host.get_current_stream : !host.stream
    host.stream_for %c0 to %c4 step %c1 from %main {
    ^bb0(%i: index, %s: !host.stream):
      %ai = host.select %a[0][%i] : memref<4x8xf32>
          to memref<8xf32, strided<[1], offset: ?>>
      host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>)
               outs(%ai : memref<8xf32, strided<[1], offset: ?>>)
    }
    ```

    The body's last `host.set_current_stream` at its top level, if any, makes
    the iteration's stream current again: the join waits for that stream
    only, so work left on another stream would escape it.
  }];
  let arguments = (ins Index:$lower, Index:$upper, Index:$step,
                       Host_StreamType:$caller, Optional<Index>:$streams);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $lower `to` $upper `step` $step `from` $caller (`streams` $streams^)? $body attr-dict
  }];
  let hasVerifier = 1;
}

def Host_YieldOp : Host_Op<"yield", [Pure, Terminator, HasParent<"StreamForOp">]> {
  let summary = "the end of a host.stream_for iteration";
  let description = [{
    Implicit in the custom form of `host.stream_for`.

    ```mlir
    host.yield
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Host_RankOp : Host_Op<"rank", [Pure]> {
  let summary = "the global rank of this process";
  let description = [{
    ```mlir
    %r = host.rank : index
    ```
  }];
  let results = (outs Index:$rank);
  let assemblyFormat = "attr-dict `:` type($rank)";
}

def Host_NumDevicesOp : Host_Op<"num_devices", [Pure]> {
  let summary = "the number of ranks of the run";
  let description = [{
    ```mlir
    %n = host.num_devices : index
    ```
  }];
  let results = (outs Index:$count);
  let assemblyFormat = "attr-dict `:` type($count)";
}

//===----------------------------------------------------------------------===//
// Compute on buffers (destination-passing style, on the current stream)
//===----------------------------------------------------------------------===//

// Destination-passing style: `output` is the buffer the op writes, the one
// DPS init every pass asks for (`hirDestinationOperand`).
class Host_ComputeOp<string mnemonic, list<Trait> traits = []>
    : Host_Op<mnemonic, !listconcat(traits,
        [MemoryEffects<[MemRead<Host_StreamResource>]>, DestinationStyleOpInterface])> {
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
  }];
}

def Host_CopyOp : Host_ComputeOp<"copy", [HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = "copy a buffer into another of the same shape and element type";
  let description = [{
    ```mlir
    host.copy ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
    ```
  }];
  let arguments = (ins Arg<Host_Buffer, "", [MemRead]>:$input,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
}

class Host_UnaryOp<string mnemonic, string doc, TypeConstraint buffer = Host_Buffer>
    : Host_ComputeOp<mnemonic, [HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = doc;
  let description = [{
    Elementwise; input and output have the same shape.

    ```mlir
    host.}] # mnemonic # [{ ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>)
    ```
  }];
  let arguments = (ins Arg<buffer, "", [MemRead]>:$input,
                       Arg<buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  // One verifier for the class: an op added by its def line needs no C++.
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyUnary(*this); }
  }];
}

def Host_NegOp : Host_UnaryOp<"neg", "elementwise negation">;
def Host_ExpOp : Host_UnaryOp<"exp", "elementwise exponential", Host_FloatBuffer>;
def Host_TanhOp : Host_UnaryOp<"tanh", "elementwise hyperbolic tangent", Host_FloatBuffer>;
def Host_AbsOp : Host_UnaryOp<"abs", "elementwise absolute value">;
def Host_ReluOp : Host_UnaryOp<"relu", "elementwise max(x, 0) (NaN stays NaN)">;
def Host_GeluOp : Host_UnaryOp<"gelu",
    "elementwise GELU, tanh approximation (torch's gelu(approximate='tanh'))", Host_FloatBuffer>;
def Host_RsqrtOp : Host_UnaryOp<"rsqrt", "elementwise reciprocal square root",
    Host_FloatBuffer>;
def Host_CastOp : Host_UnaryOp<"cast", "elementwise conversion to the output's element type",
    Host_Buffer> {
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyUnary(*this, /*sameElementType=*/false);
    }
  }];
}

class Host_BinaryOp<string mnemonic, string doc, TypeConstraint buffer = Host_Buffer>
    : Host_ComputeOp<mnemonic, [HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = doc;
  let description = [{
    Elementwise over two buffers; all three have one shape and element type.

    ```mlir
    host.}] # mnemonic # [{ ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
    ```
  }];
  let arguments = (ins Arg<buffer, "", [MemRead]>:$lhs,
                       Arg<buffer, "", [MemRead]>:$rhs,
                       Arg<buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    `ins` `(` $lhs `,` $rhs `:` type($lhs) `,` type($rhs) `)`
    `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyBinary(*this); }
  }];
}

def Host_AddOp : Host_BinaryOp<"add", "elementwise addition">;
def Host_SubOp : Host_BinaryOp<"sub", "elementwise subtraction">;
def Host_MulOp : Host_BinaryOp<"mul", "elementwise multiplication">;
def Host_DivOp : Host_BinaryOp<"div", "elementwise division", Host_FloatBuffer>;
def Host_MaxOp : Host_BinaryOp<"max", "elementwise maximum">;
def Host_MinOp : Host_BinaryOp<"min", "elementwise minimum">;

def Host_WhereOp : Host_ComputeOp<"where", [HIR_Elementwise, HIR_AxisMapOpInterface]> {
  let summary = "elementwise select by a mask into a buffer";
  let description = [{
    `lhs` where `mask` is nonzero, `rhs` elsewhere (as `fusion.where`); all
    four buffers have one shape and element type.

    ```mlir
    host.where ins(%m, %a, %b : memref<8xf32>, memref<8xf32>, memref<8xf32>)
               outs(%c : memref<8xf32>)
    ```
  }];
  let arguments = (ins Arg<Host_Buffer, "", [MemRead]>:$mask,
                       Arg<Host_Buffer, "", [MemRead]>:$lhs,
                       Arg<Host_Buffer, "", [MemRead]>:$rhs,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    `ins` `(` $mask `,` $lhs `,` $rhs `:` type($mask) `,` type($lhs) `,` type($rhs) `)`
    `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def Host_TransposeOp : Host_ComputeOp<"transpose", [HIR_AxisMapOpInterface]> {
  let summary = "write the input with its axes permuted";
  let description = [{
    Output axis `i` is input axis `permutation[i]` (as `fusion.transpose`);
    extents and element types agree accordingly.

    ```mlir
    host.transpose [1, 0] ins(%a : memref<8x16xf32>) outs(%b : memref<16x8xf32>)
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$permutation,
                       Arg<Host_Buffer, "", [MemRead]>:$input,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $permutation `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::permutationAxisMaps(*this); }
  }];
}

def Host_ReshapeOp : Host_ComputeOp<"reshape", [HIR_AxisMapOpInterface]> {
  let summary = "write the input's elements, in row-major order, in the output's shape";
  let description = [{
    As `fusion.reshape`: input and output hold as many elements, of one
    element type.

    ```mlir
    host.reshape ins(%a : memref<4x8x16xf32>) outs(%b : memref<4x128xf32>)
    ```
  }];
  let arguments = (ins Arg<Host_Buffer, "", [MemRead]>:$input,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::reshapeAxisMaps(*this); }
  }];
}

def Host_FillOp : Host_ComputeOp<"fill", [HIR_AxisMapOpInterface]> {
  let summary = "write one constant into every element of a buffer";
  let description = [{
    `value` rounded to the output's element type (as `fusion.fill`); an
    integer output's value is an integer of its type.

    ```mlir
    host.fill 0.0 outs(%b : memref<8x16xf32>)
    ```
  }];
  let arguments = (ins F64Attr:$value, Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = "$value `outs` `(` $output `:` type($output) `)` attr-dict";
  let hasVerifier = 1;
}

def Host_IotaOp : Host_ComputeOp<"iota", [HIR_AxisMapOpInterface]> {
  let summary = "write each element's index along one axis, from an offset";
  let description = [{
    `output[..., i, ...] = offset + i`, `i` the index along `axis`, rounded
    to the output's element type. `offset` is the global index of the
    buffer's first element along `axis`: 0 for a whole axis, the start of
    this device's slice for a split one (as `fusion.iota` lowers).

    ```mlir
    host.iota 1, %offset outs(%b : memref<4x8xf32>)
    ```
  }];
  let arguments = (ins I64Attr:$axis, Index:$offset,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = "$axis `,` $offset `outs` `(` $output `:` type($output) `)` attr-dict";
  let hasVerifier = 1;
}

class Host_ReductionOp<string mnemonic, string doc>
    : Host_ComputeOp<mnemonic, [HIR_Reduction, HIR_AxisMapOpInterface]> {
  let summary = doc;
  let description = [{
    Reduces the listed axes of the input into the output, which has them
    dropped.

    ```mlir
    host.}] # mnemonic # [{ [1] ins(%a : memref<4x8x16xf32>) outs(%b : memref<4x16xf32>)
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$axes,
                       Arg<Host_Buffer, "", [MemRead]>:$input,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $axes `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def Host_SumOp : Host_ReductionOp<"sum", "sum over axes">;
def Host_AmaxOp : Host_ReductionOp<"amax", "maximum over axes">;

def Host_BroadcastOp : Host_ComputeOp<"broadcast", [HIR_Broadcast, HIR_AxisMapOpInterface]> {
  let summary = "write the input repeated along new axes of the output";
  let description = [{
    `axes` are the positions of the new axes in the output.

    ```mlir
    host.broadcast [0] ins(%a : memref<16xf32>) outs(%b : memref<8x16xf32>)
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$axes,
                       Arg<Host_Buffer, "", [MemRead]>:$input,
                       Arg<Host_Buffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $axes `ins` `(` $input `:` type($input) `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
}

def Host_MatmulOp : Host_ComputeOp<"matmul", [HIR_Contraction, HIR_AxisMapOpInterface]> {
  let summary = "matrix product into a buffer";
  let description = [{
    `lhs` is `[B1..., M, K]`, `rhs` is `[B2..., K, N]` (or `[K, N]`),
    `output` is `[B..., M, N]` with B the broadcast of B1 and B2 (as
    `fusion.matmul`'s: aligned from the right, each pair equal or one of them
    1 or missing); one element type, accumulation in f32. A batch axis of
    extent 1 is read with stride 0, never copied. A `[K]` lhs with a `[K, N]`
    rhs gives an `[N]` output (a row of a matmul sliced along M).

    ```mlir
    host.matmul ins(%a, %b : memref<256x1024xbf16>, memref<1024x2048xbf16>)
                outs(%c : memref<256x2048xbf16>)
    ```

    With `accumulate`, `output += lhs x rhs`: the product is added to the
    output's values in f32 and the sum rounded once to the element type.

    ```mlir
    host.matmul ins(%a, %b : memref<256x1024xbf16>, memref<1024x2048xbf16>)
                outs(%c : memref<256x2048xbf16>) {accumulate}
    ```

    With `activation gelu`, the activation is applied to each f32 element of
    the product before its one rounding (the GEMM's epilogue); not with
    `accumulate`.

    ```mlir
    host.matmul activation gelu ins(%a, %b : memref<256x1024xbf16>, memref<1024x2048xbf16>)
                outs(%c : memref<256x2048xbf16>)
    ```
  }];
  // The output is read too when `accumulate` is set: declaring the read
  // always keeps the effects correct for both forms (ODS effects cannot
  // depend on an attribute).
  let arguments = (ins Arg<Host_FloatBuffer, "", [MemRead]>:$lhs,
                       Arg<Host_FloatBuffer, "", [MemRead]>:$rhs,
                       Arg<Host_FloatBuffer, "", [MemRead, MemWrite]>:$output,
                       UnitAttr:$accumulate,
                       OptionalAttr<Host_Activation>:$activation);
  let assemblyFormat = [{
    (`activation` $activation^)?
    `ins` `(` $lhs `,` $rhs `:` type($lhs) `,` type($rhs) `)`
    `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::matmulAxisMaps(*this); }
  }];
}

def Host_LinearOp : Host_ComputeOp<"linear", [HIR_Contraction, HIR_AxisMapOpInterface]> {
  let summary = "input times transposed weight plus optional bias, into a buffer";
  let description = [{
    `input` is `[B..., K]`, `weight` is `[N, K]`, `bias` is `[N]`, `output` is
    `[B..., N]`. With `activation gelu`, the activation is applied to each
    f32 element of the product plus bias before its one rounding to the
    element type (the GEMM's epilogue, cuBLASLt's `GELU_BIAS`).

    ```mlir
    host.linear ins(%x, %w, %b : memref<8x64xf32>, memref<32x64xf32>, memref<32xf32>)
                outs(%y : memref<8x32xf32>)
    host.linear activation gelu ins(%x, %w, %b : memref<8x64xbf16>, memref<32x64xbf16>,
                                    memref<32xbf16>)
                outs(%y : memref<8x32xbf16>)
    ```

    With `accumulate` (and no bias), `output += input x weight^T`: the
    product is added to the output's values in f32 and the sum rounded once
    (the GEMM+RS chain's accumulating GEMMs, as `host.matmul`'s).
  }];
  // The output is read too when `accumulate` is set (see host.matmul).
  let arguments = (ins Arg<Host_FloatBuffer, "", [MemRead]>:$input,
                       Arg<Host_FloatBuffer, "", [MemRead]>:$weight,
                       Arg<Optional<Host_FloatBuffer>, "", [MemRead]>:$bias,
                       Arg<Host_FloatBuffer, "", [MemRead, MemWrite]>:$output,
                       UnitAttr:$accumulate,
                       OptionalAttr<Host_Activation>:$activation);
  let assemblyFormat = [{
    (`activation` $activation^)?
    `ins` `(` $input `,` $weight (`,` $bias^)? `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::linearAxisMaps(*this); }
  }];
}

def Host_AttentionOp : Host_ComputeOp<"attention", [HIR_AxisMapOpInterface]> {
  let summary = "scaled dot-product attention into a buffer";
  let description = [{
    As `fusion.attention` on buffers: `q [B..., Sq, D]`, `k [B..., Sk, D]`,
    `v [B..., Sk, Dv]` and the optional `mask [Sq, Sk]` (added to the scaled
    scores of every batch index) give `output [B..., Sq, Dv]`, the softmax
    over the keys of `q k^T * scale (+ mask)` times `v`; one float element
    type. `scale` is explicit here (`convert-fusion-to-host` resolves
    fusion's default, `1 / sqrt(D)`); `causal` hides key `j` from query `i`
    where `j > i`, and a query that sees no key gets zeros.
    `convert-host-to-llvm` lowers it to one call of `hir_rt_attention_<T>`
    (`hir_rt_attention_mask_<T>` with a mask).

    ```mlir
    host.attention scale 0.125 causal
        ins(%q, %k, %v : memref<4x128x64xbf16>, memref<4x128x64xbf16>, memref<4x128x64xbf16>)
        outs(%o : memref<4x128x64xbf16>)
    host.attention scale 0.25 ins(%q, %k, %v, %m : memref<16x16xf32>, memref<32x16xf32>,
                                  memref<32x8xf32>, memref<16x32xf32>)
        outs(%o : memref<16x8xf32>)
    ```
  }];
  let arguments = (ins F64Attr:$scale, UnitAttr:$causal,
                       Arg<Host_FloatBuffer, "", [MemRead]>:$q,
                       Arg<Host_FloatBuffer, "", [MemRead]>:$k,
                       Arg<Host_FloatBuffer, "", [MemRead]>:$v,
                       Arg<Optional<Host_FloatBuffer>, "", [MemRead]>:$mask,
                       Arg<Host_FloatBuffer, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    `scale` $scale (`causal` $causal^)?
    `ins` `(` $q `,` $k `,` $v (`,` $mask^)? `:` type($q) `,` type($k) `,` type($v)
    (`,` type($mask)^)? `)` `outs` `(` $output `:` type($output) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputMutable(); }
    ::hir::AxisMaps getOperandAxisMaps() { return ::hir::attentionAxisMaps(*this); }
  }];
}

//===----------------------------------------------------------------------===//
// Fused pointwise kernels
//===----------------------------------------------------------------------===//

def Host_FusedOp : Host_Op<"fused", [AttrSizedOperandSegments, SingleBlock, NoTerminator,
    MemoryEffects<[MemRead<Host_StreamResource>]>, DestinationStyleOpInterface]> {
  let summary = "a chain of elementwise ops computed as one kernel";
  let description = [{
    The ops of the body, run as one kernel over the shape of the largest
    outputs (the iteration shape) on the current stream, with no
    intermediate buffer written. `host-fuse-elementwise` makes it from a
    chain of elementwise ops, their broadcasts and the reductions of the
    last axis between them; `convert-host-to-llvm` lowers it to one runtime
    call with the body serialized into a program.

    The body is the chain itself: its block arguments are the inputs, the
    outputs, then the temporaries (buffers that exist only inside the
    kernel); its ops are elementwise host ops (`Elementwise`), fills (a
    constant of the kernel, held by no buffer), broadcasts (`Broadcast`: of
    an input, read with stride 0 along the new axes, or of a row along the
    last axis) and reductions (`Reduction`) of the last axis of a buffer of
    the iteration shape, in destination-passing style on those arguments. Every output and temporary has the iteration shape or
    it without its last axis (a row: one value per row). Each output and
    temporary is written by exactly one op, before any op reads it; no
    input is written. It computes exactly what the ops compute in order,
    rounding each temporary to its element type; a reduction sums in the
    backend's order.

    ```mlir
    host.fused ins(%x, %b : memref<4x8xf32>, memref<8xf32>)
               outs(%y : memref<4x8xbf16>) {
    ^bb0(%xa: memref<4x8xf32>, %ba: memref<8xf32>, %ya: memref<4x8xbf16>,
         %t0: memref<4x8xf32>, %t1: memref<4x8xf32>):
      host.broadcast [0] ins(%ba : memref<8xf32>) outs(%t0 : memref<4x8xf32>)
      host.add ins(%xa, %t0 : memref<4x8xf32>, memref<4x8xf32>) outs(%t1 : memref<4x8xf32>)
      host.cast ins(%t1 : memref<4x8xf32>) outs(%ya : memref<4x8xbf16>)
    }
    ```
  }];
  let arguments = (ins Arg<Variadic<Host_FloatBuffer>, "", [MemRead]>:$inputs,
                       Arg<Variadic<Host_FloatBuffer>, "", [MemWrite]>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    $body attr-dict
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputsMutable(); }
  }];
}

#endif // HIR_HOST_TD
