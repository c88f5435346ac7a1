// The pass cannot fail on IR that verifies (it fuses and hoists only what it
// proves legal); its option can be wrong.
// RUN: not hir-opt --pass-pipeline='builtin.module(func.func(host-stream-parallelize{num-streams=two}))' %s 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: host-stream-parallelize: option 'num-streams' must be an integer from 0 to 9223372036854775807, not 'two'

func.func @empty() {
  return
}
