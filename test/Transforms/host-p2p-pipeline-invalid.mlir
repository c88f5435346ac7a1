// RUN: hir-opt %s --split-input-file --verify-diagnostics --host-p2p-pipeline
// RUN: not hir-opt %s --pass-pipeline='builtin.module(func.func(host-p2p-pipeline{backend=ucx}))' 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: option 'backend' must be one of nccl|cuda, not 'ucx'

// Each chunk is a collective over a stream loop's axis, where the ring is
// what host-p2p-pipeline is for, that it cannot build.

// A rooted collective has no ring.
func.func @gather(%a: memref<1x8xf32>, %g: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'comm.gather' communicates along axis 0, the axis a stream loop runs over; host-p2p-pipeline makes rings of comm.allgather and comm.reduce_scatter only}}
  %r = comm.gather %a into %g root 0 team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A reduction the host cannot combine partial blocks with.
func.func @reduce_kind(%p: memref<4x8xf32>, %c: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %pi = host.select %p[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%pi : memref<8xf32, strided<[1], offset: ?>>) outs(%pi : memref<8xf32, strided<[1], offset: ?>>)
  }
  // expected-error @+1 {{'comm.reduce_scatter' has no ring for its reduce kind: the ring combines the partial blocks with host.sum or host.amax (kinds 'sum' and 'max')}}
  %r = comm.reduce_scatter %p into %c prod team [0, 1, 2, 3] : memref<4x8xf32> into memref<1x8xf32>
  comm.wait %r
  return
}

// -----

// Positions in the team are ranks only when the team is the whole mesh in order.
func.func @sub_team(%a: memref<1x8xf32>, %g: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{team [2, 3] is not the whole mesh in order, ranks 0 to 1: the ring takes position r in the team to be rank r}}
  %r = comm.allgather %a into %g team [2, 3] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

func.func @permuted_team(%a: memref<1x8xf32>, %g: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{team [1, 0] is not the whole mesh in order, ranks 0 to 1}}
  %r = comm.allgather %a into %g team [1, 0] : memref<1x8xf32> into memref<2x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c2 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// One step per rank: a loop of 8 steps over a team of 4.
func.func @extent(%a: memref<2x8xf32>, %g: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{the stream loop must run from 0 to 4 step 1, one step per rank of the team}}
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<2x8xf32> into memref<8x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c8 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<8x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// One slice per rank: two rows per rank, and a loop over only four.
func.func @slices_per_rank(%a: memref<2x8xf32>, %g: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{axis 0 of the output must have extent 4, one slice per rank of the team}}
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<2x8xf32> into memref<8x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<8x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// An allgather after the loop that reads it is not what the loop reads.
func.func @allgather_after_loop(%a: memref<1x8xf32>, %g: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  // expected-error @+1 {{'comm.allgather' must come before the stream loop that reads its output along axis 0, in the same block}}
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  return
}

// -----

// Two stream loops slice one gathered buffer.
func.func @two_loops(%a: memref<1x8xf32>, %g: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'comm.allgather' is sliced along axis 0 by 2 stream loops; a ring runs in one}}
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// The request is the ring's to complete: waited for once, used nowhere else.
func.func @request_used(%a: memref<1x8xf32>, %g: memref<4x8xf32>) -> !comm.request {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{the request of 'comm.allgather' must be waited for by one comm.wait in its block and used nowhere else}}
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return %r : !comm.request
}

// -----

// Between the allgather and the loop, the gathered buffer is not filled yet.
func.func @used_between(%a: memref<1x8xf32>, %g: memref<4x8xf32>, %h: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  // expected-error @+1 {{'host.copy' uses a buffer of 'comm.allgather' between it and its stream loop, where the ring moves it}}
  host.copy ins(%g : memref<4x8xf32>) outs(%h : memref<4x8xf32>)
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// The ring sends the allgather's input during the loop; the loop may not use it.
func.func @input_in_loop(%a: memref<1x8xf32>, %g: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    // expected-error @+1 {{'host.neg' uses a buffer of 'comm.allgather' in its stream loop, where the ring moves it}}
    host.neg ins(%a : memref<1x8xf32>) outs(%a : memref<1x8xf32>)
  }
  return
}

// -----

// In the loop, the gathered buffer is only read through slices at the loop index.
func.func @whole_buffer_in_loop(%a: memref<1x8xf32>, %g: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    // expected-error @+1 {{'host.neg' uses the output of 'comm.allgather' in its stream loop otherwise than as a host.select along axis 0 at the loop index in the loop body; the ring moves those slices}}
    host.neg ins(%g : memref<4x8xf32>) outs(%g : memref<4x8xf32>)
  }
  return
}

// -----

// The ring makes the index a step: nothing but the stream and the slices may read it.
func.func @index_used(%a: memref<1x8xf32>, %g: memref<4x8xf32>, %h: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    // expected-error @+1 {{'arith.muli' uses the index of a stream loop that becomes a ring, where the index is a step and no longer a slice; only host.stream_from_pool (of the index or of arith.remui of it) and host.select may use it}}
    %j = arith.muli %i, %c2 : index
    %hj = host.select %h[0][%j] : memref<8x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.copy ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%hj : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// The index picks nothing but the slices, even rotated as the streams are.
func.func @rotated_index_used(%a: memref<1x8xf32>, %g: memref<4x8xf32>, %h: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main streams %c2 {
  ^bb0(%i: index, %s: !host.stream):
    // expected-error @+1 {{'arith.remui' uses the index of a stream loop that becomes a ring}}
    %p = arith.remui %i, %c2 : index
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %hp = host.select %h[0][%p] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.copy ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%hp : memref<8xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Slices arrive on the step's stream: reading one on another is a race.
func.func @off_stream(%a: memref<1x8xf32>, %g: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %main = host.get_current_stream : !host.stream
  %r = comm.allgather %a into %g team [0, 1, 2, 3] : memref<1x8xf32> into memref<4x8xf32>
  comm.wait %r
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %gi = host.select %g[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.set_current_stream %main
    // expected-error @+1 {{'host.neg' uses a slice of the output of 'comm.allgather' off the step's stream: slices must be taken and used between host.set_current_stream to host.stream_from_pool of the loop index and the next stream switch}}
    host.neg ins(%gi : memref<8xf32, strided<[1], offset: ?>>) outs(%gi : memref<8xf32, strided<[1], offset: ?>>)
    host.set_current_stream %s
  }
  return
}

// -----

// The reduce-scatter's output is written after the loop: the loop may not use it.
func.func @output_in_loop(%p: memref<4x8xf32>, %c: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %pi = host.select %p[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    // expected-error @+1 {{'host.neg' uses a buffer of 'comm.reduce_scatter' in its stream loop, where the ring moves it}}
    host.neg ins(%c : memref<1x8xf32>) outs(%c : memref<1x8xf32>)
  }
  %r = comm.reduce_scatter %p into %c sum team [0, 1, 2, 3] : memref<4x8xf32> into memref<1x8xf32>
  comm.wait %r
  return
}

// -----

// A reduce-scatter of a whole view (the unit didx axis viewed away): the view
// is the collective's, and no other op may use it before the ring has run.
func.func @view_used_between(%p: memref<1x4x8xf32>, %c: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %pi = host.select %p[1][%i] : memref<1x4x8xf32> to memref<1x8xf32, strided<[32, 1], offset: ?>>
    host.neg ins(%pi : memref<1x8xf32, strided<[32, 1], offset: ?>>) outs(%pi : memref<1x8xf32, strided<[32, 1], offset: ?>>)
  }
  %whole = host.select %p[0][%c0] : memref<1x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  // expected-error @+1 {{'host.neg' uses a buffer of 'comm.reduce_scatter' between it and its stream loop, where the ring moves it}}
  host.neg ins(%whole : memref<4x8xf32, strided<[8, 1], offset: ?>>) outs(%whole : memref<4x8xf32, strided<[8, 1], offset: ?>>)
  %r = comm.reduce_scatter %whole into %c sum team [0, 1, 2, 3] : memref<4x8xf32, strided<[8, 1], offset: ?>> into memref<1x8xf32>
  comm.wait %r
  return
}

// -----

// The loop slices the buffer the reduce-scatter views along axis 1, the
// view's axis 0: it may use that buffer only through those slices.
func.func @viewed_buffer_in_loop(%p: memref<1x4x8xf32>, %c: memref<1x8xf32>) {
  %c0 = arith.constant 0 : index
  %main = host.get_current_stream : !host.stream
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  host.stream_for %c0 to %c4 step %c1 from %main {
  ^bb0(%i: index, %s: !host.stream):
    %pi = host.select %p[1][%i] : memref<1x4x8xf32> to memref<1x8xf32, strided<[32, 1], offset: ?>>
    // expected-error @+1 {{'host.neg' uses the input of 'comm.reduce_scatter' in its stream loop otherwise than as a host.select along axis 1 at the loop index in the loop body; the ring moves those slices}}
    host.neg ins(%p : memref<1x4x8xf32>) outs(%p : memref<1x4x8xf32>)
  }
  %whole = host.select %p[0][%c0] : memref<1x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
  %r = comm.reduce_scatter %whole into %c sum team [0, 1, 2, 3] : memref<4x8xf32, strided<[8, 1], offset: ?>> into memref<1x8xf32>
  comm.wait %r
  return
}
