// One chunk per error of fusion-insert-resharding.
// RUN: hir-opt %s -split-input-file -verify-diagnostics --fusion-insert-resharding
// The pass runs on a module or a function, nothing else.
// RUN: not hir-opt %s -split-input-file --pass-pipeline='builtin.module(llvm.func(fusion-insert-resharding))' 2>&1 | FileCheck %s --check-prefix=ANCHOR

// A reduction across devices keeps its didx axis: moving it to a mesh of
// another size cannot be expressed by a set.
fusion.mesh @tp = [0, 1, 2]
fusion.mesh @pair = [4, 5]
func.func @f(%a: tensor<3x8xf32, #fusion.dist<@tp, [didx, serial]>>) -> tensor<8xf32, #fusion.dist<@pair, [serial]>> {
  // expected-error @+1 {{cannot reshard operand #0 of 'fusion.sum' to #fusion.dist<@pair, [didx, serial]>: didx axis 0 has extent 3, not a multiple of the 2 devices of mesh '@pair'}}
  %c = fusion.sum %a [0] : tensor<3x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8xf32, #fusion.dist<@pair, [serial]>>
  return %c : tensor<8xf32, #fusion.dist<@pair, [serial]>>
}

// -----

// ANCHOR: [[@LINE+1]]:1: error: fusion-insert-resharding runs on builtin.module or func.func, not 'llvm.func'
llvm.func @g() {
  llvm.return
}
