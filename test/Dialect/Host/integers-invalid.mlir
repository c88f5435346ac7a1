// RUN: hir-opt %s -split-input-file -verify-diagnostics

// The host ops that take floats only refuse integer buffers (their ODS
// constraint); a fill of an integer buffer takes an integer of its type.

func.func @exp(%a: memref<8xi32>) {
  // expected-error @+1 {{'host.exp' op operand #0 must be memref of 16-bit float or bfloat16 type or 32-bit float values, but got 'memref<8xi32>'}}
  host.exp ins(%a : memref<8xi32>) outs(%a : memref<8xi32>)
  return
}

// -----

func.func @div(%a: memref<8xi64>) {
  // expected-error @+1 {{'host.div' op operand #0 must be memref of 16-bit float}}
  host.div ins(%a, %a : memref<8xi64>, memref<8xi64>) outs(%a : memref<8xi64>)
  return
}

// -----

// Casts take every host element type, and no other integer width.
func.func @cast(%a: memref<8xi16>, %b: memref<8xf32>) {
  // expected-error @+1 {{'host.cast' op operand #0 must be memref of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'memref<8xi16>'}}
  host.cast ins(%a : memref<8xi16>) outs(%b : memref<8xf32>)
  return
}

// -----

// A cast between integer and float types keeps the shape.
func.func @cast_shape(%a: memref<8xi32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'host.cast' op}}
  host.cast ins(%a : memref<8xi32>) outs(%b : memref<4xf32>)
  return
}

// -----

func.func @matmul(%a: memref<4x4xi32>) {
  // expected-error @+1 {{'host.matmul' op operand #0 must be memref of 16-bit float}}
  host.matmul ins(%a, %a : memref<4x4xi32>, memref<4x4xi32>) outs(%a : memref<4x4xi32>)
  return
}

// -----

func.func @linear(%a: memref<4x4xi64>) {
  // expected-error @+1 {{'host.linear' op operand #0 must be memref of 16-bit float}}
  host.linear ins(%a, %a : memref<4x4xi64>, memref<4x4xi64>) outs(%a : memref<4x4xi64>)
  return
}

// -----

// A fused program computes in f32: integer buffers are not fused.
func.func @fused(%a: memref<8xi32>, %y: memref<8xi32>) {
  // expected-error @+1 {{'host.fused' op operand #0 must be variadic of memref of 16-bit float}}
  host.fused ins(%a : memref<8xi32>) outs(%y : memref<8xi32>) {
  ^bb0(%x: memref<8xi32>, %o: memref<8xi32>):
    host.neg ins(%x : memref<8xi32>) outs(%o : memref<8xi32>)
  }
  return
}

// -----

func.func @fill_fraction(%a: memref<8xi64>) {
  // expected-error @+1 {{'host.fill' op value 2.500000e-01 is not an integer of 'i64'}}
  host.fill 0.25 outs(%a : memref<8xi64>)
  return
}

// -----

func.func @attention(%q: memref<8x16xi32>, %k: memref<12x16xi32>, %v: memref<12x8xi32>, %o: memref<8x8xi32>) {
  // expected-error @+1 {{'host.attention' op operand #0 must be memref of 16-bit float or bfloat16 type or 32-bit float values, but got 'memref<8x16xi32>'}}
  host.attention scale 1.0 ins(%q, %k, %v : memref<8x16xi32>, memref<12x16xi32>, memref<12x8xi32>) outs(%o : memref<8x8xi32>)
  return
}
