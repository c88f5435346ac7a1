// RUN: hir-opt %s | hir-opt | FileCheck %s
// RUN: hir-opt %s --mlir-print-op-generic | hir-opt | FileCheck %s

// Every comm op and type survives printing and re-parsing, in the custom and
// in the generic form. Default values (`axis 0`, `on nccl`) are elided when
// printed.

// Collectives within several teams (a 2-D mesh's rows or columns).
// CHECK-LABEL: func.func @teams
// CHECK-NEXT: comm.allgather %{{.*}} into %{{.*}} axis 1 team {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]] : memref<2x1x8xf32> into memref<2x4x8xf32>
// CHECK-NEXT: comm.allreduce %{{.*}} into %{{.*}} sum team {{\[}}[0, 4], [1, 5], [2, 6], [3, 7]] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.reduce_scatter %{{.*}} into %{{.*}} sum axis 1 team {{\[}}[0, 1], [2, 3]] : memref<2x4x8xf32> into memref<2x2x8xf32>
func.func @teams(%a: memref<2x1x8xf32>, %g: memref<2x4x8xf32>, %v: memref<8xf32>, %w: memref<8xf32>, %s: memref<2x2x8xf32>) {
  %0 = comm.allgather %a into %g axis 1 team [[0, 1, 2, 3], [4, 5, 6, 7]] : memref<2x1x8xf32> into memref<2x4x8xf32>
  %1 = comm.allreduce %v into %w sum team [[0, 4], [1, 5], [2, 6], [3, 7]] : memref<8xf32> into memref<8xf32>
  %2 = comm.reduce_scatter %g into %s sum axis 1 team [[0, 1], [2, 3]] : memref<2x4x8xf32> into memref<2x2x8xf32>
  return
}

// Allgather with the default axis, an explicit axis, and a written default.
// CHECK-LABEL: func.func @allgather
// CHECK-SAME: ([[A:%.*]]: memref<1x256x1024xbf16>, [[G:%.*]]: memref<4x256x1024xbf16>, [[H:%.*]]: memref<1x1024x1024xbf16>)
// CHECK-NEXT: [[R0:%.*]] = comm.allgather [[A]] into [[G]] team [0, 1, 2, 3] : memref<1x256x1024xbf16> into memref<4x256x1024xbf16>
// CHECK-NEXT: [[R1:%.*]] = comm.allgather [[A]] into [[H]] axis 1 team [3, 2, 1, 0] : memref<1x256x1024xbf16> into memref<1x1024x1024xbf16>
// CHECK-NEXT: [[R2:%.*]] = comm.allgather [[A]] into [[G]] team [0, 1, 2, 3] : memref<1x256x1024xbf16> into memref<4x256x1024xbf16>
// CHECK-NEXT: comm.wait [[R0]]
// CHECK-NEXT: comm.wait [[R1]]
// CHECK-NEXT: comm.wait [[R2]]
func.func @allgather(%a: memref<1x256x1024xbf16>, %g: memref<4x256x1024xbf16>,
                     %h: memref<1x1024x1024xbf16>) {
  %r0 = comm.allgather %a into %g team [0, 1, 2, 3]
      : memref<1x256x1024xbf16> into memref<4x256x1024xbf16>
  %r1 = comm.allgather %a into %h axis 1 team [3, 2, 1, 0]
      : memref<1x256x1024xbf16> into memref<1x1024x1024xbf16>
  %r2 = comm.allgather %a into %g axis 0 team [0, 1, 2, 3] on nccl
      : memref<1x256x1024xbf16> into memref<4x256x1024xbf16>
  comm.wait %r0
  comm.wait %r1
  comm.wait %r2
  return
}

// Allreduce with every reduce kind; `on nccl` written out is elided.
// CHECK-LABEL: func.func @allreduce
// CHECK-SAME: ([[A:%.*]]: memref<8xf32>, [[B:%.*]]: memref<8xf32>)
// CHECK-NEXT: comm.allreduce [[A]] into [[B]] sum team [0, 1] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.allreduce [[A]] into [[B]] prod team [0, 1] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.allreduce [[A]] into [[B]] max team [0, 1] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.allreduce [[A]] into [[B]] min team [0, 1] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.allreduce [[A]] into [[A]] avg team [1, 0] : memref<8xf32> into memref<8xf32>
func.func @allreduce(%a: memref<8xf32>, %b: memref<8xf32>) {
  %0 = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<8xf32>
  %1 = comm.allreduce %a into %b prod team [0, 1] : memref<8xf32> into memref<8xf32>
  %2 = comm.allreduce %a into %b max team [0, 1] on nccl : memref<8xf32> into memref<8xf32>
  %3 = comm.allreduce %a into %b min team [0, 1] : memref<8xf32> into memref<8xf32>
  %4 = comm.allreduce %a into %a avg team [1, 0] : memref<8xf32> into memref<8xf32>
  return
}

// Reduce-scatter with the default and an explicit axis.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: ([[A:%.*]]: memref<2x8xbf16>, [[B:%.*]]: memref<1x8xbf16>, [[C:%.*]]: memref<2x4xbf16>)
// CHECK-NEXT: comm.reduce_scatter [[A]] into [[B]] sum team [0, 1] : memref<2x8xbf16> into memref<1x8xbf16>
// CHECK-NEXT: comm.reduce_scatter [[A]] into [[C]] max axis 1 team [0, 1] : memref<2x8xbf16> into memref<2x4xbf16>
func.func @reduce_scatter(%a: memref<2x8xbf16>, %b: memref<1x8xbf16>, %c: memref<2x4xbf16>) {
  %0 = comm.reduce_scatter %a into %b sum team [0, 1] : memref<2x8xbf16> into memref<1x8xbf16>
  %1 = comm.reduce_scatter %a into %c max axis 1 team [0, 1] on nccl
      : memref<2x8xbf16> into memref<2x4xbf16>
  return
}

// Rooted collectives: broadcast, reduce, gather and scatter (with and without
// `axis`), rooted at a rank other than the first.
// CHECK-LABEL: func.func @rooted
// CHECK-SAME: ([[A:%.*]]: memref<1x8xf16>, [[B:%.*]]: memref<1x8xf16>, [[G:%.*]]: memref<2x8xf16>, [[H:%.*]]: memref<1x16xf16>)
// CHECK-NEXT: comm.broadcast [[A]] into [[B]] root 1 team [0, 1] : memref<1x8xf16> into memref<1x8xf16>
// CHECK-NEXT: comm.reduce [[A]] into [[B]] prod root 0 team [0, 1] : memref<1x8xf16> into memref<1x8xf16>
// CHECK-NEXT: comm.reduce [[A]] into [[B]] avg root 1 team [0, 1] : memref<1x8xf16> into memref<1x8xf16>
// CHECK-NEXT: comm.gather [[A]] into [[G]] root 0 team [0, 1] : memref<1x8xf16> into memref<2x8xf16>
// CHECK-NEXT: comm.gather [[A]] into [[H]] root 1 axis 1 team [0, 1] : memref<1x8xf16> into memref<1x16xf16>
// CHECK-NEXT: comm.scatter [[G]] into [[A]] root 0 team [0, 1] : memref<2x8xf16> into memref<1x8xf16>
// CHECK-NEXT: comm.scatter [[H]] into [[B]] root 1 axis 1 team [0, 1] : memref<1x16xf16> into memref<1x8xf16>
func.func @rooted(%a: memref<1x8xf16>, %b: memref<1x8xf16>, %g: memref<2x8xf16>,
                  %h: memref<1x16xf16>) {
  %0 = comm.broadcast %a into %b root 1 team [0, 1] : memref<1x8xf16> into memref<1x8xf16>
  %1 = comm.reduce %a into %b prod root 0 team [0, 1] : memref<1x8xf16> into memref<1x8xf16>
  %2 = comm.reduce %a into %b avg root 1 team [0, 1] on nccl
      : memref<1x8xf16> into memref<1x8xf16>
  %3 = comm.gather %a into %g root 0 team [0, 1] : memref<1x8xf16> into memref<2x8xf16>
  %4 = comm.gather %a into %h root 1 axis 1 team [0, 1] : memref<1x8xf16> into memref<1x16xf16>
  %5 = comm.scatter %g into %a root 0 team [0, 1] : memref<2x8xf16> into memref<1x8xf16>
  %6 = comm.scatter %h into %b root 1 axis 1 team [0, 1] : memref<1x16xf16> into memref<1x8xf16>
  return
}

// Broadcast and reduce rooted at a value (a loop's index, a rank from
// arguments), besides a constant.
// CHECK-LABEL: func.func @value_roots
// CHECK-SAME: ([[A:%.*]]: memref<8xf32>, [[B:%.*]]: memref<8xf32>, [[I:%.*]]: index)
// CHECK-NEXT: [[R0:%.*]] = comm.broadcast [[A]] into [[B]] root [[I]] team [0, 1, 2] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: [[R1:%.*]] = comm.reduce [[A]] into [[B]] sum root [[I]] team [2, 0, 1] : memref<8xf32> into memref<8xf32>
// CHECK-NEXT: comm.wait [[R0]]
// CHECK-NEXT: comm.wait [[R1]]
func.func @value_roots(%a: memref<8xf32>, %b: memref<8xf32>, %i: index) {
  %0 = comm.broadcast %a into %b root %i team [0, 1, 2] : memref<8xf32> into memref<8xf32>
  %1 = comm.reduce %a into %b sum root %i team [2, 0, 1] : memref<8xf32> into memref<8xf32>
  comm.wait %0
  comm.wait %1
  return
}

// All-to-all with the default and an explicit axis.
// CHECK-LABEL: func.func @alltoall
// CHECK-SAME: ([[A:%.*]]: memref<4x8xf32>, [[B:%.*]]: memref<4x8xf32>)
// CHECK-NEXT: comm.alltoall [[A]] into [[B]] team [0, 1] : memref<4x8xf32> into memref<4x8xf32>
// CHECK-NEXT: comm.alltoall [[A]] into [[B]] axis 1 team [0, 1, 2, 3] : memref<4x8xf32> into memref<4x8xf32>
func.func @alltoall(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %0 = comm.alltoall %a into %b team [0, 1] : memref<4x8xf32> into memref<4x8xf32>
  %1 = comm.alltoall %a into %b axis 1 team [0, 1, 2, 3] : memref<4x8xf32> into memref<4x8xf32>
  return
}

// All-to-all along an axis of dynamic extent: divisibility by the team size
// is left to run time.
// CHECK-LABEL: func.func @alltoall_dynamic
// CHECK-SAME: ([[A:%.*]]: memref<?x8xf32>, [[B:%.*]]: memref<?x8xf32>)
// CHECK-NEXT: comm.alltoall [[A]] into [[B]] team [0, 1, 2] : memref<?x8xf32> into memref<?x8xf32>
func.func @alltoall_dynamic(%a: memref<?x8xf32>, %b: memref<?x8xf32>) {
  %0 = comm.alltoall %a into %b team [0, 1, 2] : memref<?x8xf32> into memref<?x8xf32>
  return
}

// Send and receive on both backends, outside a group, each waited for;
// `cuda` ones after their buffers are shared.
// CHECK-LABEL: func.func @point_to_point
// CHECK-SAME: ([[A:%.*]]: memref<256x1024xbf16>, [[B:%.*]]: memref<256x1024xbf16>, [[P:%.*]]: index)
// CHECK-NEXT: [[S:%.*]] = comm.send [[A]] to [[P]] team [0, 1, 2, 3] : memref<256x1024xbf16>
// CHECK-NEXT: [[R:%.*]] = comm.recv [[B]] from [[P]] team [0, 1, 2, 3] : memref<256x1024xbf16>
// CHECK-NEXT: comm.wait [[S]]
// CHECK-NEXT: comm.wait [[R]]
// CHECK-NEXT: comm.share_mem_handles [[A]], [[B]] team [0, 1, 2, 3] : memref<256x1024xbf16>, memref<256x1024xbf16>
// CHECK-NEXT: [[C:%.*]] = arith.constant 2 : index
// CHECK-NEXT: [[CS:%.*]] = comm.send [[A]] to [[C]] team [0, 1, 2, 3] on cuda : memref<256x1024xbf16>
// CHECK-NEXT: [[CR:%.*]] = comm.recv [[B]] from [[P]] team [0, 1, 2, 3] on cuda : memref<256x1024xbf16>
// CHECK-NEXT: comm.wait [[CS]]
// CHECK-NEXT: comm.wait [[CR]]
func.func @point_to_point(%a: memref<256x1024xbf16>, %b: memref<256x1024xbf16>, %peer: index) {
  %s = comm.send %a to %peer team [0, 1, 2, 3] : memref<256x1024xbf16>
  %r = comm.recv %b from %peer team [0, 1, 2, 3] on nccl : memref<256x1024xbf16>
  comm.wait %s
  comm.wait %r
  comm.share_mem_handles %a, %b team [0, 1, 2, 3] : memref<256x1024xbf16>, memref<256x1024xbf16>
  %c2 = arith.constant 2 : index
  %cs = comm.send %a to %c2 team [0, 1, 2, 3] on cuda : memref<256x1024xbf16>
  %cr = comm.recv %b from %peer team [0, 1, 2, 3] on cuda : memref<256x1024xbf16>
  comm.wait %cs
  comm.wait %cr
  return
}

// Coalescing groups: two in a row, one empty; only the group's request is
// waited for.
// CHECK-LABEL: func.func @coalescing
// CHECK-SAME: ([[A:%.*]]: memref<8xf32>, [[B:%.*]]: memref<8xf32>, [[NEXT:%.*]]: index, [[PREV:%.*]]: index)
// CHECK-NEXT: comm.start_coalescing
// CHECK-NEXT: comm.send [[A]] to [[NEXT]] team [0, 1] : memref<8xf32>
// CHECK-NEXT: comm.recv [[B]] from [[PREV]] team [0, 1] : memref<8xf32>
// CHECK-NEXT: [[R:%.*]] = comm.end_coalescing
// CHECK-NEXT: comm.wait [[R]]
// CHECK-NEXT: comm.start_coalescing
// CHECK-NEXT: [[E:%.*]] = comm.end_coalescing
// CHECK-NEXT: comm.wait [[E]]
func.func @coalescing(%a: memref<8xf32>, %b: memref<8xf32>, %next: index, %prev: index) {
  comm.start_coalescing
  %s = comm.send %a to %next team [0, 1] : memref<8xf32>
  %q = comm.recv %b from %prev team [0, 1] : memref<8xf32>
  %r = comm.end_coalescing
  comm.wait %r
  comm.start_coalescing
  %e = comm.end_coalescing
  comm.wait %e
  return
}

// The P2P ring of the design: a group per step inside scf.for.
// CHECK-LABEL: func.func @ring
// CHECK: scf.for
// CHECK-NEXT: comm.start_coalescing
// CHECK-NEXT: comm.send
// CHECK-NEXT: comm.recv
// CHECK-NEXT: [[R:%.*]] = comm.end_coalescing
// CHECK-NEXT: comm.wait [[R]]
func.func @ring(%a: memref<8xf32>, %b: memref<8xf32>, %next: index, %prev: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    comm.start_coalescing
    %s = comm.send %a to %next team [0, 1, 2, 3] : memref<8xf32>
    %q = comm.recv %b from %prev team [0, 1, 2, 3] : memref<8xf32>
    %r = comm.end_coalescing
    comm.wait %r
  }
  return
}

// Sharing one buffer; a barrier with and without the (default) backend.
// CHECK-LABEL: func.func @sync
// CHECK-SAME: ([[A:%.*]]: memref<2x8xf32>)
// CHECK-NEXT: comm.share_mem_handles [[A]] team [0, 1] : memref<2x8xf32>
// CHECK-NEXT: comm.barrier team [0, 1, 2, 3]
// CHECK-NEXT: comm.barrier team [5]
func.func @sync(%a: memref<2x8xf32>) {
  comm.share_mem_handles %a team [0, 1] : memref<2x8xf32>
  comm.barrier team [0, 1, 2, 3]
  comm.barrier team [5] on nccl
  return
}

// A request passed across a function boundary.
// CHECK-LABEL: func.func @request_argument
// CHECK-SAME: ([[R:%.*]]: !comm.request)
// CHECK-NEXT: comm.wait [[R]]
func.func @request_argument(%r: !comm.request) {
  comm.wait %r
  return
}
