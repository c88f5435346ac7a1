// RUN: hir-opt %s --split-input-file --convert-comm-to-llvm | FileCheck %s --implicit-check-not=comm.

// A collective passes its reduce kind, root and axis (0 where it has none),
// its team as a shared i64 constant and its backend (nccl = 0, cuda = 1),
// and returns a request the wait takes.
// CHECK-DAG: memref.global "private" constant @__hir_team_0_1 : memref<2xi64> = dense<[0, 1]>
// CHECK-DAG: func.func private @hir_rt_allreduce_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64, memref<*xi64>, i64) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_wait(i64){{$}}
// CHECK-LABEL: func.func @allreduce
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK-DAG: %[[IN:.*]] = memref.cast %[[A]] : memref<8xf32> to memref<*xf32>
// CHECK-DAG: %[[OUT:.*]] = memref.cast %[[B]] : memref<8xf32> to memref<*xf32>
// CHECK-DAG: %[[MAX:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[T:.*]] = memref.get_global @__hir_team_0_1 : memref<2xi64>
// CHECK-DAG: %[[TEAM:.*]] = memref.cast %[[T]] : memref<2xi64> to memref<*xi64>
// CHECK: %[[R:.*]] = call @hir_rt_allreduce_f32(%[[IN]], %[[OUT]], %[[MAX]], %[[ZERO]], %{{.*}}, %[[TEAM]], %{{.*}})
// CHECK: call @hir_rt_wait(%[[R]]) : (i64) -> ()
func.func @allreduce(%a: memref<8xf32>, %b: memref<8xf32>) {
  %r = comm.allreduce %a into %b max team [0, 1] : memref<8xf32> into memref<8xf32>
  comm.wait %r
  return
}

// -----

// CHECK: memref.global "private" constant @__hir_team_0_1_2_3 : memref<4xi64> = dense<[0, 1, 2, 3]>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @collectives
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: %[[R1:.*]] = call @hir_rt_allgather_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C1]], %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, i64, i64, i64, memref<*xi64>, i64) -> i64
// CHECK: %[[PROD:.*]] = arith.constant 1 : i64
// CHECK: call @hir_rt_reduce_scatter_f32(%{{.*}}, %{{.*}}, %[[PROD]],
// CHECK: %[[ROOT:.*]] = arith.constant 3 : i64
// CHECK: call @hir_rt_broadcast_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROOT]],
// CHECK: %[[AVG:.*]] = arith.constant 4 : i64
// CHECK: call @hir_rt_reduce_f32(%{{.*}}, %{{.*}}, %[[AVG]],
// CHECK: call @hir_rt_gather_f16(
// CHECK: call @hir_rt_scatter_f16(
// CHECK: call @hir_rt_alltoall_f32(
// CHECK: call @hir_rt_wait(%[[R1]])
func.func @collectives(%a: memref<8x1xbf16>, %g: memref<8x4xbf16>, %x: memref<4x8xf32>,
                       %y: memref<1x8xf32>, %v: memref<8xf32>, %h: memref<1x8xf16>, %k: memref<4x8xf16>) {
  %r1 = comm.allgather %a into %g axis 1 team [0, 1, 2, 3] : memref<8x1xbf16> into memref<8x4xbf16>
  %r2 = comm.reduce_scatter %x into %y prod team [0, 1, 2, 3] : memref<4x8xf32> into memref<1x8xf32>
  %r3 = comm.broadcast %v into %v root 3 team [0, 1, 2, 3] : memref<8xf32> into memref<8xf32>
  %r4 = comm.reduce %v into %v avg root 0 team [0, 1, 2, 3] : memref<8xf32> into memref<8xf32>
  %r5 = comm.gather %h into %k root 0 team [0, 1, 2, 3] : memref<1x8xf16> into memref<4x8xf16>
  %r6 = comm.scatter %k into %h root 0 team [0, 1, 2, 3] : memref<4x8xf16> into memref<1x8xf16>
  %r7 = comm.alltoall %x into %x team [0, 1, 2, 3] : memref<4x8xf32> into memref<4x8xf32>
  comm.wait %r1
  return
}

// -----

// Sends and receives inside a coalescing group, whose request is waited for;
// a CUDA-IPC send outside one.
// CHECK-DAG: func.func private @hir_rt_start_coalescing(){{$}}
// CHECK-DAG: func.func private @hir_rt_end_coalescing() -> i64{{$}}
// CHECK-DAG: func.func private @hir_rt_send_f32(memref<*xf32>, i64, memref<*xi64>, i64) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_recv_f32(memref<*xf32>, i64, memref<*xi64>, i64) -> i64 attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_share_mem_handle_f32(memref<*xf32>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_share_mem_handle_bf16(memref<*xbf16>, memref<*xi64>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @hir_rt_barrier(memref<*xi64>, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @p2p
// CHECK-SAME: %[[NEXT:[a-z0-9]+]]: index, %[[PREV:[a-z0-9]+]]: index
// CHECK: call @hir_rt_share_mem_handle_f32(
// CHECK: call @hir_rt_share_mem_handle_bf16(
// CHECK: call @hir_rt_start_coalescing() : () -> ()
// CHECK: %[[N:.*]] = arith.index_cast %[[NEXT]] : index to i64
// CHECK: call @hir_rt_send_f32(%{{.*}}, %[[N]], %{{.*}}, %{{.*}})
// CHECK: %[[P:.*]] = arith.index_cast %[[PREV]] : index to i64
// CHECK: call @hir_rt_recv_f32(%{{.*}}, %[[P]], %{{.*}}, %{{.*}})
// CHECK: %[[R:.*]] = call @hir_rt_end_coalescing() : () -> i64
// CHECK: call @hir_rt_wait(%[[R]])
// CHECK: %[[CUDA:.*]] = arith.constant 1 : i64
// CHECK: %[[S:.*]] = call @hir_rt_send_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[CUDA]])
// CHECK: call @hir_rt_wait(%[[S]])
// CHECK: call @hir_rt_barrier(%{{.*}}, %{{.*}}) : (memref<*xi64>, i64) -> ()
func.func @p2p(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<2x8xbf16>, %next: index, %prev: index) {
  comm.share_mem_handles %a, %c team [0, 1] : memref<8xf32>, memref<2x8xbf16>
  comm.start_coalescing
  %s = comm.send %a to %next team [0, 1] : memref<8xf32>
  %q = comm.recv %b from %prev team [0, 1] : memref<8xf32>
  %r = comm.end_coalescing
  comm.wait %r
  %t = comm.send %a to %next team [0, 1] on cuda : memref<8xf32>
  comm.wait %t
  comm.barrier team [0, 1]
  return
}

// -----

// A root given as a value (a loop's index) is passed as the root argument,
// cast to i64; the runtime checks it is in the team.
// CHECK-LABEL: func.func @value_roots
// CHECK-SAME: (%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %[[I:.*]]: index)
// CHECK: %[[ROOT:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: call @hir_rt_broadcast_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROOT]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[ROOT2:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: call @hir_rt_reduce_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROOT2]], %{{.*}}, %{{.*}}, %{{.*}})
func.func @value_roots(%a: memref<8xf32>, %b: memref<8xf32>, %i: index) {
  %r0 = comm.broadcast %a into %b root %i team [0, 1, 2] : memref<8xf32> into memref<8xf32>
  %r1 = comm.reduce %a into %b sum root %i team [0, 1, 2] : memref<8xf32> into memref<8xf32>
  comm.wait %r0
  comm.wait %r1
  return
}

// -----

// A request carried to the next iteration (scf.for iter_args) and one out of
// an scf.if: the block argument and the results become i64 handles in place,
// the yields yield the handles, and each wait takes the handle it reaches.
// CHECK-LABEL: func.func @requests_through_scf
// CHECK: %[[FIRST:.*]] = call @hir_rt_allreduce_f32(
// CHECK: %[[LAST:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[PREV:.*]] = %[[FIRST]]) -> (i64) {
// CHECK-NEXT: func.call @hir_rt_wait(%[[PREV]]) : (i64) -> ()
// CHECK: %[[NEXT:.*]] = func.call @hir_rt_allreduce_f32(
// CHECK: scf.yield %[[NEXT]] : i64
// CHECK: call @hir_rt_wait(%[[LAST]]) : (i64) -> ()
// CHECK: %[[Q:.*]] = scf.if %{{.*}} -> (i64) {
// CHECK: %[[S:.*]] = func.call @hir_rt_send_f32(
// CHECK-NEXT: scf.yield %[[S]] : i64
// CHECK: } else {
// CHECK: %[[R:.*]] = func.call @hir_rt_recv_f32(
// CHECK-NEXT: scf.yield %[[R]] : i64
// CHECK: call @hir_rt_wait(%[[Q]]) : (i64) -> ()
func.func @requests_through_scf(%a: memref<8xf32>, %b: memref<8xf32>, %n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%prev = %first) -> (!comm.request) {
    comm.wait %prev
    %next = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
    scf.yield %next : !comm.request
  }
  comm.wait %last
  %q = scf.if %c -> !comm.request {
    %s = comm.send %a to %c1 team [0, 1] : memref<8xf32>
    scf.yield %s : !comm.request
  } else {
    %r = comm.recv %b from %c0 team [0, 1] : memref<8xf32>
    scf.yield %r : !comm.request
  }
  comm.wait %q
  return
}
