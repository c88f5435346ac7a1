// RUN: hir-opt %s --split-input-file --verify-diagnostics --convert-host-to-llvm

// Fusion ops lower to host ops first.
fusion.mesh @dev = [0]
func.func @fusion_left(%a: tensor<8xf32, #fusion.dist<@dev, [serial]>>) -> tensor<8xf32, #fusion.dist<@dev, [serial]>> {
  // expected-error @+1 {{'fusion.neg' op is not lowered to host ops; run convert-fusion-to-host before convert-host-to-llvm}}
  %b = fusion.neg %a : tensor<8xf32, #fusion.dist<@dev, [serial]>> -> tensor<8xf32, #fusion.dist<@dev, [serial]>>
  return %b : tensor<8xf32, #fusion.dist<@dev, [serial]>>
}

// -----

// Streams are made inside the program, never passed in.
// expected-error @+1 {{'func.func' op has a '!host.stream' in its type; convert-host-to-llvm lowers '!host.stream' values only from one host op to others}}
func.func @stream_argument(%s: !host.stream) {
  host.set_current_stream %s
  return
}

// -----

// expected-error @+1 {{'func.func' op has a '!host.stream' in its type}}
func.func private @make_stream() -> !host.stream

// -----

func.func @stream_through_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %main = host.get_current_stream : !host.stream
  // expected-error @+1 {{'scf.for' op has a block argument of type '!host.stream'}}
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%s = %main) -> (!host.stream) {
    %next = host.stream_from_pool %i : !host.stream
    scf.yield %next : !host.stream
  }
  host.set_current_stream %last
  return
}

// -----

func.func @stream_through_if(%c: i1) {
  %main = host.get_current_stream : !host.stream
  // expected-error @+1 {{'scf.if' op returns a '!host.stream'}}
  %s = scf.if %c -> !host.stream {
    scf.yield %main : !host.stream
  } else {
    scf.yield %main : !host.stream
  }
  host.set_current_stream %s
  return
}

// -----

// A runtime symbol the module already defines otherwise.
func.func private @hir_rt_neg_f32(memref<8xf32>)

func.func @function_taken(%a: memref<8xf32>) {
  // expected-error @+1 {{'host.neg' op needs runtime function '@hir_rt_neg_f32' of type (memref<*xf32>, memref<*xf32>) -> (), but the module defines '@hir_rt_neg_f32' as 'func.func' of type (memref<8xf32>) -> ()}}
  host.neg ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
  return
}

// -----

memref.global "private" constant @__hir_axes_0 : memref<1xi64> = dense<1>

func.func @constant_taken(%a: memref<4x8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'host.sum' op needs constant '@__hir_axes_0' of type memref<1xi64>, but the module defines '@__hir_axes_0' as 'memref.global "private" constant @__hir_axes_0 : memref<1xi64> = dense<1>'}}
  host.sum [0] ins(%a : memref<4x8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// The runtime's fused entries take at most 8 buffers.
func.func @fused_too_many_buffers(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %d: memref<4xf32>, %e: memref<4xf32>, %f: memref<4xf32>, %g: memref<4xf32>, %h: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'host.fused' op has 9 buffers; the runtime takes at most 8}}
  host.fused ins(%a, %b, %c, %d, %e, %f, %g, %h : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a0: memref<4xf32>, %a1: memref<4xf32>, %a2: memref<4xf32>, %a3: memref<4xf32>, %a4: memref<4xf32>, %a5: memref<4xf32>, %a6: memref<4xf32>, %a7: memref<4xf32>, %ya: memref<4xf32>):
    host.add ins(%a0, %a7 : memref<4xf32>, memref<4xf32>) outs(%ya : memref<4xf32>)
  }
  return
}
