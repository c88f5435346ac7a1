// Two processes given the same RANK (a user's mistake): the store refuses
// the second to join as rank 1, naming both processes, and rank 0, which
// hosts the store, fails with its exit status 1 (it used to print its
// check's "ok" and exit 0 in 2 runs of 6). Processes are numbered as
// ranks.py starts them; which of the two RANK=1 processes joins first is up
// to the scheduler. --iters keeps the job going well past the refusal, so
// that a late impostor cannot find the job already ended.
// RUN: %python %S/Inputs/ranks.py --ranks 0,1,1 2 'hir-run --timeout 20 --iters 100 --check %S/Inputs/allgather_2.mlir' \
// RUN:   | FileCheck %s
// CHECK-DAG: hir-run: error: rank 1: bootstrap: the store at {{.*}} refused rank 1: rank 1 joined twice: first process {{.*}}, then process {{.*}} (two processes were given RANK=1)
// CHECK-DAG: [rank 0] hir-run: error: rank 0: {{.*}}rank 1 failed in bootstrap: rank 1 joined twice
// CHECK-DAG: rank 0: exit 1
