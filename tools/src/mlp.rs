//! Megatron-LM's tensor- and sequence-parallel MLP alone, as
//! `examples/tp_mlp.mlir` writes it, generated at any size: `y = gelu(x
//! W1^T + c1) W2^T` with `x [T, H]` split by tokens over the devices
//! (sequence parallel), `W1 [F, H]` and `c1 [F]` split along F (column
//! parallel), `W2 [H, F]` split along F (row parallel), `y [T, H]` split by
//! tokens: an allgather into FC1, gelu, and FC2's partial sums
//! reduce-scattered. No LayerNorm, no residual: the MLP that
//! `tools/torch-layer.py --mlp` times in PyTorch.

use anyhow::{Result, bail};
use hir_abi::DType;

/// The sizes of the MLP.
#[derive(Clone, Debug, PartialEq)]
pub struct Mlp {
    /// T: tokens (split over the devices).
    pub t: usize,
    /// H: hidden size.
    pub h: usize,
    /// F: the MLP's width (split over the devices).
    pub f: usize,
    /// D: devices, the mesh `[0..D)`.
    pub devices: usize,
    pub dtype: DType,
}

impl Mlp {
    /// The program's text: `@tp_mlp(x, w1, c1, w2) -> y`.
    pub fn generate(&self) -> Result<String> {
        let Mlp {
            t,
            h,
            f,
            devices: d,
            dtype,
        } = *self;
        if [t, h, f, d].contains(&0) {
            bail!("mlp: T, H, F and D must be at least 1 (T={t} H={h} F={f} D={d})");
        }
        for (extent, name) in [(t, "T"), (f, "F")] {
            if !extent.is_multiple_of(d) {
                bail!("mlp: {name}={extent} is not a multiple of D={d} (split over the devices)");
            }
        }
        let ty = |shape: &[usize], dist: &[&str]| {
            let extents: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!(
                "tensor<{}x{}, #fusion.dist<@tp, [{}]>>",
                extents.join("x"),
                dtype.mlir(),
                dist.join(", ")
            )
        };
        let x = ty(&[t, h], &["didx", "serial"]);
        let gathered = ty(&[t, h], &["serial", "serial"]);
        let w1 = ty(&[f, h], &["didx", "serial"]);
        let c1 = ty(&[f], &["didx"]);
        let hidden = ty(&[t, f], &["serial", "didx"]);
        let w2 = ty(&[h, f], &["serial", "didx"]);
        let mesh: Vec<String> = (0..d).map(|device| device.to_string()).collect();
        Ok(format!(
            "// hir-bench program mlp: Megatron's TP/SP MLP, T={t} H={h} F={f} D={d} {} (tools/src/mlp.rs)\n\
             fusion.mesh @tp = [{}]\n\
             func.func @tp_mlp(%x: {x}, %w1: {w1}, %c1: {c1}, %w2: {w2}) -> {x} {{\n\
             \x20 %xg = fusion.set %x : {x} -> {gathered}\n\
             \x20 %h = fusion.linear %xg, %w1, %c1 : {gathered}, {w1}, {c1} -> {hidden}\n\
             \x20 %a = fusion.gelu %h : {hidden} -> {hidden}\n\
             \x20 %y = fusion.linear %a, %w2 : {hidden}, {w2} -> {x}\n\
             \x20 return %y : {x}\n\
             }}\n",
            dtype.mlir(),
            mesh.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mlp_is_the_example_at_other_sizes() {
        let mlp = Mlp {
            t: 32,
            h: 16,
            f: 64,
            devices: 4,
            dtype: DType::F32,
        };
        let text = mlp.generate().unwrap();
        let example = include_str!("../../examples/tp_mlp.mlir");
        // The same ops on the same types as the example.
        for line in [
            "fusion.mesh @tp = [0, 1, 2, 3]",
            "fusion.set %x : tensor<32x16xf32, #fusion.dist<@tp, [didx, serial]>> -> tensor<32x16xf32, #fusion.dist<@tp, [serial, serial]>>",
            "-> tensor<32x64xf32, #fusion.dist<@tp, [serial, didx]>>",
            "fusion.gelu %h",
        ] {
            assert!(text.contains(line), "no '{line}' in\n{text}");
        }
        assert!(example.contains("fusion.gelu %h"));
        let uneven = Mlp { f: 62, ..mlp };
        let error = uneven.generate().unwrap_err().to_string();
        assert!(error.contains("F=62 is not a multiple of D=4"), "{error}");
    }
}
