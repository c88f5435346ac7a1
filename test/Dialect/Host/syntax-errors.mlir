// RUN: hir-opt %s -split-input-file -verify-diagnostics

// Malformed host IR: each chunk must fail to parse with a located diagnostic.

// An unknown host type.
// expected-error @+1 {{unknown  type `event` in dialect `host`}}
func.func private @f(!host.event)

// -----

// An unknown host op.
func.func @f() {
  // expected-error @+1 {{custom op 'host.record_event' is unknown}}
  host.record_event
  return
}

// -----

// select names the index in a second pair of brackets.
func.func @f(%a: memref<8xf32>, %i: index) {
  // expected-error @+1 {{expected '['}}
  %0 = host.select %a[0] : memref<8xf32> to memref<f32, strided<[], offset: ?>>
  return
}

// -----

// The custom form of rank gives an index.
func.func @f() {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.index, but found '!host.stream'}}
  %0 = host.rank : !host.stream
  return
}

// -----

// Compute ops name their outputs with `outs`.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{expected 'outs'}}
  host.copy ins(%a : memref<8xf32>) (%b : memref<8xf32>)
  return
}
