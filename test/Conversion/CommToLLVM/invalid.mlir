// RUN: hir-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect --convert-comm-to-llvm

// Requests are made and waited for inside the program.
// expected-error @+1 {{'func.func' op has a '!comm.request' in its type; convert-comm-to-llvm lowers '!comm.request' values only from one comm op to others}}
func.func @request_argument(%r: !comm.request) {
  comm.wait %r
  return
}

// -----

func.func @request_passed(%a: memref<8xf32>) {
  %r = comm.allreduce %a into %a sum team [0, 1] : memref<8xf32> into memref<8xf32>
  // expected-error @+1 {{'test.consume' op takes a '!comm.request' operand}}
  "test.consume"(%r) : (!comm.request) -> ()
  comm.wait %r
  return
}

// -----

// Requests flow through scf.for iter_args and scf.if results, not through
// other region ops.
func.func @request_through_while(%a: memref<8xf32>, %c: i1) {
  %first = comm.allreduce %a into %a sum team [0, 1] : memref<8xf32> into memref<8xf32>
  // expected-error @+1 {{'scf.while' op has a block argument of type '!comm.request'}}
  %last = scf.while (%r = %first) : (!comm.request) -> !comm.request {
    scf.condition(%c) %r : !comm.request
  } do {
  ^bb0(%next: !comm.request):
    scf.yield %next : !comm.request
  }
  comm.wait %last
  return
}

// -----

// A team constant the module already defines otherwise.
memref.global "private" constant @__hir_team_0_1 : memref<2xi64> = dense<[1, 0]>

func.func @team_taken(%a: memref<8xf32>) {
  // expected-error @+1 {{'comm.allreduce' op needs constant '@__hir_team_0_1' of type memref<2xi64>, but the module defines '@__hir_team_0_1' as 'memref.global "private" constant @__hir_team_0_1 : memref<2xi64> = dense<[1, 0]>'}}
  %r = comm.allreduce %a into %a sum team [0, 1] : memref<8xf32> into memref<8xf32>
  comm.wait %r
  return
}

// -----

// A runtime symbol the module already defines otherwise.
func.func @hir_rt_wait(%r: i32) {
  return
}

func.func @function_taken(%a: memref<8xf32>) {
  %r = comm.allreduce %a into %a sum team [0, 1] : memref<8xf32> into memref<8xf32>
  // expected-error @+1 {{'comm.wait' op needs runtime function '@hir_rt_wait' of type (i64) -> (), but the module defines '@hir_rt_wait' as 'func.func' of type (i32) -> ()}}
  comm.wait %r
  return
}
