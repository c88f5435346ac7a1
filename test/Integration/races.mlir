// The cpu backend's race detector fails the rank at a data race by default;
// --races=warn lets a program with a race known to be benign run, warning
// once per pair of ops (with the rank and the op) however often it recurs.
// Here each of three iterations reads %a on one pool stream while another
// overwrites it with the same values (|x| -> -(-|x|)... a write-after-read
// that no event orders).

// RUN: not hir-run %s 2>&1 | FileCheck %s --check-prefix=FATAL
// RUN: not hir-run --races fatal %s 2>&1 | FileCheck %s --check-prefix=FATAL
// RUN: hir-run --races=warn -n 2 --output-dir %t %s 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: %python %S/Inputs/check_npy.py %t "close(arg1_rank0, [-x for x in arg0_rank0]) and close(arg1_rank1, [-x for x in arg0_rank1])"
// RUN: not hir-run --races ignore %s 2>&1 | FileCheck %s --check-prefix=BAD

// FATAL: hir-run: error: the run failed: rank 0: hir_rt_copy_f32: data race: hir_rt_copy_f32 on stream 2 writes 32 bytes at {{0x[0-9a-f]+}} while hir_rt_neg_f32 on stream 1 may still read them, and no event orders the two

// WARN-DAG: warning: rank 0: hir_rt_copy_f32: data race: hir_rt_copy_f32 on stream 2 writes 32 bytes at {{0x[0-9a-f]+}} while hir_rt_neg_f32 on stream 1 may still read them, and no event orders the two {{.*}} (--races=warn: reported once for these two ops, and the run goes on)
// WARN-DAG: warning: rank 1: hir_rt_copy_f32: data race:
// WARN-NOT: warning:
// WARN: ran @benign_race on 2 ranks

// BAD: hir-run: error: invalid value 'ignore' for '--races <RACES>'
// BAD-NEXT: [possible values: fatal, warn]
func.func @benign_race(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %main = host.get_current_stream : !host.stream
  %s1 = host.stream_from_pool %c0 : !host.stream
  %s2 = host.stream_from_pool %c1 : !host.stream
  %keep = host.alloc : memref<8xf32>
  host.copy ins(%a : memref<8xf32>) outs(%keep : memref<8xf32>)
  host.set_current_stream %s1
  host.sync_stream %main
  host.set_current_stream %s2
  host.sync_stream %main
  scf.for %i = %c0 to %c3 step %c1 {
    host.set_current_stream %s1
    host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
    host.set_current_stream %s2
    host.copy ins(%keep : memref<8xf32>) outs(%a : memref<8xf32>)
  }
  host.set_current_stream %main
  host.sync_stream %s1
  host.sync_stream %s2
  host.dealloc %keep : memref<8xf32>
  return
}
