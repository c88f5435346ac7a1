// RUN: hir-opt %s -split-input-file -verify-diagnostics

// The activation epilogue of host.matmul and host.linear: what the verifier
// and the parser refuse.

// matmul: an epilogue applies to a GEMM that writes its output, never to an
// accumulated sum.
func.func @f(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
  // expected-error @+1 {{'host.matmul' op cannot apply activation gelu with accumulate: an epilogue applies to a GEMM that writes its output}}
  host.matmul activation gelu ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>)
              outs(%c : memref<8x32xf32>) {accumulate}
  return
}

// -----

// The activations are the epilogues the runtime has (gelu).
func.func @f(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'activation' [gelu]}}
  host.linear activation relu ins(%x, %w : memref<8x64xf32>, memref<32x64xf32>)
              outs(%y : memref<8x32xf32>)
  return
}

// -----

// In the generic form, the attribute is one of the enum's i32 cases.
func.func @f(%x: memref<8x64xf32>, %w: memref<32x64xf32>, %y: memref<8x32xf32>) {
  // expected-error @+1 {{invalid properties {activation = 7 : i32} for op host.linear: Invalid attribute `activation` in property conversion: 7 : i32}}
  "host.linear"(%x, %w, %y) <{activation = 7 : i32}> : (memref<8x64xf32>, memref<32x64xf32>, memref<8x32xf32>) -> ()
  return
}

// -----

func.func @linear_activation_and_accumulate(%x: memref<8x64xbf16>, %w: memref<32x64xbf16>, %y: memref<8x32xbf16>) {
  // expected-error @+1 {{'host.linear' op cannot apply activation gelu with accumulate: an epilogue applies to a GEMM that writes its output}}
  host.linear activation gelu ins(%x, %w : memref<8x64xbf16>, memref<32x64xbf16>) outs(%y : memref<8x32xbf16>) {accumulate}
  return
}
