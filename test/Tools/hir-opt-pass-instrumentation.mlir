// Each HIR pass is one pass to MLIR's pass manager: it appears once, under
// its own name, in --mlir-timing, in --mlir-print-ir-after-all and in a crash
// reproducer's note (RustPass runs the Rust pass directly, with no nested
// pipeline or second pass inside it).
//
// Every HIR pass, from hir-lower (with its P2P ring) to the runtime calls:
// RUN: hir-opt %examples/ag_matmul.mlir -o /dev/null --mlir-timing \
// RUN:   --pass-pipeline='builtin.module(hir-lower{num-streams=2 p2p=nccl},convert-comm-to-llvm,convert-host-to-llvm,func.func(hir-scope-loop-allocas))' \
// RUN:   2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: hir-opt %examples/ag_matmul.mlir -o /dev/null --mlir-print-ir-after-all \
// RUN:   --pass-pipeline='builtin.module(hir-lower{num-streams=2 p2p=nccl},convert-comm-to-llvm,convert-host-to-llvm)' \
// RUN:   2>&1 | FileCheck %s --check-prefix=IR --implicit-check-not='IR Dump'
// hir-scope-loop-allocas runs on every function: here, on the one below.
// RUN: hir-opt %s -o /dev/null --mlir-print-ir-after-all \
// RUN:   --pass-pipeline='builtin.module(func.func(hir-scope-loop-allocas))' \
// RUN:   2>&1 | FileCheck %s --check-prefix=FUNC --implicit-check-not='IR Dump'
// A failing pass is the only pass the reproducer's note names.
// RUN: not hir-opt %s -o /dev/null --mlir-pass-pipeline-crash-reproducer=%t \
// RUN:   --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding)' \
// RUN:   2>&1 | FileCheck %s --check-prefix=REPRO
// RUN: FileCheck %s --check-prefix=REPRO-FILE < %t
// RUN: not hir-opt %s -o /dev/null --mlir-pass-pipeline-crash-reproducer=%t \
// RUN:   --mlir-pass-pipeline-local-reproducer --mlir-disable-threading \
// RUN:   --pass-pipeline='builtin.module(fusion-propagate-sharding,fusion-verify-sharding)' \
// RUN:   2>&1 | FileCheck %s --check-prefix=LOCAL
// RUN: FileCheck %s --check-prefix=LOCAL-FILE < %t

// The timing tree, line by line: no pass has a pipeline or a pass nested in it.
// TIMING:      {{%\) +}}Parser{{$}}
// TIMING-NEXT: {{%\) +}}fusion-propagate-sharding{{$}}
// TIMING-NEXT: {{%\) +}}fusion-verify-sharding{{$}}
// TIMING-NEXT: {{%\) +}}fusion-insert-resharding{{$}}
// TIMING-NEXT: {{%\) +}}convert-fusion-to-host{{$}}
// TIMING-NEXT: {{%\) +}}'func.func' Pipeline{{$}}
// TIMING-NEXT: {{%\) +}}host-fuse-epilogue{{$}}
// TIMING-NEXT: {{%\) +}}host-auto-stream{{$}}
// TIMING-NEXT: {{%\) +}}host-stream-parallelize{{$}}
// TIMING-NEXT: {{%\) +}}host-presplit-chunks{{$}}
// TIMING-NEXT: {{%\) +}}host-p2p-pipeline{{$}}
// TIMING-NEXT: {{%\) +}}host-fuse-epilogue{{$}}
// TIMING-NEXT: {{%\) +}}host-fuse-elementwise{{$}}
// TIMING-NEXT: {{%\) +}}host-fold-transpose{{$}}
// TIMING-NEXT: {{%\) +}}host-privatize-buffers{{$}}
// TIMING-NEXT: {{%\) +}}host-insert-dealloc{{$}}
// TIMING-NEXT: {{%\) +}}host-lower-stream-for{{$}}
// TIMING-NEXT: {{%\) +}}convert-comm-to-llvm{{$}}
// TIMING-NEXT: {{%\) +}}convert-host-to-llvm{{$}}
// TIMING-NEXT: {{%\) +}}'func.func' Pipeline{{$}}
// TIMING-NEXT: {{%\) +}}hir-scope-loop-allocas{{$}}
// TIMING-NEXT: {{%\) +}}Output{{$}}

// One dump per pass run (any other 'IR Dump' line is an error).
// IR-COUNT-1: IR Dump After fusion-propagate-sharding (fusion-propagate-sharding)
// IR-COUNT-1: IR Dump After fusion-verify-sharding (fusion-verify-sharding)
// IR-COUNT-1: IR Dump After fusion-insert-resharding (fusion-insert-resharding)
// IR-COUNT-1: IR Dump After convert-fusion-to-host (convert-fusion-to-host)
// IR-COUNT-1: IR Dump After host-fuse-epilogue (host-fuse-epilogue)
// IR-COUNT-1: IR Dump After host-auto-stream (host-auto-stream)
// IR-COUNT-1: IR Dump After host-stream-parallelize (host-stream-parallelize)
// IR-COUNT-1: IR Dump After host-presplit-chunks (host-presplit-chunks)
// IR-COUNT-1: IR Dump After host-p2p-pipeline (host-p2p-pipeline)
// IR-COUNT-1: IR Dump After host-fuse-epilogue (host-fuse-epilogue)
// IR-COUNT-1: IR Dump After host-fuse-elementwise (host-fuse-elementwise)
// IR-COUNT-1: IR Dump After host-fold-transpose (host-fold-transpose)
// IR-COUNT-1: IR Dump After host-privatize-buffers (host-privatize-buffers)
// IR-COUNT-1: IR Dump After host-insert-dealloc (host-insert-dealloc)
// IR-COUNT-1: IR Dump After host-lower-stream-for (host-lower-stream-for)
// IR-COUNT-1: IR Dump After convert-comm-to-llvm (convert-comm-to-llvm)
// IR-COUNT-1: IR Dump After convert-host-to-llvm (convert-host-to-llvm)

// FUNC-COUNT-1: IR Dump After hir-scope-loop-allocas (hir-scope-loop-allocas)
// FUNC-NEXT: func.func @f

// REPRO: error: function argument #0 is distributed over '@nope'
// REPRO: note: Pipeline failed while executing [`fusion-verify-sharding` on 'builtin.module' operation]: reproducer generated
// REPRO-FILE: pipeline: "builtin.module(fusion-propagate-sharding, fusion-verify-sharding)"

// LOCAL: error: function argument #0 is distributed over '@nope'
// LOCAL: note: Pipeline failed while executing `fusion-verify-sharding` on 'builtin.module' operation: reproducer generated
// LOCAL-FILE: pipeline: "builtin.module(fusion-verify-sharding)"

fusion.mesh @tp = [0, 1]
func.func @f(%a: tensor<8xf32, #fusion.dist<@nope, [serial]>>) {
  return
}
