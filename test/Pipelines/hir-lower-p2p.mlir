// hir-lower on the P2P examples (seeds 000 and 001): without p2p the allgather
// along the stream axis runs whole (before the loop of AG+matmul); with
// p2p=nccl it is a ring of coalesced send/recv, with p2p=cuda a ring of
// CUDA-IPC copies, in the parts host-p2p-pipeline chooses or whole steps
// (ring-chunks=1). A lone allgather (allgather_p2p: a DIDx -> Stream set) is
// a ring too: convert-fusion-to-host gives it a loop over its output's
// slices, which the ring fills.
//
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/allgather_p2p.mlir | FileCheck %s --check-prefix=ALLGATHER-P2P
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl})' %examples/allgather_p2p.mlir | FileCheck %s --check-prefix=ALLGATHER-P2P-NCCL
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' %examples/allgather_p2p.mlir | FileCheck %s --check-prefix=ALLGATHER-P2P-CUDA
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower)' %examples/ag_matmul_p2p.mlir | FileCheck %s --check-prefix=AG-MATMUL-P2P
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=nccl ring-chunks=1})' %examples/ag_matmul_p2p.mlir | FileCheck %s --check-prefix=AG-MATMUL-P2P-NCCL
// RUN: hir-opt --pass-pipeline='builtin.module(hir-lower{p2p=cuda})' %examples/ag_matmul_p2p.mlir | FileCheck %s --check-prefix=AG-MATMUL-P2P-CUDA

// ----- allgather_p2p.mlir

// ALLGATHER-P2P-LABEL: func.func @allgather_p2p(
// ALLGATHER-P2P-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x64xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x64xf32>) {
// ALLGATHER-P2P-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[ARG1]] team [0, 1, 2, 3] : memref<1x64xf32> into memref<4x64xf32>
// ALLGATHER-P2P-NEXT: comm.wait [[REQ]]
// ALLGATHER-P2P-NEXT: return
// ALLGATHER-P2P-NEXT: }

// With p2p the lone allgather is a ring over the slices of the output: step i
// receives slice (r + i) mod 4 straight into the output (in the two parts
// host-p2p-pipeline chooses) and sends this rank's shard on; at its own slice
// the rank copies its shard.
// ALLGATHER-P2P-NCCL-LABEL: func.func @allgather_p2p(
// ALLGATHER-P2P-NCCL-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x64xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x64xf32>) {
// ALLGATHER-P2P-NCCL-NOT: comm.allgather
// ALLGATHER-P2P-NCCL: scf.for
// ALLGATHER-P2P-NCCL: [[SLICE:%[a-zA-Z0-9_]+]] = host.select [[ARG1]][0]{{\[}}
// ALLGATHER-P2P-NCCL: [[PART:%[a-zA-Z0-9_]+]] = memref.subview [[SLICE]]
// ALLGATHER-P2P-NCCL: host.copy
// ALLGATHER-P2P-NCCL: comm.start_coalescing
// ALLGATHER-P2P-NCCL-NEXT: comm.recv [[PART]] from
// ALLGATHER-P2P-NCCL-NEXT: comm.send
// ALLGATHER-P2P-NCCL-NEXT: comm.end_coalescing
// ALLGATHER-P2P-NCCL-NOT: comm.allgather
// ALLGATHER-P2P-NCCL: return

// ALLGATHER-P2P-CUDA-LABEL: func.func @allgather_p2p(
// ALLGATHER-P2P-CUDA-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x64xf32>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<4x64xf32>) {
// ALLGATHER-P2P-CUDA-NOT: comm.allgather
// ALLGATHER-P2P-CUDA: comm.share_mem_handles [[ARG0]], [[ARG1]] team [0, 1, 2, 3]
// ALLGATHER-P2P-CUDA: comm.recv {{.*}} on cuda
// ALLGATHER-P2P-CUDA: comm.send {{.*}} on cuda
// ALLGATHER-P2P-CUDA-NOT: comm.allgather
// ALLGATHER-P2P-CUDA: return

// ----- ag_matmul_p2p.mlir

// AG-MATMUL-P2P-LABEL: func.func @ag_matmul_p2p(
// AG-MATMUL-P2P-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x256x1024xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1024x2048xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x256x2048xbf16>) {
// AG-MATMUL-P2P-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-MATMUL-P2P-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x256x1024xbf16>
// AG-MATMUL-P2P-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.allgather [[ARG0]] into [[BUF]] team [0, 1, 2, 3] : memref<1x256x1024xbf16> into memref<4x256x1024xbf16>
// AG-MATMUL-P2P-NEXT: comm.wait [[REQ]]
// AG-MATMUL-P2P-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-P2P-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-MATMUL-P2P-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-P2P-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// AG-MATMUL-P2P-NEXT: host.set_current_stream [[S]]
// AG-MATMUL-P2P-NEXT: host.sync_stream [[MAIN]]
// AG-MATMUL-P2P-NEXT: }
// AG-MATMUL-P2P-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// AG-MATMUL-P2P-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[I_1]]{{\]}} : memref<4x256x1024xbf16> to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[I_1]]{{\]}} : memref<4x256x2048xbf16> to memref<256x2048xbf16, strided<[2048, 1], offset: ?>>
// AG-MATMUL-P2P-NEXT: host.matmul ins([[VIEW]], [[ARG1]] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>, memref<1024x2048xbf16>) outs([[VIEW_1]] : memref<256x2048xbf16, strided<[2048, 1], offset: ?>>)
// AG-MATMUL-P2P-NEXT: }
// AG-MATMUL-P2P-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-NEXT: scf.for [[JOIN_I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-NEXT: [[JOIN_S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[JOIN_I_1]] : !host.stream
// AG-MATMUL-P2P-NEXT: host.sync_stream [[JOIN_S_1]]
// AG-MATMUL-P2P-NEXT: }
// AG-MATMUL-P2P-NEXT: host.dealloc [[BUF]] : memref<4x256x1024xbf16>
// AG-MATMUL-P2P-NEXT: return
// AG-MATMUL-P2P-NEXT: }

// AG-MATMUL-P2P-NCCL-LABEL: func.func @ag_matmul_p2p(
// AG-MATMUL-P2P-NCCL-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x256x1024xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1024x2048xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x256x2048xbf16>) {
// AG-MATMUL-P2P-NCCL-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-MATMUL-P2P-NCCL-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x256x1024xbf16>
// AG-MATMUL-P2P-NCCL-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-P2P-NCCL-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-MATMUL-P2P-NCCL-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-P2P-NCCL-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-NCCL-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// AG-MATMUL-P2P-NCCL-NEXT: host.set_current_stream [[S]]
// AG-MATMUL-P2P-NCCL-NEXT: host.sync_stream [[MAIN]]
// AG-MATMUL-P2P-NCCL-NEXT: }
// AG-MATMUL-P2P-NCCL-NEXT: [[RANK:%[a-zA-Z0-9_]+]] = host.rank : index
// AG-MATMUL-P2P-NCCL-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[C0]]{{\]}} : memref<1x256x1024xbf16> to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: scf.for [[I_1:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-NCCL-NEXT: [[V4:%[a-zA-Z0-9_]+]] = arith.addi [[RANK]], [[I_1]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[V5:%[a-zA-Z0-9_]+]] = arith.remui [[V4]], [[C4]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[V6:%[a-zA-Z0-9_]+]] = arith.addi [[C4]], [[RANK]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[V7:%[a-zA-Z0-9_]+]] = arith.subi [[V6]], [[I_1]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[V8:%[a-zA-Z0-9_]+]] = arith.remui [[V7]], [[C4]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[V9:%[a-zA-Z0-9_]+]] = arith.cmpi eq, [[V5]], [[RANK]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I_1]] : !host.stream
// AG-MATMUL-P2P-NCCL-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-NCCL-NEXT: [[BACK:%[a-zA-Z0-9_]+]] = arith.addi [[I_1]], [[C4]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[BEFORE:%[a-zA-Z0-9_]+]] = arith.subi [[BACK]], {{%[a-zA-Z0-9_]+}} : index
// AG-MATMUL-P2P-NCCL-NEXT: [[PREVIOUS:%[a-zA-Z0-9_]+]] = arith.remui [[BEFORE]], [[C4]] : index
// AG-MATMUL-P2P-NCCL-NEXT: [[PS:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[PREVIOUS]] : !host.stream
// AG-MATMUL-P2P-NCCL-NEXT: host.sync_stream [[PS]]
// AG-MATMUL-P2P-NCCL-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[V5]]{{\]}} : memref<4x256x1024xbf16> to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: [[OPERAND:%[a-zA-Z0-9_]+]] = scf.if [[V9]] -> (memref<256x1024xbf16, strided<[1024, 1], offset: ?>>) {
// AG-MATMUL-P2P-NCCL-NEXT: scf.yield [[VIEW]] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: } else {
// AG-MATMUL-P2P-NCCL-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-NCCL-NEXT: comm.start_coalescing
// AG-MATMUL-P2P-NCCL-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.recv [[VIEW_1]] from [[V5]] team [0, 1, 2, 3] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: [[REQ_1:%[a-zA-Z0-9_]+]] = comm.send [[VIEW]] to [[V8]] team [0, 1, 2, 3] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: [[REQ_2:%[a-zA-Z0-9_]+]] = comm.end_coalescing
// AG-MATMUL-P2P-NCCL-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-NCCL-NEXT: comm.wait [[REQ_2]]
// AG-MATMUL-P2P-NCCL-NEXT: scf.yield [[VIEW_1]] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: }
// AG-MATMUL-P2P-NCCL-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[V5]]{{\]}} : memref<4x256x2048xbf16> to memref<256x2048xbf16, strided<[2048, 1], offset: ?>>
// AG-MATMUL-P2P-NCCL-NEXT: host.matmul ins([[OPERAND]], [[ARG1]] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>>, memref<1024x2048xbf16>) outs([[VIEW_2]] : memref<256x2048xbf16, strided<[2048, 1], offset: ?>>)
// AG-MATMUL-P2P-NCCL-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-NCCL-NEXT: }
// AG-MATMUL-P2P-NCCL-NEXT: scf.for [[J:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-NCCL-NEXT: [[JS:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[J]] : !host.stream
// AG-MATMUL-P2P-NCCL-NEXT: host.sync_stream [[JS]]
// AG-MATMUL-P2P-NCCL-NEXT: }
// AG-MATMUL-P2P-NCCL-NEXT: host.dealloc [[BUF]] : memref<4x256x1024xbf16>
// AG-MATMUL-P2P-NCCL-NEXT: return
// AG-MATMUL-P2P-NCCL-NEXT: }

// hir-lower's default ring-chunks (0) lets host-p2p-pipeline choose: an
// allgather ring's steps go in two parts, loop of 8 iterations, the step
// %i / 2 and the part %i mod 2, each slice narrowed to its half of the rows.
// AG-MATMUL-P2P-CUDA-LABEL: func.func @ag_matmul_p2p(
// AG-MATMUL-P2P-CUDA-SAME: [[ARG0:%[a-zA-Z0-9_]+]]: memref<1x256x1024xbf16>, [[ARG1:%[a-zA-Z0-9_]+]]: memref<1024x2048xbf16>, [[ARG2:%[a-zA-Z0-9_]+]]: memref<4x256x2048xbf16>) {
// AG-MATMUL-P2P-CUDA-NEXT: [[MAIN:%[a-zA-Z0-9_]+]] = host.get_current_stream : !host.stream
// AG-MATMUL-P2P-CUDA-NEXT: [[BUF:%[a-zA-Z0-9_]+]] = host.alloc : memref<4x256x1024xbf16>
// AG-MATMUL-P2P-CUDA-NEXT: [[C0:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[C4:%[a-zA-Z0-9_]+]] = arith.constant 4 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[C1:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-P2P-CUDA-NEXT: scf.for [[I:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-CUDA-NEXT: [[S:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[I]] : !host.stream
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[S]]
// AG-MATMUL-P2P-CUDA-NEXT: host.sync_stream [[MAIN]]
// AG-MATMUL-P2P-CUDA-NEXT: }
// AG-MATMUL-P2P-CUDA-NEXT: [[C8:%[a-zA-Z0-9_]+]] = arith.constant 8 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[RANK:%[a-zA-Z0-9_]+]] = host.rank : index
// AG-MATMUL-P2P-CUDA-NEXT: [[VIEW:%[a-zA-Z0-9_]+]] = host.select [[ARG0]][0]{{\[}}[[C0]]{{\]}} : memref<1x256x1024xbf16> to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: comm.share_mem_handles [[ARG0]], [[BUF]] team [0, 1, 2, 3] : memref<1x256x1024xbf16>, memref<4x256x1024xbf16>
// AG-MATMUL-P2P-CUDA-NEXT: scf.for [[J:%[a-zA-Z0-9_]+]] = [[C0]] to [[C8]] step [[C1]] {
// AG-MATMUL-P2P-CUDA-NEXT: [[C2:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[STEP:%[a-zA-Z0-9_]+]] = arith.divui [[J]], [[C2]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[PART:%[a-zA-Z0-9_]+]] = arith.remui [[J]], [[C2]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[V4:%[a-zA-Z0-9_]+]] = arith.addi [[RANK]], [[STEP]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[V5:%[a-zA-Z0-9_]+]] = arith.remui [[V4]], [[C4]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[V6:%[a-zA-Z0-9_]+]] = arith.addi [[C4]], [[RANK]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[V7:%[a-zA-Z0-9_]+]] = arith.subi [[V6]], [[STEP]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[V8:%[a-zA-Z0-9_]+]] = arith.remui [[V7]], [[C4]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[V9:%[a-zA-Z0-9_]+]] = arith.cmpi eq, [[V5]], [[RANK]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[S_1:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[STEP]] : !host.stream
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-CUDA-NEXT: [[BACK:%[a-zA-Z0-9_]+]] = arith.addi [[STEP]], [[C4]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[BEFORE:%[a-zA-Z0-9_]+]] = arith.subi [[BACK]], {{%[a-zA-Z0-9_]+}} : index
// AG-MATMUL-P2P-CUDA-NEXT: [[PREVIOUS:%[a-zA-Z0-9_]+]] = arith.remui [[BEFORE]], [[C4]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[PS:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[PREVIOUS]] : !host.stream
// AG-MATMUL-P2P-CUDA-NEXT: host.sync_stream [[PS]]
// AG-MATMUL-P2P-CUDA-NEXT: [[VIEW_1:%[a-zA-Z0-9_]+]] = host.select [[BUF]][0]{{\[}}[[V5]]{{\]}} : memref<4x256x1024xbf16> to memref<256x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: [[ROWS:%[a-zA-Z0-9_]+]] = arith.constant 128 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[AT:%[a-zA-Z0-9_]+]] = arith.muli [[PART]], [[ROWS]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[HALF:%[a-zA-Z0-9_]+]] = memref.subview [[VIEW_1]]{{\[}}[[AT]], 0] [128, 1024] [1, 1] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>> to memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: [[ROWS_1:%[a-zA-Z0-9_]+]] = arith.constant 128 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[AT_1:%[a-zA-Z0-9_]+]] = arith.muli [[PART]], [[ROWS_1]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[OWN:%[a-zA-Z0-9_]+]] = memref.subview [[VIEW]]{{\[}}[[AT_1]], 0] [128, 1024] [1, 1] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>> to memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// Part 0 of a step receives both halves, part 1 none: the receive of the
// next half is posted before this half's send, and waited for on the next
// step's stream ([[ARRIVALS]]), which part 1's stream syncs with.
// AG-MATMUL-P2P-CUDA-NEXT: [[ONE:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[TWO:%[a-zA-Z0-9_]+]] = arith.constant 2 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[ZERO:%[a-zA-Z0-9_]+]] = arith.constant 0 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[FIRST:%[a-zA-Z0-9_]+]] = arith.cmpi eq, [[PART]], [[ZERO]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[LAST:%[a-zA-Z0-9_]+]] = arith.constant 1 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[MORE:%[a-zA-Z0-9_]+]] = arith.cmpi ne, [[PART]], [[LAST]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[AFTER:%[a-zA-Z0-9_]+]] = arith.addi [[PART]], [[ONE]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[NEXT:%[a-zA-Z0-9_]+]] = arith.remui [[AFTER]], [[TWO]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[ROWS_N:%[a-zA-Z0-9_]+]] = arith.constant 128 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[AT_N:%[a-zA-Z0-9_]+]] = arith.muli [[NEXT]], [[ROWS_N]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[NEXT_HALF:%[a-zA-Z0-9_]+]] = memref.subview [[VIEW_1]]{{\[}}[[AT_N]], 0] [128, 1024] [1, 1] : memref<256x1024xbf16, strided<[1024, 1], offset: ?>> to memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: [[NEXT_STEP:%[a-zA-Z0-9_]+]] = arith.addi [[STEP]], [[ONE]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[NEXT_POOL:%[a-zA-Z0-9_]+]] = arith.remui [[NEXT_STEP]], [[C4]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[ARRIVALS:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[NEXT_POOL]] : !host.stream
// AG-MATMUL-P2P-CUDA-NEXT: [[OPERAND:%[a-zA-Z0-9_]+]] = scf.if [[V9]] -> (memref<128x1024xbf16, strided<[1024, 1], offset: ?>>) {
// AG-MATMUL-P2P-CUDA-NEXT: scf.yield [[OWN]] : memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: } else {
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-CUDA-NEXT: scf.if [[FIRST]] {
// AG-MATMUL-P2P-CUDA-NEXT: [[REQ:%[a-zA-Z0-9_]+]] = comm.recv [[HALF]] from [[V5]] team [0, 1, 2, 3] on cuda : memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-CUDA-NEXT: comm.wait [[REQ]]
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-CUDA-NEXT: } else {
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-CUDA-NEXT: host.sync_stream [[ARRIVALS]]
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-CUDA-NEXT: }
// AG-MATMUL-P2P-CUDA-NEXT: scf.if [[MORE]] {
// AG-MATMUL-P2P-CUDA-NEXT: [[REQ_N:%[a-zA-Z0-9_]+]] = comm.recv [[NEXT_HALF]] from [[V5]] team [0, 1, 2, 3] on cuda : memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[ARRIVALS]]
// AG-MATMUL-P2P-CUDA-NEXT: comm.wait [[REQ_N]]
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-CUDA-NEXT: }
// AG-MATMUL-P2P-CUDA-NEXT: [[REQ_1:%[a-zA-Z0-9_]+]] = comm.send [[OWN]] to [[V8]] team [0, 1, 2, 3] on cuda : memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: comm.wait [[REQ_1]]
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[S_1]]
// AG-MATMUL-P2P-CUDA-NEXT: scf.yield [[HALF]] : memref<128x1024xbf16, strided<[1024, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: }
// AG-MATMUL-P2P-CUDA-NEXT: [[VIEW_2:%[a-zA-Z0-9_]+]] = host.select [[ARG2]][0]{{\[}}[[V5]]{{\]}} : memref<4x256x2048xbf16> to memref<256x2048xbf16, strided<[2048, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: [[ROWS_2:%[a-zA-Z0-9_]+]] = arith.constant 128 : index
// AG-MATMUL-P2P-CUDA-NEXT: [[AT_2:%[a-zA-Z0-9_]+]] = arith.muli [[PART]], [[ROWS_2]] : index
// AG-MATMUL-P2P-CUDA-NEXT: [[OUT:%[a-zA-Z0-9_]+]] = memref.subview [[VIEW_2]]{{\[}}[[AT_2]], 0] [128, 2048] [1, 1] : memref<256x2048xbf16, strided<[2048, 1], offset: ?>> to memref<128x2048xbf16, strided<[2048, 1], offset: ?>>
// AG-MATMUL-P2P-CUDA-NEXT: host.matmul ins([[OPERAND]], [[ARG1]] : memref<128x1024xbf16, strided<[1024, 1], offset: ?>>, memref<1024x2048xbf16>) outs([[OUT]] : memref<128x2048xbf16, strided<[2048, 1], offset: ?>>)
// AG-MATMUL-P2P-CUDA-NEXT: host.set_current_stream [[MAIN]]
// AG-MATMUL-P2P-CUDA-NEXT: }
// AG-MATMUL-P2P-CUDA-NEXT: scf.for [[K:%[a-zA-Z0-9_]+]] = [[C0]] to [[C4]] step [[C1]] {
// AG-MATMUL-P2P-CUDA-NEXT: [[KS:%[a-zA-Z0-9_]+]] = host.stream_from_pool [[K]] : !host.stream
// AG-MATMUL-P2P-CUDA-NEXT: host.sync_stream [[KS]]
// AG-MATMUL-P2P-CUDA-NEXT: }
// AG-MATMUL-P2P-CUDA-NEXT: host.dealloc [[BUF]] : memref<4x256x1024xbf16>
// AG-MATMUL-P2P-CUDA-NEXT: return
// AG-MATMUL-P2P-CUDA-NEXT: }
