// RUN: hir-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(comm-verify-requests))' -verify-diagnostics | FileCheck %s

// Waited once on every path: a request carried to the next iteration (the
// wait posted one iteration later), one out of an scf.if, a coalescing
// group's, and one waited in both branches of an scf.if. Nothing changes.
// CHECK-LABEL: func.func @waited_once
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (!comm.request)
// CHECK: scf.if {{.*}} -> (!comm.request)
func.func @waited_once(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a0 = host.select %a[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %b0 = host.select %b[0][%c0] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %r0 = comm.allreduce %a0 into %b0 sum team [0, 1] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
  %last = scf.for %i = %c1 to %c4 step %c1 iter_args(%prev = %r0) -> (!comm.request) {
    comm.wait %prev
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %bi = host.select %b[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %r = comm.allreduce %ai into %bi sum team [0, 1] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
    scf.yield %r : !comm.request
  }
  comm.wait %last
  %rank = host.rank : index
  %is0 = arith.cmpi eq, %rank, %c0 : index
  %q = scf.if %is0 -> !comm.request {
    %s = comm.send %a0 to %c1 team [0, 1] : memref<8xf32, strided<[1], offset: ?>>
    scf.yield %s : !comm.request
  } else {
    %t = comm.recv %b0 from %c0 team [0, 1] : memref<8xf32, strided<[1], offset: ?>>
    scf.yield %t : !comm.request
  }
  comm.wait %q
  comm.start_coalescing
  %gs = comm.send %a0 to %c1 team [0, 1] : memref<8xf32, strided<[1], offset: ?>>
  %gr = comm.recv %b0 from %c1 team [0, 1] : memref<8xf32, strided<[1], offset: ?>>
  %g = comm.end_coalescing
  %u = comm.allreduce %a0 into %b0 sum team [0, 1] : memref<8xf32, strided<[1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
  scf.if %is0 {
    comm.wait %g
    comm.wait %u
  } else {
    comm.wait %u
    comm.wait %g
  }
  return
}

// -----

func.func @never_waited(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.allreduce' op request (result #0) is not waited for on every path: wait for it or yield it before the end of its block}}
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  return
}

// -----

func.func @waited_twice(%a: memref<8xf32>, %b: memref<8xf32>) {
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  comm.wait %r
  // expected-error @+1 {{'comm.wait' op consumes a request that is already waited for or passed on}}
  comm.wait %r
  return
}

// -----

func.func @waited_and_yielded(%a: memref<8xf32>, %b: memref<8xf32>, %c: i1) {
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  comm.wait %r
  %q = scf.if %c -> !comm.request {
    // expected-error @+1 {{'scf.yield' op consumes a request that is already waited for or passed on}}
    scf.yield %r : !comm.request
  } else {
    scf.yield %r : !comm.request
  }
  comm.wait %q
  return
}

// -----

// A request made before a loop and waited in it would be waited once per
// iteration.
func.func @waited_in_a_loop(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{'comm.wait' op consumes a request made outside the loop it is in, once per iteration; carry it through an scf.for iter_arg}}
    comm.wait %r
  }
  return
}

// -----

// The same in a host.stream_for body.
func.func @waited_in_a_stream_loop(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    // expected-error @+1 {{'comm.wait' op consumes a request made outside the loop it is in}}
    comm.wait %r
  }
  return
}

// -----

// A request made in a loop body must be waited or yielded in it.
func.func @left_in_a_loop(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{'comm.send' op request (result #0) is not waited for on every path}}
    %r = comm.send %a to %c1 team [0, 1] : memref<8xf32>
  }
  return
}

// -----

// An iter_arg neither waited nor yielded: the previous iteration's request
// would be lost.
func.func @iter_arg_dropped(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r0 = comm.send %a to %c1 team [0, 1] : memref<8xf32>
  // expected-error @+1 {{'scf.for' op iter_arg request (block argument #1) is not waited for nor yielded by every iteration}}
  %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %r0) -> (!comm.request) {
    %r = comm.send %a to %c1 team [0, 1] : memref<8xf32>
    scf.yield %r : !comm.request
  }
  comm.wait %last
  return
}

// -----

// Waited on one path only.
func.func @waited_in_one_branch(%a: memref<8xf32>, %b: memref<8xf32>, %c: i1) {
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  // expected-error @+1 {{'scf.if' op consumes a request in one branch and not in the other}}
  scf.if %c {
    comm.wait %r
  }
  return
}

// -----

// A send of a coalescing group yielded out of its branch (waiting for it is
// the op verifier's error).
func.func @grouped_send_yielded(%a: memref<8xf32>, %c: i1) {
  %c1 = arith.constant 1 : index
  %q = scf.if %c -> !comm.request {
    comm.start_coalescing
    %s = comm.send %a to %c1 team [0, 1] : memref<8xf32>
    %g = comm.end_coalescing
    comm.wait %g
    // expected-error @+1 {{'scf.yield' op consumes the request of a send or receive inside a coalescing group; wait for the group's end_coalescing request}}
    scf.yield %s : !comm.request
  } else {
    %t = comm.send %a to %c1 team [0, 1] : memref<8xf32>
    scf.yield %t : !comm.request
  }
  comm.wait %q
  return
}

// -----

func.func private @sink(!comm.request)

func.func @passed_to_a_call(%a: memref<8xf32>, %b: memref<8xf32>) {
  %r = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  // expected-error @+1 {{'func.call' op takes a request; only comm.wait, scf.yield and scf.for's iter_args consume one}}
  func.call @sink(%r) : (!comm.request) -> ()
  return
}

// -----

// expected-error @+1 {{'func.func' op takes a request argument; a request is waited for in the function that posts it}}
func.func @request_argument(%r: !comm.request) {
  comm.wait %r
  return
}
