// RUN: hir-opt %s -split-input-file -verify-diagnostics

// One chunk per verifier rule of the host dialect (HostDialect.cpp, the shape
// rules of common/Verify.cpp) and per ODS constraint.

// ODS: buffers hold f16, bf16, f32, i32 or i64 (not i16; integers.mlir and
// integers-invalid.mlir have the integer rules).
func.func @f() {
  // expected-error @+1 {{'host.alloc' op result #0 must be memref of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'memref<8xi16>'}}
  %0 = host.alloc : memref<8xi16>
  return
}

// -----

// alloc: the shape is static.
func.func @f() {
  // expected-error @+1 {{'host.alloc' op buffer shape must be static, got 'memref<?x8xf32>'}}
  %0 = host.alloc : memref<?x8xf32>
  return
}

// -----

// alloc: the layout is the identity.
func.func @f() {
  // expected-error @+1 {{'host.alloc' op buffer must have the identity layout, got strided<[1, 4]>}}
  %0 = host.alloc : memref<4x8xf32, strided<[1, 4]>>
  return
}

// -----

// alloc: an affine layout that is not the identity is rejected too.
func.func @f() {
  // expected-error @+1 {{'host.alloc' op buffer must have the identity layout, got affine_map<(d0, d1) -> (d1, d0)>}}
  %0 = host.alloc : memref<4x8xf32, affine_map<(d0, d1) -> (d1, d0)>>
  return
}

// -----

// ODS: dealloc frees a buffer of an element type HIR takes.
func.func @f(%a: memref<8xi8>) {
  // expected-error @+1 {{'host.dealloc' op operand #0 must be memref of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values}}
  host.dealloc %a : memref<8xi8>
  return
}

// -----

// select: the axis is in range.
func.func @f(%a: memref<4x8xf32>, %i: index) {
  // expected-error @+1 {{'host.select' op axis 2 is out of range for rank 2}}
  %0 = host.select %a[2][%i] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
  return
}

// -----

// select: the axis is non-negative.
func.func @f(%a: memref<4x8xf32>, %i: index) {
  // expected-error @+1 {{'host.select' op axis -1 is out of range for rank 2}}
  %0 = host.select %a[-1][%i] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
  return
}

// -----

// select: a constant index is below the extent of the axis.
func.func @f(%a: memref<4x8xf32>) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'host.select' op index 4 is out of range for axis 0 of extent 4}}
  %0 = host.select %a[0][%c4] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  return
}

// -----

// select: a constant index is non-negative.
func.func @f(%a: memref<4x8xf32>) {
  %c-1 = arith.constant -1 : index
  // expected-error @+1 {{'host.select' op index -1 is out of range for axis 1 of extent 8}}
  %0 = host.select %a[1][%c-1] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: ?>>
  return
}

// -----

// select: a negative constant index is out of range even on a dynamic axis.
func.func @f(%a: memref<?x8xf32>) {
  %c-1 = arith.constant -1 : index
  // expected-error @+1 {{'host.select' op index -1 is out of range for axis 0 of dynamic extent}}
  %0 = host.select %a[0][%c-1] : memref<?x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  return
}

// -----

// select: the result drops the selected axis.
func.func @f(%a: memref<4x8xf32>, %i: index) {
  // expected-error @+1 {{'host.select' op result type 'memref<8xf32, strided<[1], offset: ?>>' is not the view type 'memref<4xf32, strided<[8], offset: ?>>'}}
  %0 = host.select %a[1][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  return
}

// -----

// select: the result is a strided view with a dynamic offset, not a new buffer.
func.func @f(%a: memref<4x8xf32>, %i: index) {
  // expected-error @+1 {{'host.select' op result type 'memref<8xf32>' is not the view type 'memref<8xf32, strided<[1], offset: ?>>'}}
  %0 = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32>
  return
}

// -----

// select: the result keeps the element type.
func.func @f(%a: memref<4x8xf32>, %i: index) {
  // expected-error @+1 {{is not the view type 'memref<8xf32, strided<[1], offset: ?>>'}}
  %0 = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf16, strided<[1], offset: ?>>
  return
}

// -----

// select: the source has a strided layout.
func.func @f(%a: memref<4x8xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>, %i: index) {
  // expected-error @+1 {{'host.select' op source 'memref<4x8xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>' has no strided layout}}
  %0 = host.select %a[0][%i] : memref<4x8xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>> to memref<8xf32, strided<[1], offset: ?>>
  return
}

// -----

// ODS: the stream ops take a !host.stream (generic form to pass an index).
func.func @f(%i: index) {
  // expected-error @+1 {{'host.set_current_stream' op operand #0 must be a handle to a stream of the runtime, but got 'index'}}
  "host.set_current_stream"(%i) : (index) -> ()
  return
}

// -----

// ODS: sync_stream takes a !host.stream.
func.func @f(%i: index) {
  // expected-error @+1 {{'host.sync_stream' op operand #0 must be a handle to a stream of the runtime, but got 'index'}}
  "host.sync_stream"(%i) : (index) -> ()
  return
}

// -----

// ODS: stream_from_pool gives a !host.stream (generic form, as below).
func.func @f(%i: index) {
  // expected-error @+1 {{'host.stream_from_pool' op result #0 must be a handle to a stream of the runtime, but got 'index'}}
  %0 = "host.stream_from_pool"(%i) : (index) -> index
  return
}

// -----

// ODS: get_current_stream gives a !host.stream.
func.func @f() {
  // expected-error @+1 {{'host.get_current_stream' op result #0 must be a handle to a stream of the runtime, but got 'i64'}}
  %0 = "host.get_current_stream"() : () -> i64
  return
}

// -----

// ODS: rank is an index.
func.func @f() {
  // expected-error @+1 {{'host.rank' op result #0 must be index, but got 'i32'}}
  %0 = "host.rank"() : () -> i32
  return
}

// -----

// ODS: num_devices is an index.
func.func @f() {
  // expected-error @+1 {{'host.num_devices' op result #0 must be index, but got 'i64'}}
  %0 = "host.num_devices"() : () -> i64
  return
}

// -----

// copy: input and output have one shape.
func.func @f(%a: memref<8x16xf32>, %b: memref<16x8xf32>) {
  // expected-error @+1 {{'host.copy' op input and output differ in shape: 8x16 vs 16x8}}
  host.copy ins(%a : memref<8x16xf32>) outs(%b : memref<16x8xf32>)
  return
}

// -----

// copy: input and output have one element type.
func.func @f(%a: memref<8xf32>, %b: memref<8xbf16>) {
  // expected-error @+1 {{'host.copy' op input and output differ in element type: 'f32' vs 'bf16'}}
  host.copy ins(%a : memref<8xf32>) outs(%b : memref<8xbf16>)
  return
}

// -----

// neg: input and output have one shape.
func.func @f(%a: memref<8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'host.neg' op input and output differ in shape: 8 vs 4}}
  host.neg ins(%a : memref<8xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

// exp: the unary class's one verifier holds for an op added by its def line.
func.func @f(%a: memref<8xf32>, %b: memref<8xbf16>) {
  // expected-error @+1 {{'host.exp' op input and output differ in element type: 'f32' vs 'bf16'}}
  host.exp ins(%a : memref<8xf32>) outs(%b : memref<8xbf16>)
  return
}

// -----

// rsqrt: the unary class's verifier, on an op added by its def line.
func.func @f(%a: memref<8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'host.rsqrt' op input and output differ in shape: 8 vs 4}}
  host.rsqrt ins(%a : memref<8xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

// where: lhs has the output's shape.
func.func @f(%m: memref<8xf32>, %a: memref<4xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  // expected-error @+1 {{'host.where' op lhs and output differ in shape: 4 vs 8}}
  host.where ins(%m, %a, %b : memref<8xf32>, memref<4xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  return
}

// -----

// where: the mask has the output's element type.
func.func @f(%m: memref<8xf16>, %a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  // expected-error @+1 {{'host.where' op mask and output differ in element type: 'f16' vs 'f32'}}
  host.where ins(%m, %a, %b : memref<8xf16>, memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  return
}

// -----

// neg: input and output have one element type.
func.func @f(%a: memref<8xf32>, %b: memref<8xf16>) {
  // expected-error @+1 {{'host.neg' op input and output differ in element type: 'f32' vs 'f16'}}
  host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf16>)
  return
}

// -----

// cast: the element type may change, the shape may not.
func.func @f(%a: memref<8xf32>, %b: memref<4xbf16>) {
  // expected-error @+1 {{'host.cast' op input and output differ in shape: 8 vs 4}}
  host.cast ins(%a : memref<8xf32>) outs(%b : memref<4xbf16>)
  return
}

// -----

// Binary ops: lhs and output have one shape.
func.func @f(%a: memref<4xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  // expected-error @+1 {{'host.add' op lhs and output differ in shape: 4 vs 8}}
  host.add ins(%a, %b : memref<4xf32>, memref<8xf32>) outs(%c : memref<8xf32>)
  return
}

// -----

// Binary ops: rhs and output have one shape.
func.func @f(%a: memref<8xf32>, %b: memref<4xf32>, %c: memref<8xf32>) {
  // expected-error @+1 {{'host.max' op rhs and output differ in shape: 4 vs 8}}
  host.max ins(%a, %b : memref<8xf32>, memref<4xf32>) outs(%c : memref<8xf32>)
  return
}

// -----

// Binary ops: operands and output have one element type.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf16>) {
  // expected-error @+1 {{'host.div' op lhs and output differ in element type: 'f32' vs 'f16'}}
  host.div ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%c : memref<8xf16>)
  return
}

// -----

// Reductions: at least one axis.
func.func @f(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'host.sum' op reduces no axis}}
  host.sum [] ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>)
  return
}

// -----

// Reductions: axes are in range.
func.func @f(%a: memref<4x8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'host.amax' op reduced axis 3 is out of range for rank 2}}
  host.amax [3] ins(%a : memref<4x8xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

// Reductions: an axis is listed once.
func.func @f(%a: memref<4x8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'host.sum' op reduced axis 1 is listed twice}}
  host.sum [1, 1] ins(%a : memref<4x8xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

// Reductions: the output drops exactly the reduced axes.
func.func @f(%a: memref<4x8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'host.sum' op result shape 8 is not the input shape 4x8 without the reduced axes (4)}}
  host.sum [1] ins(%a : memref<4x8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// Reductions: input and output have one element type.
func.func @f(%a: memref<4x8xbf16>, %b: memref<4xf32>) {
  // expected-error @+1 {{'host.amax' op input and result differ in element type: 'bf16' vs 'f32'}}
  host.amax [1] ins(%a : memref<4x8xbf16>) outs(%b : memref<4xf32>)
  return
}

// -----

// broadcast: at least one new axis.
func.func @f(%a: memref<16xf32>, %b: memref<16xf32>) {
  // expected-error @+1 {{'host.broadcast' op broadcasts along no axis}}
  host.broadcast [] ins(%a : memref<16xf32>) outs(%b : memref<16xf32>)
  return
}

// -----

// broadcast: new axes are in range of the output's rank.
func.func @f(%a: memref<16xf32>, %b: memref<8x16xf32>) {
  // expected-error @+1 {{'host.broadcast' op broadcast axis -1 is out of range for rank 2}}
  host.broadcast [-1] ins(%a : memref<16xf32>) outs(%b : memref<8x16xf32>)
  return
}

// -----

// broadcast: a new axis is listed once.
func.func @f(%a: memref<16xf32>, %b: memref<8x16xf32>) {
  // expected-error @+1 {{'host.broadcast' op broadcast axis 0 is listed twice}}
  host.broadcast [0, 0] ins(%a : memref<16xf32>) outs(%b : memref<8x16xf32>)
  return
}

// -----

// broadcast: the output without the new axes is the input.
func.func @f(%a: memref<16xf32>, %b: memref<8x16xf32>) {
  // expected-error @+1 {{'host.broadcast' op result shape 8x16 without the broadcast axes (8) is not the input shape 16}}
  host.broadcast [1] ins(%a : memref<16xf32>) outs(%b : memref<8x16xf32>)
  return
}

// -----

// broadcast: input and output have one element type.
func.func @f(%a: memref<16xf16>, %b: memref<8x16xf32>) {
  // expected-error @+1 {{'host.broadcast' op input and result differ in element type: 'f16' vs 'f32'}}
  host.broadcast [0] ins(%a : memref<16xf16>) outs(%b : memref<8x16xf32>)
  return
}

// -----

// matmul: operands have rank 2 or more.
func.func @f(%a: memref<8x64xf32>, %b: memref<64xf32>, %c: memref<8xf32>) {
  // expected-error @+1 {{'host.matmul' op operands need rank 2 or more (or a [K] lhs with a [K, N] rhs), got 2 and 1}}
  host.matmul ins(%a, %b : memref<8x64xf32>, memref<64xf32>) outs(%c : memref<8xf32>)
  return
}

// -----

// matmul: operands and output have one element type.
func.func @f(%a: memref<8x64xbf16>, %b: memref<64x32xf16>, %c: memref<8x32xbf16>) {
  // expected-error @+1 {{'host.matmul' op operands and result differ in element type: 'bf16' vs 'f16'}}
  host.matmul ins(%a, %b : memref<8x64xbf16>, memref<64x32xf16>) outs(%c : memref<8x32xbf16>)
  return
}

// -----

// matmul: batch axes broadcast (equal, or one of them 1 or missing).
func.func @f(%a: memref<2x8x64xf32>, %b: memref<4x64x32xf32>, %c: memref<4x8x32xf32>) {
  // expected-error @+1 {{'host.matmul' op batch axes do not broadcast: lhs 2x8x64, rhs 4x64x32 (lhs axis 0 has extent 2, rhs axis 0 has extent 4)}}
  host.matmul ins(%a, %b : memref<2x8x64xf32>, memref<4x64x32xf32>) outs(%c : memref<4x8x32xf32>)
  return
}

// -----

// matmul: an rhs with batch axes the lhs lacks makes them the output's.
func.func @f(%a: memref<8x64xf32>, %b: memref<4x64x32xf32>, %c: memref<8x32xf32>) {
  // expected-error @+1 {{'host.matmul' op result shape 8x32 is not 4x8x32}}
  host.matmul ins(%a, %b : memref<8x64xf32>, memref<4x64x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// matmul: lhs and rhs agree on K.
func.func @f(%a: memref<256x1024xbf16>, %b: memref<512x2048xbf16>, %c: memref<256x2048xbf16>) {
  // expected-error @+1 {{'host.matmul' op contraction extents differ: lhs has K = 1024, rhs has K = 512}}
  host.matmul ins(%a, %b : memref<256x1024xbf16>, memref<512x2048xbf16>) outs(%c : memref<256x2048xbf16>)
  return
}

// -----

// matmul: the output is [B..., M, N].
func.func @f(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<32x8xf32>) {
  // expected-error @+1 {{'host.matmul' op result shape 32x8 is not 8x32}}
  host.matmul ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>) outs(%c : memref<32x8xf32>)
  return
}

// -----

// linear: the input has rank 1 or more.
func.func @f(%x: memref<f32>, %w: memref<32x64xf32>, %y: memref<32xf32>) {
  // expected-error @+1 {{'host.linear' op input needs rank 1 or more}}
  host.linear ins(%x, %w : memref<f32>, memref<32x64xf32>) outs(%y : memref<32xf32>)
  return
}

// -----

// linear: an accumulating linear has no bias (it would be added at each
// accumulation).
func.func @f(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %b: memref<32xf32>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{'host.linear' op accumulates its product without a bias (the bias would be added at each accumulation)}}
  host.linear ins(%x, %w, %b : memref<8x64xf32>, memref<32x64xf32>, memref<32xf32>) outs(%y : memref<8x32xf32>) {accumulate}
  return
}

// -----

// linear: the weight is [N, K].
func.func @f(%x: memref<8x64xf32>, %w: memref<64xf32>, %y: memref<8xf32>) {
  // expected-error @+1 {{'host.linear' op weight must have rank 2 ([N, K]), got rank 1}}
  host.linear ins(%x, %w : memref<8x64xf32>, memref<64xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// linear: input and weight agree on K.
func.func @f(%x: memref<8x64xf32>, %w: memref<32x16xf32>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{'host.linear' op contraction extents differ: input has K = 64, weight [N, K] has K = 16}}
  host.linear ins(%x, %w : memref<8x64xf32>, memref<32x16xf32>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// linear: the bias is [N].
func.func @f(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %b: memref<16xf32>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{'host.linear' op bias must be [32], got 16}}
  host.linear ins(%x, %w, %b : memref<8x64xf32>, memref<32x64xf32>, memref<16xf32>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// linear: the bias has the element type of the others.
func.func @f(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %b: memref<32xf16>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{'host.linear' op operands and result differ in element type: 'f32' vs 'f16'}}
  host.linear ins(%x, %w, %b : memref<8x64xf32>, memref<32x64xf32>, memref<32xf16>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// linear: the output is [B..., N].
func.func @f(%x: memref<4x8x64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{'host.linear' op result shape 8x32 is not 4x8x32}}
  host.linear ins(%x, %w : memref<4x8x64xf32>, memref<32x64xf32>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// The dialect has no discardable attribute (the stream axis is a
// host.stream_for, not a mark).
func.func @stream_axis(%a: memref<4x8xf32>) {
  // expected-error @+1 {{unknown host attribute 'host.stream_axis'}}
  host.neg ins(%a : memref<4x8xf32>) outs(%a : memref<4x8xf32>) {host.stream_axis = 0 : i64}
  return
}

// -----

// expected-error @+1 {{unknown host attribute 'host.streams'}}
func.func @unknown_attribute() attributes {host.streams = 2 : i64} {
  return
}

// -----

// every op: a static element count fits in int64.
func.func @f() {
  // expected-error @+1 {{'host.alloc' op result #0: buffer of 2^64 elements overflows 64-bit sizes}}
  %0 = host.alloc : memref<4294967296x4294967296xf32>
  return
}

// -----

// every op: so does the byte size.
func.func @f() {
  // expected-error @+1 {{'host.alloc' op result #0: buffer of 2^62 elements of 4 bytes (2^64 bytes) overflows 64-bit sizes}}
  %0 = host.alloc : memref<4611686018427387904xf32>
  return
}

// -----

// every op: operands are checked too (a count that is no power of two is in decimal).
func.func @f(%a: memref<3x3074457345618258603xf32>, %b: memref<3x3074457345618258603xf32>) {
  // expected-error @+1 {{'host.copy' op operand #0: buffer of 9223372036854775809 elements overflows 64-bit sizes}}
  host.copy ins(%a : memref<3x3074457345618258603xf32>) outs(%b : memref<3x3074457345618258603xf32>)
  return
}

// -----

// stream_for: the body takes the iteration's index and stream.
func.func @f(%n: index, %main: !host.stream) {
  // expected-error @+1 {{'host.stream_for' op body must take the iteration's index and stream (index, '!host.stream')}}
  host.stream_for %n to %n step %n from %main {
  ^bb0(%i: index):
  }
  return
}

// -----

// stream_for: the last stream switch of an iteration makes its stream current
// again, so that the join waits for the work enqueued after it.
func.func @f(%n: index, %main: !host.stream) {
  host.stream_for %n to %n step %n from %main {
  ^bb0(%i: index, %s: !host.stream):
    host.set_current_stream %s
    // expected-error @+1 {{'host.set_current_stream' op is the last stream switch of a host.stream_for iteration, so it must make the iteration's stream current again}}
    host.set_current_stream %main
  }
  return
}

// -----

// ODS: the range of a stream_for is index (generic form to pass an i64).
func.func @f(%n: index, %x: i64, %main: !host.stream) {
  // expected-error @+1 {{'host.stream_for' op operand #1 must be index, but got 'i64'}}
  "host.stream_for"(%n, %x, %n, %main) ({
  ^bb0(%i: index, %s: !host.stream):
    "host.yield"() : () -> ()
  }) : (index, i64, index, !host.stream) -> ()
  return
}

// -----

// ODS: stream_for forks from and joins into a !host.stream.
func.func @f(%n: index) {
  // expected-error @+1 {{'host.stream_for' op operand #3 must be a handle to a stream of the runtime, but got 'index'}}
  "host.stream_for"(%n, %n, %n, %n) ({
  ^bb0(%i: index, %s: !host.stream):
    "host.yield"() : () -> ()
  }) : (index, index, index, index) -> ()
  return
}

// -----

// ODS: yield ends a stream_for iteration and nothing else.
func.func @f() {
  // expected-error @+1 {{'host.yield' op expects parent op 'host.stream_for'}}
  host.yield
}

// -----

// transpose: the output is the input's shape permuted.
func.func @f(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'host.transpose' op result shape 4x8 is not the input shape 4x8 permuted (8x4)}}
  host.transpose [1, 0] ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>)
  return
}

// -----

// transpose: a permutation of the input's axes.
func.func @f(%a: memref<4x8xf32>, %b: memref<8x4xf32>) {
  // expected-error @+1 {{'host.transpose' op permuted axis 1 is listed twice}}
  host.transpose [1, 1] ins(%a : memref<4x8xf32>) outs(%b : memref<8x4xf32>)
  return
}

// -----

// iota: the axis is one of the output's.
func.func @f(%b: memref<4x8xf32>, %o: index) {
  // expected-error @+1 {{'host.iota' op axis -1 is out of range for rank 2}}
  host.iota -1, %o outs(%b : memref<4x8xf32>)
  return
}

// -----

// reshape: as many elements.
func.func @f(%a: memref<4x8xf32>, %b: memref<16xf32>) {
  // expected-error @+1 {{'host.reshape' op result shape 16 holds 16 elements, the input shape 4x8 32}}
  host.reshape ins(%a : memref<4x8xf32>) outs(%b : memref<16xf32>)
  return
}

// -----

// attention: the scale is required at the host level (fusion's default is
// resolved by convert-fusion-to-host).
func.func @f(%q: memref<8x16xf32>, %k: memref<12x16xf32>, %v: memref<12x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{custom op 'host.attention' expected 'scale'}}
  host.attention ins(%q, %k, %v : memref<8x16xf32>, memref<12x16xf32>, memref<12x8xf32>) outs(%o : memref<8x8xf32>)
  return
}

// -----

// attention: q is [B.., Sq, D].
func.func @f(%q: memref<16xf32>, %k: memref<16xf32>, %v: memref<16xf32>, %o: memref<16xf32>) {
  // expected-error @+1 {{'host.attention' op q needs rank 2 or more ([B.., Sq, D]), got rank 1}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<16xf32>, memref<16xf32>, memref<16xf32>) outs(%o : memref<16xf32>)
  return
}

// -----

// attention: the output has q's rank.
func.func @f(%q: memref<2x8x16xf32>, %k: memref<2x12x16xf32>, %v: memref<2x12x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{'host.attention' op result has rank 2, q has rank 3: q, k, v and the result have the same batch axes}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<2x8x16xf32>, memref<2x12x16xf32>, memref<2x12x8xf32>) outs(%o : memref<8x8xf32>)
  return
}

// -----

// attention: identical batch axes.
func.func @f(%q: memref<2x8x16xf32>, %k: memref<2x12x16xf32>, %v: memref<3x12x8xf32>, %o: memref<2x8x8xf32>) {
  // expected-error @+1 {{'host.attention' op batch axes differ: q has 2, v has 3 (attention does not broadcast)}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<2x8x16xf32>, memref<2x12x16xf32>, memref<3x12x8xf32>) outs(%o : memref<2x8x8xf32>)
  return
}

// -----

// attention: q and k agree on D.
func.func @f(%q: memref<8x16xf32>, %k: memref<12x8xf32>, %v: memref<12x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{'host.attention' op head dims differ: q has D = 16, k has D = 8}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<8x16xf32>, memref<12x8xf32>, memref<12x8xf32>) outs(%o : memref<8x8xf32>)
  return
}

// -----

// attention: k and v agree on Sk.
func.func @f(%q: memref<8x16xf32>, %k: memref<12x16xf32>, %v: memref<8x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{'host.attention' op key counts differ: k has Sk = 12, v has Sk = 8}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<8x16xf32>, memref<12x16xf32>, memref<8x8xf32>) outs(%o : memref<8x8xf32>)
  return
}

// -----

// attention: the output is [B.., Sq, Dv].
func.func @f(%q: memref<8x16xf32>, %k: memref<12x16xf32>, %v: memref<12x8xf32>, %o: memref<8x12xf32>) {
  // expected-error @+1 {{'host.attention' op result shape 8x12 is not 8x8 ([B.., Sq, Dv])}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<8x16xf32>, memref<12x16xf32>, memref<12x8xf32>) outs(%o : memref<8x12xf32>)
  return
}

// -----

// attention: the mask is [Sq, Sk].
func.func @f(%q: memref<8x16xf32>, %k: memref<12x16xf32>, %v: memref<12x8xf32>, %m: memref<12x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{'host.attention' op mask must be [Sq, Sk] = [8, 12], got 12x8}}
  host.attention scale 1.0 ins(%q, %k, %v, %m : memref<8x16xf32>, memref<12x16xf32>, memref<12x8xf32>, memref<12x8xf32>) outs(%o : memref<8x8xf32>)
  return
}

// -----

// attention: one element type.
func.func @f(%q: memref<8x16xf32>, %k: memref<12x16xf32>, %v: memref<12x8xf32>, %o: memref<8x8xbf16>) {
  // expected-error @+1 {{'host.attention' op operands and result differ in element type: 'f32' vs 'bf16'}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<8x16xf32>, memref<12x16xf32>, memref<12x8xf32>) outs(%o : memref<8x8xbf16>)
  return
}

// -----

// attention: the scale is finite.
func.func @f(%q: memref<8x16xf32>, %k: memref<12x16xf32>, %v: memref<12x8xf32>, %o: memref<8x8xf32>) {
  // expected-error @+1 {{'host.attention' op scale must be finite, got nan}}
  host.attention scale 0x7FF8000000000000 ins(%q, %k, %v : memref<8x16xf32>, memref<12x16xf32>, memref<12x8xf32>) outs(%o : memref<8x8xf32>)
  return
}
