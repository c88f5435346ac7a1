// RUN: hir-opt %s | hir-opt | FileCheck %s
// RUN: hir-opt %s --mlir-print-op-generic | hir-opt | FileCheck %s

// Every fusion op and attribute survives printing and re-parsing, in the
// custom and in the generic form.

// CHECK: fusion.mesh @tp = [0, 1, 2, 3]
fusion.mesh @tp = [0, 1, 2, 3]
// CHECK: fusion.mesh @single = [7]
fusion.mesh @single = [7]
// A 2-D mesh is written as its rows.
// CHECK: fusion.mesh @tp_dp = {{\[}}[0, 1, 2, 3], [4, 5, 6, 7]]
fusion.mesh @tp_dp = [[0, 1, 2, 3], [4, 5, 6, 7]]
// CHECK-LABEL: func.func private @didy
// CHECK-SAME: tensor<2x8x4xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>>
func.func private @didy(tensor<2x8x4xf32, #fusion.dist<@tp_dp, [didy, didx, serial]>>)
// A 3-D mesh is written as its planes of rows; didz splits over the planes.
// CHECK: fusion.mesh @tp_sp_dp = {{\[}}{{\[}}[0, 1], [2, 3]], {{\[}}[4, 5], [6, 7]]]
fusion.mesh @tp_sp_dp = [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
// CHECK-LABEL: func.func private @didz
// CHECK-SAME: tensor<2x2x4xf32, #fusion.dist<@tp_sp_dp, [didz, didy, didx]>>
func.func private @didz(tensor<2x2x4xf32, #fusion.dist<@tp_sp_dp, [didz, didy, didx]>>)

// Every parallel type, in encodings on arguments, results and op types.
// CHECK-LABEL: func.func @set
// CHECK-SAME: ([[A:%.*]]: tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [stream, didx, serial, serial]>>)
// CHECK-NEXT: [[R:%.*]] = fusion.set [[A]] : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [stream, didx, serial, serial]>> -> tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, serial, serial, serial]>>
// CHECK-NEXT: [[U:%.*]] = fusion.set [[R]] : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, serial, serial, serial]>> -> tensor<4x4x256x1024xbf16>
// CHECK-NEXT: return [[U]]
func.func @set(%a: tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [stream, didx, serial, serial]>>)
    -> tensor<4x4x256x1024xbf16> {
  %0 = fusion.set %a : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [stream, didx, serial, serial]>>
                    -> tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, serial, serial, serial]>>
  %1 = fusion.set %0 : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, serial, serial, serial]>>
                    -> tensor<4x4x256x1024xbf16>
  return %1 : tensor<4x4x256x1024xbf16>
}

// Unary ops: neg keeps the element type, cast changes it (every float type);
// where selects by a mask.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: ([[A:%.*]]: tensor<8x16xf32>)
// CHECK-NEXT: [[N:%.*]] = fusion.neg [[A]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[E:%.*]] = fusion.exp [[N]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[T:%.*]] = fusion.tanh [[E]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[M:%.*]] = fusion.abs [[T]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[R:%.*]] = fusion.relu [[M]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[G:%.*]] = fusion.gelu [[R]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[S:%.*]] = fusion.rsqrt [[G]] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[W:%.*]] = fusion.where [[R]], [[S]], [[A]] : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[H:%.*]] = fusion.cast [[W]] : tensor<8x16xf32> -> tensor<8x16xf16>
// CHECK-NEXT: [[B:%.*]] = fusion.cast [[H]] : tensor<8x16xf16> -> tensor<8x16xbf16>
// CHECK-NEXT: return [[B]]
func.func @unary(%a: tensor<8x16xf32>) -> tensor<8x16xbf16> {
  %0 = fusion.neg %a : tensor<8x16xf32> -> tensor<8x16xf32>
  %e = fusion.exp %0 : tensor<8x16xf32> -> tensor<8x16xf32>
  %t = fusion.tanh %e : tensor<8x16xf32> -> tensor<8x16xf32>
  %m = fusion.abs %t : tensor<8x16xf32> -> tensor<8x16xf32>
  %r = fusion.relu %m : tensor<8x16xf32> -> tensor<8x16xf32>
  %g = fusion.gelu %r : tensor<8x16xf32> -> tensor<8x16xf32>
  %s = fusion.rsqrt %g : tensor<8x16xf32> -> tensor<8x16xf32>
  %w = fusion.where %r, %s, %a : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
                             -> tensor<8x16xf32>
  %1 = fusion.cast %w : tensor<8x16xf32> -> tensor<8x16xf16>
  %2 = fusion.cast %1 : tensor<8x16xf16> -> tensor<8x16xbf16>
  return %2 : tensor<8x16xbf16>
}

// Binary ops, one of them on distributed tensors.
// CHECK-LABEL: func.func @binary
// CHECK-SAME: ([[A:%.*]]: tensor<8x16xf32>, [[B:%.*]]: tensor<8x16xf32>, [[C:%.*]]: tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>)
// CHECK-NEXT: [[ADD:%.*]] = fusion.add [[A]], [[B]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[SUB:%.*]] = fusion.sub [[ADD]], [[B]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[MUL:%.*]] = fusion.mul [[SUB]], [[A]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[DIV:%.*]] = fusion.div [[MUL]], [[B]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[MAX:%.*]] = fusion.max [[DIV]], [[A]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[MIN:%.*]] = fusion.min [[MAX]], [[B]] : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[D:%.*]] = fusion.add [[C]], [[C]] : tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: return [[MIN]], [[D]]
func.func @binary(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>,
                  %c: tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<8x16xf32>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %0 = fusion.add %a, %b : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %1 = fusion.sub %0, %b : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %2 = fusion.mul %1, %a : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %3 = fusion.div %2, %b : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %4 = fusion.max %3, %a : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %5 = fusion.min %4, %b : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %6 = fusion.add %c, %c : tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>,
                           tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
  return %5, %6 : tensor<8x16xf32>, tensor<4x16xf32, #fusion.dist<@tp, [didx, serial]>>
}

// Reductions over one axis, several axes (in any order), down to a scalar,
// and over a didx axis.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: ([[A:%.*]]: tensor<4x8x16xf32>, [[D:%.*]]: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
// CHECK-NEXT: [[S:%.*]] = fusion.sum [[A]] [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: [[M:%.*]] = fusion.amax [[A]] [2, 0] : tensor<4x8x16xf32> -> tensor<8xf32>
// CHECK-NEXT: [[T:%.*]] = fusion.sum [[M]] [0] : tensor<8xf32> -> tensor<f32>
// CHECK-NEXT: [[P:%.*]] = fusion.sum [[D]] [0] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<8xf32, #fusion.dist<@tp, [serial]>>
// CHECK-NEXT: return [[S]], [[T]], [[P]]
func.func @reductions(%a: tensor<4x8x16xf32>, %d: tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>)
    -> (tensor<4x16xf32>, tensor<f32>, tensor<8xf32, #fusion.dist<@tp, [serial]>>) {
  %0 = fusion.sum %a [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
  %1 = fusion.amax %a [2, 0] : tensor<4x8x16xf32> -> tensor<8xf32>
  %2 = fusion.sum %1 [0] : tensor<8xf32> -> tensor<f32>
  %3 = fusion.sum %d [0] : tensor<4x8xf32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<8xf32, #fusion.dist<@tp, [serial]>>
  return %0, %2, %3 : tensor<4x16xf32>, tensor<f32>, tensor<8xf32, #fusion.dist<@tp, [serial]>>
}

// Broadcast at the front, at the back, and of a scalar.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: ([[A:%.*]]: tensor<16xf32>, [[S:%.*]]: tensor<bf16>)
// CHECK-NEXT: [[F:%.*]] = fusion.broadcast [[A]] [0] : tensor<16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: [[B:%.*]] = fusion.broadcast [[F]] [2] : tensor<8x16xf32> -> tensor<8x16x4xf32>
// CHECK-NEXT: [[C:%.*]] = fusion.broadcast [[S]] [0, 1] : tensor<bf16> -> tensor<2x3xbf16>
// CHECK-NEXT: return [[B]], [[C]]
func.func @broadcast(%a: tensor<16xf32>, %s: tensor<bf16>) -> (tensor<8x16x4xf32>, tensor<2x3xbf16>) {
  %0 = fusion.broadcast %a [0] : tensor<16xf32> -> tensor<8x16xf32>
  %1 = fusion.broadcast %0 [2] : tensor<8x16xf32> -> tensor<8x16x4xf32>
  %2 = fusion.broadcast %s [0, 1] : tensor<bf16> -> tensor<2x3xbf16>
  return %1, %2 : tensor<8x16x4xf32>, tensor<2x3xbf16>
}

// Matmul: 2-D, batched lhs with a shared rhs, batched on both sides, and the
// distributed AG+GEMM of the design.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: ([[A:%.*]]: tensor<256x1024xbf16>, [[B:%.*]]: tensor<1024x2048xbf16>, [[BA:%.*]]: tensor<4x256x1024xbf16>, [[BB:%.*]]: tensor<4x1024x2048xbf16>
// CHECK-NEXT: [[M:%.*]] = fusion.matmul [[A]], [[B]] : tensor<256x1024xbf16>, tensor<1024x2048xbf16> -> tensor<256x2048xbf16>
// CHECK-NEXT: [[N:%.*]] = fusion.matmul [[BA]], [[B]] : tensor<4x256x1024xbf16>, tensor<1024x2048xbf16> -> tensor<4x256x2048xbf16>
// CHECK-NEXT: [[O:%.*]] = fusion.matmul [[BA]], [[BB]] : tensor<4x256x1024xbf16>, tensor<4x1024x2048xbf16> -> tensor<4x256x2048xbf16>
// CHECK-NEXT: [[P:%.*]] = fusion.matmul %{{.*}}, %{{.*}} : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>> -> tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
// CHECK-NEXT: return [[M]], [[N]], [[O]], [[P]]
func.func @matmul(%a: tensor<256x1024xbf16>, %b: tensor<1024x2048xbf16>,
                  %ba: tensor<4x256x1024xbf16>, %bb: tensor<4x1024x2048xbf16>,
                  %da: tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                  %db: tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<256x2048xbf16>, tensor<4x256x2048xbf16>, tensor<4x256x2048xbf16>,
        tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>) {
  %0 = fusion.matmul %a, %b : tensor<256x1024xbf16>, tensor<1024x2048xbf16>
                           -> tensor<256x2048xbf16>
  %1 = fusion.matmul %ba, %b : tensor<4x256x1024xbf16>, tensor<1024x2048xbf16>
                            -> tensor<4x256x2048xbf16>
  %2 = fusion.matmul %ba, %bb : tensor<4x256x1024xbf16>, tensor<4x1024x2048xbf16>
                             -> tensor<4x256x2048xbf16>
  %3 = fusion.matmul %da, %db
      : tensor<4x4x256x1024xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<1024x2048xbf16, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
  return %0, %1, %2, %3 : tensor<256x2048xbf16>, tensor<4x256x2048xbf16>, tensor<4x256x2048xbf16>,
                          tensor<4x4x256x2048xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>
}

// Matmul with broadcast batch axes (torch.matmul): a unit axis of either
// operand, an rhs with fewer batch axes, an lhs with fewer, and the per-device
// weight shard of GEMM+RS beside a stream axis.
// CHECK-LABEL: func.func @matmul_broadcast
// CHECK-NEXT: fusion.matmul %{{.*}}, %{{.*}} : tensor<4x1x8x16xf32>, tensor<1x3x16x32xf32> -> tensor<4x3x8x32xf32>
// CHECK-NEXT: fusion.matmul %{{.*}}, %{{.*}} : tensor<4x3x8x16xf32>, tensor<3x16x32xf32> -> tensor<4x3x8x32xf32>
// CHECK-NEXT: fusion.matmul %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<3x16x32xf32> -> tensor<3x8x32xf32>
// CHECK-NEXT: fusion.matmul %{{.*}}, %{{.*}} : tensor<4x2x4x8x16xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>, tensor<4x1x1x16x32xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>> -> tensor<4x2x4x8x32xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>
func.func @matmul_broadcast(%a: tensor<4x1x8x16xf32>, %b: tensor<1x3x16x32xf32>,
                            %c: tensor<4x3x8x16xf32>, %d: tensor<3x16x32xf32>,
                            %e: tensor<8x16xf32>,
                            %x: tensor<4x2x4x8x16xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>,
                            %w: tensor<4x1x1x16x32xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>) {
  %0 = fusion.matmul %a, %b : tensor<4x1x8x16xf32>, tensor<1x3x16x32xf32> -> tensor<4x3x8x32xf32>
  %1 = fusion.matmul %c, %d : tensor<4x3x8x16xf32>, tensor<3x16x32xf32> -> tensor<4x3x8x32xf32>
  %2 = fusion.matmul %e, %d : tensor<8x16xf32>, tensor<3x16x32xf32> -> tensor<3x8x32xf32>
  %3 = fusion.matmul %x, %w
      : tensor<4x2x4x8x16xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>,
        tensor<4x1x1x16x32xf32, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>
     -> tensor<4x2x4x8x32xf32, #fusion.dist<@tp, [didx, stream, serial, serial, serial]>>
  return
}

// Linear with and without bias, on a batched and on a 1-D input.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: ([[X:%.*]]: tensor<8x64xf32>, [[W:%.*]]: tensor<32x64xf32>, [[B:%.*]]: tensor<32xf32>, [[V:%.*]]: tensor<64xf32>)
// CHECK-NEXT: [[Y:%.*]] = fusion.linear [[X]], [[W]], [[B]] : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<8x32xf32>
// CHECK-NEXT: [[Z:%.*]] = fusion.linear [[X]], [[W]] : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
// CHECK-NEXT: [[U:%.*]] = fusion.linear [[V]], [[W]] : tensor<64xf32>, tensor<32x64xf32> -> tensor<32xf32>
// CHECK-NEXT: return [[Y]], [[Z]], [[U]]
func.func @linear(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>, %v: tensor<64xf32>)
    -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<32xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>
                               -> tensor<8x32xf32>
  %1 = fusion.linear %x, %w : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x32xf32>
  %2 = fusion.linear %v, %w : tensor<64xf32>, tensor<32x64xf32> -> tensor<32xf32>
  return %0, %1, %2 : tensor<8x32xf32>, tensor<8x32xf32>, tensor<32xf32>
}

// Attention: no batch axis with the default scale, causal over heads, an
// explicit scale with a mask, and heads split over the mesh beside a stream
// batch axis with a replicated mask.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: ([[Q:%.*]]: tensor<8x16xbf16>, [[K:%.*]]: tensor<8x16xbf16>, [[V:%.*]]: tensor<8x16xbf16>, [[HQ:%.*]]: tensor<4x8x16xf32>, [[HK:%.*]]: tensor<4x12x16xf32>, [[HV:%.*]]: tensor<4x12x4xf32>, [[M:%.*]]: tensor<8x12xf32>
// CHECK-NEXT: [[A:%.*]] = fusion.attention [[Q]], [[K]], [[V]] : tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16> -> tensor<8x16xbf16>
// CHECK-NEXT: [[B:%.*]] = fusion.attention [[HQ]], [[HK]], [[HV]] causal : tensor<4x8x16xf32>, tensor<4x12x16xf32>, tensor<4x12x4xf32> -> tensor<4x8x4xf32>
// CHECK-NEXT: [[C:%.*]] = fusion.attention [[HQ]], [[HK]], [[HV]], [[M]] scale 1.250000e-01 causal : tensor<4x8x16xf32>, tensor<4x12x16xf32>, tensor<4x12x4xf32>, tensor<8x12xf32> -> tensor<4x8x4xf32>
// CHECK-NEXT: [[D:%.*]] = fusion.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale 5.000000e-01 : tensor<2x4x8x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>, tensor<2x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<2x4x12x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>, tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>> -> tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
// CHECK-NEXT: return [[A]], [[B]], [[C]], [[D]]
func.func @attention(%q: tensor<8x16xbf16>, %k: tensor<8x16xbf16>, %v: tensor<8x16xbf16>,
                     %hq: tensor<4x8x16xf32>, %hk: tensor<4x12x16xf32>, %hv: tensor<4x12x4xf32>,
                     %m: tensor<8x12xf32>,
                     %dq: tensor<2x4x8x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
                     %dk: tensor<2x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %dv: tensor<2x4x12x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                     %dm: tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>)
    -> (tensor<8x16xbf16>, tensor<4x8x4xf32>, tensor<4x8x4xf32>,
        tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>) {
  %0 = fusion.attention %q, %k, %v : tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16>
                                  -> tensor<8x16xbf16>
  %1 = fusion.attention %hq, %hk, %hv causal
      : tensor<4x8x16xf32>, tensor<4x12x16xf32>, tensor<4x12x4xf32> -> tensor<4x8x4xf32>
  %2 = fusion.attention %hq, %hk, %hv, %m scale 0.125 causal
      : tensor<4x8x16xf32>, tensor<4x12x16xf32>, tensor<4x12x4xf32>, tensor<8x12xf32>
     -> tensor<4x8x4xf32>
  %3 = fusion.attention %dq, %dk, %dv, %dm scale 0.5
      : tensor<2x4x8x16xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>,
        tensor<2x4x12x16xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<2x4x12x4xf32, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
        tensor<8x12xf32, #fusion.dist<@tp, [serial, serial]>>
     -> tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %0, %1, %2, %3 : tensor<8x16xbf16>, tensor<4x8x4xf32>, tensor<4x8x4xf32>,
                          tensor<2x4x8x4xf32, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}

// Transpose (the distribution moves with the axes), fill and iota (no
// operand; an iota along a split axis).
// CHECK-LABEL: func.func @layout_and_init
// CHECK-SAME: ([[X:%.*]]: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
// CHECK-NEXT: [[T:%.*]] = fusion.transpose [[X]] [2, 0, 1] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<16x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: [[Z:%.*]] = fusion.fill 0.000000e+00 : tensor<8x16xbf16>
// CHECK-NEXT: [[H:%.*]] = fusion.fill -2.500000e-01 : tensor<8xf16>
// CHECK-NEXT: [[I:%.*]] = fusion.iota 0 : tensor<16x4xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: return [[T]], [[Z]], [[H]], [[I]]
func.func @layout_and_init(%x: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> (tensor<16x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>, tensor<8x16xbf16>,
        tensor<8xf16>, tensor<16x4xf32, #fusion.dist<@tp, [didx, serial]>>) {
  %t = fusion.transpose %x [2, 0, 1] : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                                    -> tensor<16x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  %z = fusion.fill 0.0 : tensor<8x16xbf16>
  %h = fusion.fill -0.25 : tensor<8xf16>
  %i = fusion.iota 0 : tensor<16x4xf32, #fusion.dist<@tp, [didx, serial]>>
  return %t, %z, %h, %i : tensor<16x4x8xf32, #fusion.dist<@tp, [serial, didx, serial]>>,
                          tensor<8x16xbf16>, tensor<8xf16>,
                          tensor<16x4xf32, #fusion.dist<@tp, [didx, serial]>>
}

// Reshapes: merging serial axes beside a kept didx axis, splitting, and
// adding and dropping unit axes.
// CHECK-LABEL: func.func @reshape
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>> -> tensor<4x128xf32, #fusion.dist<@tp, [didx, serial]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<4x128xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<4x1x2x64xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<4x1x2x64xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>> -> tensor<4x128x1xf32, #fusion.dist<@tp, [didx, serial, serial]>>
func.func @reshape(%x: tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<4x128x1xf32, #fusion.dist<@tp, [didx, serial, serial]>> {
  %0 = fusion.reshape %x : tensor<4x8x16xf32, #fusion.dist<@tp, [didx, serial, serial]>>
                        -> tensor<4x128xf32, #fusion.dist<@tp, [didx, serial]>>
  %1 = fusion.reshape %0 : tensor<4x128xf32, #fusion.dist<@tp, [didx, serial]>>
                        -> tensor<4x1x2x64xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>
  %2 = fusion.reshape %1 : tensor<4x1x2x64xf32, #fusion.dist<@tp, [didx, serial, serial, serial]>>
                        -> tensor<4x128x1xf32, #fusion.dist<@tp, [didx, serial, serial]>>
  return %2 : tensor<4x128x1xf32, #fusion.dist<@tp, [didx, serial, serial]>>
}

// Outer splits: a merged or split group distributed on its outermost axis,
// alike on both sides ([S, H] split on H as [S, heads, dh] split on the
// heads, and back), and a reshape whose result is left to
// fusion-propagate-sharding.
// CHECK-LABEL: func.func @outer_split
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
// CHECK-NEXT: fusion.reshape %{{.*}} : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x2x8xf32>
func.func @outer_split(%x: tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>)
    -> tensor<8x2x8xf32> {
  %0 = fusion.reshape %x : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
                        -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  %1 = fusion.reshape %0 : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
                        -> tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>>
  %2 = fusion.reshape %1 : tensor<8x16xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x2x8xf32>
  return %2 : tensor<8x2x8xf32>
}

// Slices: a box of a serial axis beside a whole didx axis (a fused QKV's
// q), a strided one, and one left to fusion-propagate-sharding.
// CHECK-LABEL: func.func @slice
// CHECK-NEXT: fusion.slice %{{.*}} offsets [0, 0, 4] strides [1, 1, 1] : tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
// CHECK-NEXT: fusion.slice %{{.*}} offsets [1, 0, 0] strides [2, 1, 3] : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x4x2xf32>
func.func @slice(%x: tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>>) -> tensor<4x4x2xf32> {
  %0 = fusion.slice %x offsets [0, 0, 4] strides [1, 1, 1]
      : tensor<8x4x12xf32, #fusion.dist<@tp, [serial, didx, serial]>>
     -> tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>>
  %1 = fusion.slice %0 offsets [1, 0, 0] strides [2, 1, 3]
      : tensor<8x4x4xf32, #fusion.dist<@tp, [serial, didx, serial]>> -> tensor<4x4x2xf32>
  return %1 : tensor<4x4x2xf32>
}

// A one-device mesh referenced by an encoding.
// CHECK-LABEL: func.func @single_device
// CHECK-SAME: tensor<1x8xf16, #fusion.dist<@single, [didx, stream]>>
func.func @single_device(%a: tensor<1x8xf16, #fusion.dist<@single, [didx, stream]>>)
    -> tensor<1x8xf16, #fusion.dist<@single, [didx, stream]>> {
  return %a : tensor<1x8xf16, #fusion.dist<@single, [didx, stream]>>
}

// A scalar (rank-0) tensor's distribution has no axis.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: tensor<f32, #fusion.dist<@single, []>>
// CHECK: fusion.sum %{{.*}} [0] : tensor<8xf32, #fusion.dist<@single, [serial]>> -> tensor<f32, #fusion.dist<@single, []>>
func.func @scalar(%a: tensor<8xf32, #fusion.dist<@single, [serial]>>) -> tensor<f32, #fusion.dist<@single, []>> {
  %s = fusion.sum %a [0] : tensor<8xf32, #fusion.dist<@single, [serial]>> -> tensor<f32, #fusion.dist<@single, []>>
  return %s : tensor<f32, #fusion.dist<@single, []>>
}

// A stream axis in k chunks keeps its chunk count; plain `stream` prints as
// before.
// CHECK-LABEL: func.func @stream_chunks
// CHECK-SAME: tensor<64x128xf32, #fusion.dist<@tp, [didx, stream<4>]>>
// CHECK-SAME: tensor<64x128xf32, #fusion.dist<@tp, [stream, serial]>>
func.func @stream_chunks(%a: tensor<64x128xf32, #fusion.dist<@tp, [didx, stream<4>]>>,
                         %b: tensor<64x128xf32, #fusion.dist<@tp, [stream, serial]>>) {
  return
}
