// RUN: hir-opt %s -split-input-file -verify-diagnostics

// One chunk per verifier rule of the comm dialect (CommDialect.cpp) and per
// ODS constraint.

// ODS: buffers hold f16, bf16, f32, i32 or i64 (not i8; integers.mlir and
// integers-invalid.mlir have the integer rules).
func.func @f(%a: memref<8xi8>, %b: memref<8xi8>) {
  // expected-error @+1 {{'comm.allreduce' op operand #0 must be memref of 16-bit float or bfloat16 type or 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'memref<8xi8>'}}
  %0 = comm.allreduce %a into %b sum team [0, 1] : memref<8xi8> into memref<8xi8>
  return
}

// -----

// ODS: wait takes a !comm.request (generic form to pass an index).
func.func @f(%i: index) {
  // expected-error @+1 {{'comm.wait' op operand #0 must be a posted communication, completed by comm.wait, but got 'index'}}
  "comm.wait"(%i) : (index) -> ()
  return
}

// -----

// ODS: the peer of a send is an index.
func.func @f(%a: memref<8xf32>, %p: i64) {
  // expected-error @+1 {{'comm.send' op operand #1 must be index, but got 'i64'}}
  %0 = "comm.send"(%a, %p) <{team = array<i64: 0, 1>}> : (memref<8xf32>, i64) -> !comm.request
  return
}

// -----

// team: not empty.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.allreduce' op team is empty}}
  %0 = comm.allreduce %a into %b sum team [] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// team: ranks are non-negative.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.broadcast' op team rank -2 is negative}}
  %0 = comm.broadcast %a into %b root 0 team [0, -2] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// team: ranks are distinct.
func.func @f(%a: memref<1x8xf32>, %b: memref<3x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op rank 1 appears twice in the team}}
  %0 = comm.allgather %a into %b team [0, 1, 1] : memref<1x8xf32> into memref<3x8xf32>
  return
}

// -----

// Collectives: the cuda backend moves point-to-point transfers only.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op backend 'cuda' moves point-to-point transfers only; collectives use 'nccl'}}
  %0 = comm.allgather %a into %b team [0, 1] on cuda : memref<1x8xf32> into memref<2x8xf32>
  return
}

// -----

// The backend rule holds for every collective (here allreduce).
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.allreduce' op backend 'cuda' moves point-to-point transfers only}}
  %0 = comm.allreduce %a into %b sum team [0, 1] on cuda : memref<8xf32> into memref<8xf32>
  return
}

// -----

// allgather: the team size times the input extent along the axis is the
// output extent.
func.func @f(%a: memref<1x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op team size 3 times input extent 1 along axis 0 is not the output extent 4}}
  %0 = comm.allgather %a into %b team [0, 1, 2] : memref<1x8xf32> into memref<4x8xf32>
  return
}

// -----

// allgather: the other axes agree.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x4xf32>) {
  // expected-error @+1 {{'comm.allgather' op input and output differ along axis 1: 8 vs 4}}
  %0 = comm.allgather %a into %b team [0, 1] : memref<1x8xf32> into memref<2x4xf32>
  return
}

// -----

// allgather: gathering along the wrong axis is caught.
func.func @f(%a: memref<1x8xf32>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op team size 2 times input extent 8 along axis 1 is not the output extent 8}}
  %0 = comm.allgather %a into %b axis 1 team [0, 1] : memref<1x8xf32> into memref<1x8xf32>
  return
}

// -----

// allgather: input and output have one rank.
func.func @f(%a: memref<8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op input and output differ in rank: 1 vs 2}}
  %0 = comm.allgather %a into %b team [0, 1] : memref<8xf32> into memref<2x8xf32>
  return
}

// -----

// allgather: input and output have one element type.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xbf16>) {
  // expected-error @+1 {{'comm.allgather' op input and output differ in element type: 'f32' vs 'bf16'}}
  %0 = comm.allgather %a into %b team [0, 1] : memref<1x8xf32> into memref<2x8xbf16>
  return
}

// -----

// allgather: the axis is in range.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op axis 2 is out of range for rank 2}}
  %0 = comm.allgather %a into %b axis 2 team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  return
}

// -----

// allgather: the axis is non-negative.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op axis -1 is out of range for rank 2}}
  %0 = comm.allgather %a into %b axis -1 team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  return
}

// -----

// allgather: buffers have static shapes.
func.func @f(%a: memref<?x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op buffers need static shapes}}
  %0 = comm.allgather %a into %b team [0, 1] : memref<?x8xf32> into memref<2x8xf32>
  return
}

// -----

// gather: the root is in the team.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.gather' op root 2 is not in the team}}
  %0 = comm.gather %a into %b root 2 team [0, 1] : memref<1x8xf32> into memref<2x8xf32>
  return
}

// -----

// gather: the output concatenates the team's inputs.
func.func @f(%a: memref<1x8xf32>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.gather' op team size 2 times input extent 1 along axis 0 is not the output extent 1}}
  %0 = comm.gather %a into %b root 0 team [0, 1] : memref<1x8xf32> into memref<1x8xf32>
  return
}

// -----

// gather: the cuda backend is point-to-point only.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.gather' op backend 'cuda' moves point-to-point transfers only}}
  %0 = comm.gather %a into %b root 0 team [0, 1] on cuda : memref<1x8xf32> into memref<2x8xf32>
  return
}

// -----

// reduce_scatter: the input extent along the axis is the team size times the
// output's.
func.func @f(%a: memref<4x8xf32>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.reduce_scatter' op team size 2 times output extent 1 along axis 0 is not the input extent 4}}
  %0 = comm.reduce_scatter %a into %b sum team [0, 1] : memref<4x8xf32> into memref<1x8xf32>
  return
}

// -----

// reduce_scatter: the other axes agree.
func.func @f(%a: memref<2x8xf32>, %b: memref<1x4xf32>) {
  // expected-error @+1 {{'comm.reduce_scatter' op output and input differ along axis 0: 1 vs 2}}
  %0 = comm.reduce_scatter %a into %b sum axis 1 team [0, 1] : memref<2x8xf32> into memref<1x4xf32>
  return
}

// -----

// reduce_scatter: the axis is in range.
func.func @f(%a: memref<2x8xf32>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.reduce_scatter' op axis 5 is out of range for rank 2}}
  %0 = comm.reduce_scatter %a into %b max axis 5 team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
  return
}

// -----

// reduce_scatter: input and output have one element type.
func.func @f(%a: memref<2x8xf16>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.reduce_scatter' op output and input differ in element type: 'f32' vs 'f16'}}
  %0 = comm.reduce_scatter %a into %b sum team [0, 1] : memref<2x8xf16> into memref<1x8xf32>
  return
}

// -----

// reduce_scatter: the cuda backend is point-to-point only.
func.func @f(%a: memref<2x8xf32>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.reduce_scatter' op backend 'cuda' moves point-to-point transfers only}}
  %0 = comm.reduce_scatter %a into %b sum team [0, 1] on cuda : memref<2x8xf32> into memref<1x8xf32>
  return
}

// -----

// scatter: the root is in the team.
func.func @f(%a: memref<2x8xf32>, %b: memref<1x8xf32>) {
  // expected-error @+1 {{'comm.scatter' op root -1 is not in the team}}
  %0 = comm.scatter %a into %b root -1 team [0, 1] : memref<2x8xf32> into memref<1x8xf32>
  return
}

// -----

// scatter: the input is the team's outputs concatenated.
func.func @f(%a: memref<2x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.scatter' op team size 2 times output extent 2 along axis 0 is not the input extent 2}}
  %0 = comm.scatter %a into %b root 0 team [0, 1] : memref<2x8xf32> into memref<2x8xf32>
  return
}

// -----

// scatter: input and output have one rank.
func.func @f(%a: memref<2x8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.scatter' op output and input differ in rank: 1 vs 2}}
  %0 = comm.scatter %a into %b root 0 team [0, 1] : memref<2x8xf32> into memref<8xf32>
  return
}

// -----

// allreduce: input and output have one shape.
func.func @f(%a: memref<8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'comm.allreduce' op input and output differ in shape: 8 vs 4}}
  %0 = comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<4xf32>
  return
}

// -----

// allreduce: input and output have one element type.
func.func @f(%a: memref<8xf32>, %b: memref<8xbf16>) {
  // expected-error @+1 {{'comm.allreduce' op input and output differ in element type: 'f32' vs 'bf16'}}
  %0 = comm.allreduce %a into %b avg team [0, 1] : memref<8xf32> into memref<8xbf16>
  return
}

// -----

// broadcast: the root is in the team.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.broadcast' op root 4 is not in the team}}
  %0 = comm.broadcast %a into %b root 4 team [0, 1, 2, 3] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// broadcast: a root value that is a constant is in the team too.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'comm.broadcast' op root 4 is not in the team}}
  %0 = comm.broadcast %a into %b root %c4 team [0, 1, 2, 3] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// broadcast: a root attribute and a root value are not both given.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %i: index) {
  // expected-error @+1 {{'comm.broadcast' op has both a constant root attribute and a root value; give one}}
  %0 = "comm.broadcast"(%a, %b, %i) <{root = 0 : i64, team = array<i64: 0, 1>}> : (memref<8xf32>, memref<8xf32>, index) -> !comm.request
  return
}

// -----

// broadcast: some root is given.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.broadcast' op has no root: give a constant 'root' attribute or a root value}}
  %0 = "comm.broadcast"(%a, %b) <{team = array<i64: 0, 1>}> : (memref<8xf32>, memref<8xf32>) -> !comm.request
  return
}

// -----

// broadcast: input and output have one shape.
func.func @f(%a: memref<8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.broadcast' op input and output differ in shape: 8 vs 2x8}}
  %0 = comm.broadcast %a into %b root 0 team [0, 1] : memref<8xf32> into memref<2x8xf32>
  return
}

// -----

// broadcast: the cuda backend is point-to-point only.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.broadcast' op backend 'cuda' moves point-to-point transfers only}}
  %0 = comm.broadcast %a into %b root 0 team [0, 1] on cuda : memref<8xf32> into memref<8xf32>
  return
}

// -----

// reduce: the root is in the team.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.reduce' op root 1 is not in the team}}
  %0 = comm.reduce %a into %b min root 1 team [2, 3] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// reduce: a root value that is a constant is in the team.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'comm.reduce' op root 0 is not in the team}}
  %0 = comm.reduce %a into %b max root %c0 team [2, 3] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// reduce: some root is given.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.reduce' op has no root: give a constant 'root' attribute or a root value}}
  %0 = "comm.reduce"(%a, %b) <{kind = 0 : i32, team = array<i64: 0, 1>}> : (memref<8xf32>, memref<8xf32>) -> !comm.request
  return
}

// -----

// reduce: input and output have one element type.
func.func @f(%a: memref<8xf16>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.reduce' op input and output differ in element type: 'f16' vs 'f32'}}
  %0 = comm.reduce %a into %b sum root 0 team [0, 1] : memref<8xf16> into memref<8xf32>
  return
}

// -----

// alltoall: input and output have one shape.
func.func @f(%a: memref<4x8xf32>, %b: memref<8x4xf32>) {
  // expected-error @+1 {{'comm.alltoall' op input and output differ in shape: 4x8 vs 8x4}}
  %0 = comm.alltoall %a into %b team [0, 1] : memref<4x8xf32> into memref<8x4xf32>
  return
}

// -----

// alltoall: the axis is in range.
func.func @f(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'comm.alltoall' op axis 2 is out of range for rank 2}}
  %0 = comm.alltoall %a into %b axis 2 team [0, 1] : memref<4x8xf32> into memref<4x8xf32>
  return
}

// -----

// alltoall: the team size divides the extent along the axis.
func.func @f(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'comm.alltoall' op team size 3 does not divide axis 1 of extent 8}}
  %0 = comm.alltoall %a into %b axis 1 team [0, 1, 2] : memref<4x8xf32> into memref<4x8xf32>
  return
}

// -----

// alltoall: the cuda backend is point-to-point only.
func.func @f(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'comm.alltoall' op backend 'cuda' moves point-to-point transfers only}}
  %0 = comm.alltoall %a into %b team [0, 1] on cuda : memref<4x8xf32> into memref<4x8xf32>
  return
}

// -----

// send: the team is not empty.
func.func @f(%a: memref<8xf32>, %p: index) {
  // expected-error @+1 {{'comm.send' op team is empty}}
  %0 = comm.send %a to %p team [] : memref<8xf32>
  return
}

// -----

// recv: team ranks are distinct.
func.func @f(%a: memref<8xf32>, %p: index) {
  // expected-error @+1 {{'comm.recv' op rank 0 appears twice in the team}}
  %0 = comm.recv %a from %p team [0, 0] : memref<8xf32>
  return
}

// -----

// send: a constant peer is in the team.
func.func @f(%a: memref<8xf32>) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'comm.send' op peer 4 is not in the team}}
  %0 = comm.send %a to %c4 team [0, 1, 2, 3] : memref<8xf32>
  return
}

// -----

// recv: a constant peer is in the team.
func.func @f(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'comm.recv' op peer 0 is not in the team}}
  %0 = comm.recv %a from %c0 team [1, 2] : memref<8xf32>
  return
}

// -----

// send: a cuda transfer cannot be coalesced.
func.func @f(%a: memref<8xf32>, %p: index) {
  comm.start_coalescing
  // expected-error @+1 {{'comm.send' op 'cuda' transfers cannot be coalesced; only 'nccl' ones can}}
  %0 = comm.send %a to %p team [0, 1] on cuda : memref<8xf32>
  %1 = comm.end_coalescing
  return
}

// -----

// recv: a cuda transfer cannot be coalesced, wherever it is in the group.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %p: index) {
  comm.start_coalescing
  %0 = comm.send %a to %p team [0, 1] : memref<8xf32>
  // expected-error @+1 {{'comm.recv' op 'cuda' transfers cannot be coalesced}}
  %1 = comm.recv %b from %p team [0, 1] on cuda : memref<8xf32>
  %2 = comm.end_coalescing
  return
}

// -----

// start_coalescing: groups do not nest.
func.func @f() {
  // expected-error @+1 {{'comm.start_coalescing' op coalescing groups do not nest}}
  comm.start_coalescing
  comm.start_coalescing
  %0 = comm.end_coalescing
  %1 = comm.end_coalescing
  return
}

// -----

// start_coalescing: a group is closed in the same block.
func.func @f(%a: memref<8xf32>, %p: index) {
  // expected-error @+1 {{'comm.start_coalescing' op group is not closed by a comm.end_coalescing in the same block}}
  comm.start_coalescing
  %0 = comm.send %a to %p team [0, 1] : memref<8xf32>
  return
}

// -----

// start_coalescing: an end in a nested block does not close the group.
func.func @f(%c: i1) {
  // expected-error @+1 {{'comm.start_coalescing' op group is not closed by a comm.end_coalescing in the same block}}
  comm.start_coalescing
  scf.if %c {
    %0 = comm.end_coalescing
  }
  return
}

// -----

// end_coalescing: a start precedes it in the block.
func.func @f() {
  // expected-error @+1 {{'comm.end_coalescing' op closes no group: no comm.start_coalescing before it in the same block}}
  %0 = comm.end_coalescing
  return
}

// -----

// end_coalescing: a group is closed once.
func.func @f() {
  comm.start_coalescing
  %0 = comm.end_coalescing
  // expected-error @+1 {{'comm.end_coalescing' op closes no group}}
  %1 = comm.end_coalescing
  return
}

// -----

// wait: not on a send inside a group (wait for the group instead).
func.func @f(%a: memref<8xf32>, %p: index) {
  comm.start_coalescing
  %0 = comm.send %a to %p team [0, 1] : memref<8xf32>
  %1 = comm.end_coalescing
  // expected-error @+1 {{'comm.wait' op waits for a 'comm.send' inside a coalescing group; wait for the group's comm.end_coalescing instead}}
  comm.wait %0
  return
}

// -----

// wait: not on a recv inside a group.
func.func @f(%a: memref<8xf32>, %p: index) {
  comm.start_coalescing
  %0 = comm.recv %a from %p team [0, 1] : memref<8xf32>
  %1 = comm.end_coalescing
  // expected-error @+1 {{'comm.wait' op waits for a 'comm.recv' inside a coalescing group}}
  comm.wait %0
  return
}

// -----

// share_mem_handles: at least one buffer (generic form: the custom one needs a
// type).
func.func @f() {
  // expected-error @+1 {{'comm.share_mem_handles' op shares no buffer}}
  "comm.share_mem_handles"() <{team = array<i64: 0, 1>}> : () -> ()
  return
}

// -----

// share_mem_handles: the team is not empty.
func.func @f(%a: memref<8xf32>) {
  // expected-error @+1 {{'comm.share_mem_handles' op team is empty}}
  comm.share_mem_handles %a team [] : memref<8xf32>
  return
}

// -----

// share_mem_handles: team ranks are distinct.
func.func @f(%a: memref<8xf32>) {
  // expected-error @+1 {{'comm.share_mem_handles' op rank 3 appears twice in the team}}
  comm.share_mem_handles %a team [3, 1, 3] : memref<8xf32>
  return
}

// -----

// barrier: the team is not empty.
func.func @f() {
  // expected-error @+1 {{'comm.barrier' op team is empty}}
  comm.barrier team []
  return
}

// -----

// barrier: team ranks are non-negative.
func.func @f() {
  // expected-error @+1 {{'comm.barrier' op team rank -1 is negative}}
  comm.barrier team [-1, 0]
  return
}

// -----

// barrier: the cuda backend is point-to-point only.
func.func @f() {
  // expected-error @+1 {{'comm.barrier' op backend 'cuda' moves point-to-point transfers only; collectives use 'nccl'}}
  comm.barrier team [0, 1] on cuda
  return
}

// -----

// every op: the element count of a buffer fits in int64.
func.func @f(%a: memref<8xf32>, %b: memref<4294967296x4294967296x8xf32>) {
  // expected-error @+1 {{'comm.allreduce' op operand #1: buffer of 2^67 elements overflows 64-bit sizes}}
  comm.allreduce %a into %b sum team [0, 1] : memref<8xf32> into memref<4294967296x4294967296x8xf32>
  return
}

// -----

// Several teams have one size, which divides the ranks listed.
func.func @f(%a: memref<1x8xf32>, %b: memref<2x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op team_size 3 does not divide the 4 ranks of the teams}}
  %0 = "comm.allgather"(%a, %b) <{axis = 0 : i64, backend = 0 : i32, team = array<i64: 0, 1, 2, 3>, team_size = 3 : i64}> : (memref<1x8xf32>, memref<2x8xf32>) -> !comm.request
  return
}

// -----

// A rooted collective runs within one team.
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'comm.broadcast' op has a root, so it runs within one team, not several}}
  %0 = comm.broadcast %a into %b root 0 team [[0, 1], [2, 3]] : memref<8xf32> into memref<8xf32>
  return
}

// -----

// An allgather over teams of 2 doubles its axis, whatever the number of teams.
func.func @f(%a: memref<1x8xf32>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'comm.allgather' op team size 2 times input extent 1 along axis 0 is not the output extent 4}}
  %0 = comm.allgather %a into %b team [[0, 1], [2, 3]] : memref<1x8xf32> into memref<4x8xf32>
  return
}
