// RUN: hir-opt %s -split-input-file -verify-diagnostics

// The fusion ops that take floats only refuse integer tensors (their ODS
// constraint), and a fill of an integer tensor takes an integer of its type.

func.func @exp(%a: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.exp' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8xi32>'}}
  %0 = fusion.exp %a : tensor<8xi32> -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

func.func @tanh(%a: tensor<8xi64>) -> tensor<8xi64> {
  // expected-error @+1 {{'fusion.tanh' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8xi64>'}}
  %0 = fusion.tanh %a : tensor<8xi64> -> tensor<8xi64>
  return %0 : tensor<8xi64>
}

// -----

func.func @gelu(%a: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.gelu' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = fusion.gelu %a : tensor<8xi32> -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

func.func @rsqrt(%a: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.rsqrt' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = fusion.rsqrt %a : tensor<8xi32> -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Integer division is not supported.
func.func @div(%a: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.div' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = fusion.div %a, %a : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Casts take every fusion element type, and no other integer width.
func.func @cast(%a: tensor<8xi16>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusion.cast' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi16>'}}
  %0 = fusion.cast %a : tensor<8xi16> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A cast between integer and float types keeps the shape.
func.func @cast_to_int(%a: tensor<8xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{'fusion.cast' op}}
  %0 = fusion.cast %a : tensor<8xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @matmul(%a: tensor<8x4xi32>, %b: tensor<4x2xi32>) -> tensor<8x2xi32> {
  // expected-error @+1 {{'fusion.matmul' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = fusion.matmul %a, %b : tensor<8x4xi32>, tensor<4x2xi32> -> tensor<8x2xi32>
  return %0 : tensor<8x2xi32>
}

// -----

func.func @linear(%x: tensor<8x4xi64>, %w: tensor<2x4xi64>) -> tensor<8x2xi64> {
  // expected-error @+1 {{'fusion.linear' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = fusion.linear %x, %w : tensor<8x4xi64>, tensor<2x4xi64> -> tensor<8x2xi64>
  return %0 : tensor<8x2xi64>
}

// -----

// Elementwise ops keep one element type.
func.func @mixed(%a: tensor<8xi32>, %b: tensor<8xi64>) -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.add'}}
  %0 = fusion.add %a, %b : tensor<8xi32>, tensor<8xi64> -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Unsigned and signed integer types are not tensors HIR takes (signless only).
func.func @unsigned(%a: tensor<8xui32>) -> tensor<8xui32> {
  // expected-error @+1 {{'fusion.neg' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xui32>'}}
  %0 = fusion.neg %a : tensor<8xui32> -> tensor<8xui32>
  return %0 : tensor<8xui32>
}

// -----

func.func @fill_fraction() -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.fill' op value 5.000000e-01 is not an integer of 'i32'}}
  %0 = fusion.fill 0.5 : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

func.func @fill_out_of_range() -> tensor<8xi32> {
  // expected-error @+1 {{'fusion.fill' op value 2.147484e+09 is not an integer of 'i32'}}
  %0 = fusion.fill 2147483648.0 : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

func.func @attention(%q: tensor<8x16xi32>, %k: tensor<12x16xi32>, %v: tensor<12x8xi32>) -> tensor<8x8xi32> {
  // expected-error @+1 {{'fusion.attention' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<8x16xi32>'}}
  %0 = fusion.attention %q, %k, %v : tensor<8x16xi32>, tensor<12x16xi32>, tensor<12x8xi32> -> tensor<8x8xi32>
  return %0 : tensor<8x8xi32>
}
