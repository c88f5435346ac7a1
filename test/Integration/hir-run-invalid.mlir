// hir-run's errors: clear, located where there is a location, non-zero exit.

// RUN: not hir-run -n 2 %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=MESH
// MESH: hir-run: error: @binary uses mesh @dev of devices [0], but -n 2 runs ranks 0..1: run it with -n 1 on devices 0..0

// RUN: not hir-run --check %S/host-allreduce.mlir 2>&1 | FileCheck %s --check-prefix=HOST-CHECK
// HOST-CHECK: hir-run: error: --check needs a fusion program

// RUN: not hir-run %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: hir-run: error: cannot read {{.*}}does-not-exist.mlir

// RUN: not hir-run %S/Inputs/syntax-error.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: syntax-error.mlir:4:3: error: custom op 'host.neg' expected 'outs'
// SYNTAX: hir-run: error: {{.*}}syntax-error.mlir does not parse or verify

// Data no memory holds is an error naming its size, not an abort: a rank's
// random input, and with --check the global inputs (as f64) first.
// RUN: not hir-run -n 1 %S/Inputs/too_large_for_memory.mlir 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: hir-run: error: out of memory: cannot allocate 4398046511104 B for a tensor of shape [1048576, 1048576]
// RUN: not hir-run -n 1 --check %S/Inputs/too_large_for_memory.mlir 2>&1 | FileCheck %s --check-prefix=MEMORY-CHECK
// MEMORY-CHECK: hir-run: error: out of memory: cannot allocate 8796093022208 B for a tensor of shape [1048576, 1048576]

// RUN: not hir-run -n 0 %s 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: hir-run: error: invalid value '0' for '-n <N>': must be at least 1

// RUN: not hir-run --backend tpu %s 2>&1 | FileCheck %s --check-prefix=BACKEND
// BACKEND: hir-run: error: invalid value 'tpu' for '--backend <BACKEND>'
// BACKEND-NEXT: [possible values: cpu, cuda]

// A global input of the wrong shape: binary's result (4x8) as ag_matmul's lhs.
// RUN: hir-run -n 1 --output-dir %t %examples/binary.mlir
// RUN: not hir-run -n 4 --input arg0=%t/result0.npy %examples/ag_matmul.mlir 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: hir-run: error: --input arg0: {{.*}}result0.npy has shape [4, 8], but argument #0 has the global shape [4, 4, 256, 1024]
// RUN: not hir-run -n 1 --input arg5=%t/result0.npy %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: hir-run: error: --input names arg5, but @binary takes 2 arguments

// Inputs from .npy files: binary's output as both inputs of binary.
// RUN: hir-run -n 1 --check --input arg0=%t/result0.npy --input arg1=%t/result0.npy %examples/binary.mlir | FileCheck %s --check-prefix=INPUTS
// INPUTS: result0: relative error 0.000e0 (tolerance 1e-4 for f32): ok

// --expect: the same run agrees with what it wrote; another seed does not, and
// the run fails; a directory of another program's outputs is a shape error.
// RUN: hir-run -n 1 --expect %t %examples/binary.mlir | FileCheck %s --check-prefix=EXPECT
// EXPECT: result0 against {{.*}}: relative error 0.000e0 (tolerance 1e-4 for f32): ok
// RUN: not hir-run -n 1 --seed 5 --expect %t %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=EXPECT-DIFF
// EXPECT-DIFF: result0 against {{.*}}: relative error {{.*}}: MISMATCH
// EXPECT-DIFF: hir-run: error: the outputs differ from what they were compared with
// RUN: not hir-run -n 1 --expect %t %examples/matmul.mlir 2>&1 | FileCheck %s --check-prefix=EXPECT-SHAPE
// EXPECT-SHAPE: hir-run: error: --expect: {{.*}}result0.npy has shape [4, 8], but result0 has shape
// RUN: not hir-run -n 1 --expect %t/nowhere %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=EXPECT-MISSING
// EXPECT-MISSING: hir-run: error: --expect: {{.*}}nowhere/result0.npy
// NaN agrees with nothing: an all-NaN file is a mismatch, not a pass.
// RUN: %python %S/Inputs/fill_npy.py %t/nan/result0.npy nan 4 8
// RUN: not hir-run -n 1 --expect %t/nan %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=EXPECT-NAN
// EXPECT-NAN: result0 against {{.*}}: 32 of 32 expected values are NaN or infinite: MISMATCH
// EXPECT-NAN: hir-run: error: the outputs differ from what they were compared with

// Every rank's copy of a replicated output is checked, not only the first:
// with rank 2's outputs zeroed after the run (test hook), --check names it.
// RUN: HIR_TEST_HOOK=2:corrupt-outputs not hir-run -n 4 --check %examples/allreduce.mlir 2>&1 | FileCheck %s --check-prefix=COPIES
// COPIES: result0: relative error {{.*}}: ok
// COPIES-NEXT: result0 (rank 2's copy): relative error 1.000e0 (tolerance 1e-4 for f32): MISMATCH

// Text MLIR 22's parser crashes on (a dense array of index, a linalg
// permutation or dimensions list that is not 64-bit integers) is refused
// first, by hir-run and by hir-opt.
// RUN: not hir-run %S/Inputs/index_dense_array.mlir 2>&1 | FileCheck %s --check-prefix=INDEX-ARRAY
// RUN: not hir-opt %S/Inputs/index_dense_array.mlir 2>&1 | FileCheck %s --check-prefix=INDEX-ARRAY
// INDEX-ARRAY: index_dense_array.mlir{{:?}} {{(error: )?}}a dense array of 'index' (array<index: ...>, which no HIR op takes) at byte {{[0-9]+}}, which MLIR 22's parser crashes on
// RUN: not hir-run %S/Inputs/linalg_bad_permutation.mlir 2>&1 | FileCheck %s --check-prefix=LINALG-LIST
// RUN: not hir-opt %S/Inputs/linalg_bad_permutation.mlir 2>&1 | FileCheck %s --check-prefix=LINALG-LIST
// LINALG-LIST: linalg_bad_permutation.mlir{{:?}} {{(error: )?}}a 'permutation' list that is not 64-bit integers (linalg.transpose) at byte {{[0-9]+}}, which MLIR 22's parser crashes on

// A program is a regular file of bounded size: a device is refused before it is read.
// RUN: not hir-run /dev/zero 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: hir-run: error: /dev/zero is not a regular file: a program is read from one
// So is an --input file: a FIFO with no writer (whose read would block past
// --timeout) and a device are refused at once, in threads and in processes.
// RUN: %python -c "import os, sys; p = sys.argv[1]; os.path.lexists(p) and os.remove(p); os.mkfifo(p)" %t.fifo
// RUN: not hir-run -n 1 --timeout 5 --input arg0=%t.fifo %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: not hir-run -n 1 --input arg0=/dev/zero %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=DEV-INPUT
// RUN: not hir-run -n 2 --dry-run --timeout 5 --input arg0=%t.fifo %S/Inputs/allgather_2.mlir 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: --input arg0: {{.*}}.fifo is not a regular file: an .npy file is read from one
// DEV-INPUT: hir-run: error: --input arg0: /dev/zero is not a regular file: an .npy file is read from one

// Usage errors are clap's, exit 2, and hint at a mistyped option.
// RUN: not hir-run --num-strems 2 %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=TYPO
// TYPO: hir-run: error: unexpected argument '--num-strems' found
// TYPO: tip: a similar argument exists: '--num-streams'
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(['hir-run', '-n', '0', 'p.mlir'], capture_output=True).returncode != 2)"

// Counts and timeouts are bounded: an error, not a failed spawn or an overflow.
// RUN: not hir-run -n 2000 %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: hir-run: error: invalid value '2000' for '-n <N>': must be at most 1024
// RUN: not hir-run --timeout 18446744073709551615 %examples/binary.mlir 2>&1 | FileCheck %s --check-prefix=TIMEOUT
// TIMEOUT: hir-run: error: invalid value '18446744073709551615' for '--timeout <SECONDS>': must be at most 604800

// A dry run verifies and lowers the program and checks its meshes against -n
// before any rank starts.
// RUN: not hir-run -n 3 --dry-run %examples/allgather.mlir 2>&1 | FileCheck %s --check-prefix=DRY-MESH
// DRY-MESH: hir-run: error: @allgather uses mesh @tp of devices [0, 1, 2, 3], but -n 3 runs ranks 0..2
// DRY-MESH-NOT: joined
// RUN: not hir-run -n 2 --dry-run %S/Inputs/syntax-error.mlir 2>&1 | FileCheck %s --check-prefix=DRY-SYNTAX
// DRY-SYNTAX: error:
// DRY-SYNTAX: hir-run: error: {{.*}}syntax-error.mlir does not parse or verify
// DRY-SYNTAX-NOT: joined

func.func @two(%a: memref<8xf32>) {
  return
}
func.func @entries(%a: memref<8xf32>) {
  return
}
// RUN: not hir-run %s 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: hir-run: error: the program has 2 public functions (@two, @entries); hir-run runs one
