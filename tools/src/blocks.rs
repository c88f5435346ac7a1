//! Megatron-LM's sequence-parallel transformer block (forward), N of them
//! stacked, generated as fusion-dialect text from S (tokens), H (hidden),
//! A (heads), F (MLP width), D (devices, mesh `[0..D)`) and the element
//! type: the program of issue 37, at any size, for `hir-run` and for
//! `hir-bench startup` (whose lowering time should grow with N, linearly).
//!
//! Block `b` maps `x [S, H]`, its tokens split over the devices (sequence
//! parallel, `didx` rows), to `x` of the same placement:
//!
//! ```text
//! y  = LayerNorm(x; g1, b1)                      rows on each device
//! yg = allgather(y)                              fusion.set didx -> serial
//! q, k, v = heads(yg Wq^T), heads(yg Wk^T), heads(yg Wv^T)   [A, S, dh], heads split (column parallel)
//! o  = softmax(q k^T / sqrt(dh) + causal mask) v  per local head
//! x  = x + reduce_scatter(tokens(o) Wo^T)          row parallel, back to sequence shards
//! y  = LayerNorm(x; g2, b2); yg = allgather(y)
//! x  = x + reduce_scatter(gelu(yg W1^T + c1) W2^T)  W1 [F, H], c1 [F] column, W2 [H, F] row parallel
//! ```
//!
//! The attention weights are Megatron's: `Wq, Wk, Wv [H, H]` split by output
//! rows (`didx` on axis 0, column parallel), `Wo [H, H]` split by input
//! columns (`didx` on axis 1, row parallel). Each projection is one GEMM;
//! `heads` is the reshape `[S, H] -> [S, A, dh]` of the split columns into
//! split heads (an outer split, local on each device) and the transpose to
//! `[A, S, dh]`; `tokens` the transpose back and the merge to `[S, H]`,
//! whose split columns the out-projection contracts: its partial sums are
//! the reduce-scatter. With `--qkv fused`, Q, K and V are one GEMM with
//! Megatron's fused weight `Wqkv [3H, H]` (rows ordered head by head, q, k
//! then v within each; split by rows), whose `[S, 3H]` is reshaped to
//! `[S, A, 3 dh]` (the heads split) and sliced into q, k and v along the
//! last axis (`fusion.slice`).
//! LayerNorm is written with the dialect's ops (`sum`, `broadcast`, `sub`,
//! `mul`, `rsqrt`), without its own op, in f32 between a cast of `x` in and
//! a cast of the result out, as torch computes it. Attention is one `fusion.attention
//! causal` (its default scale is 1 / sqrt(dh)), or with `--attention math`
//! the unfused chain: q scaled, `q k^T`, an additive causal mask made once
//! from two f32 `iota`s (exact positions at any S, unlike bf16's) and shared
//! by the blocks, the softmax as `amax`, `sub`, `exp`, `sum`, `div`, and the
//! product with v. Q, K, V and the out-projection have no bias.

use anyhow::{Result, bail};
use hir::passes::Choice as _;
use hir_abi::DType;
use std::fmt::Write as _;

hir::passes::choice! {
    /// How a block projects the tokens to q, k and v.
    pub enum Qkv {
        /// Three GEMMs, one weight each (`Wq`, `Wk`, `Wv`).
        Separate = "separate",
        /// One GEMM with the fused weight `Wqkv`, sliced into q, k and v.
        Fused = "fused",
    }
}

hir::passes::choice! {
    /// How a block computes its attention.
    pub enum Attention {
        /// One `fusion.attention` op (the runtime's fused kernel).
        Fused = "fused",
        /// The unfused chain of fusion ops: scale, `q k^T`, the causal mask,
        /// a softmax of amax, sub, exp, sum and div, the product with v.
        Math = "math",
    }
}

/// The sizes of a stack of blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Blocks {
    /// N: blocks, each with its own weights.
    pub blocks: usize,
    /// S: tokens.
    pub s: usize,
    /// H: hidden size.
    pub h: usize,
    /// A: attention heads, each of H / A.
    pub heads: usize,
    /// F: the MLP's width.
    pub f: usize,
    /// D: the mesh is devices `0..D`.
    pub devices: usize,
    pub dtype: DType,
    /// How attention is written: one fused op, or the unfused chain.
    pub attention: Attention,
    /// Q, K and V as three GEMMs or one.
    pub qkv: Qkv,
}

/// The arguments of a block, with three projection weights.
const WEIGHTS: [&str; 11] = [
    "ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "c1", "w2",
];
/// The arguments of a block, with the fused projection weight.
const FUSED_WEIGHTS: [&str; 9] = [
    "ln1_g", "ln1_b", "wqkv", "wo", "ln2_g", "ln2_b", "w1", "c1", "w2",
];

impl Blocks {
    /// Checks that the sizes build a program: every extent at least 1, and
    /// those split over the devices (S, A, F) or into heads (H) divisible.
    pub fn check(&self) -> Result<()> {
        let Blocks {
            blocks,
            s,
            h,
            heads,
            f,
            devices: d,
            ..
        } = *self;
        if [blocks, s, h, heads, f, d].contains(&0) {
            bail!(
                "block: N, S, H, heads, F and D must be at least 1 (N={blocks} S={s} H={h} heads={heads} F={f} D={d})"
            );
        }
        let divides = |extent: usize, what: &str, by: usize, why: &str| -> Result<()> {
            if !extent.is_multiple_of(by) {
                bail!("block: {what}={extent} is not a multiple of {why}={by}");
            }
            Ok(())
        };
        divides(s, "S", d, "D (tokens split over the devices)")?;
        divides(heads, "heads", d, "D (heads split over the devices)")?;
        divides(f, "F", d, "D (the MLP split over the devices)")?;
        divides(h, "H", heads, "heads (H split into heads)")
    }

    /// The arguments of the entry function: `x`, then each block's weights.
    pub fn arguments(&self) -> usize {
        1 + self.blocks * self.weights().len()
    }

    /// The names of a block's weights, in argument order.
    fn weights(&self) -> &'static [&'static str] {
        match self.qkv {
            Qkv::Separate => &WEIGHTS,
            Qkv::Fused => &FUSED_WEIGHTS,
        }
    }

    /// The program's text: `@blocks(x, weights of block 0, ...) -> x`.
    pub fn generate(&self) -> Result<String> {
        self.check()?;
        let mut program = Emitter {
            sizes: self,
            text: String::new(),
        };
        program.module();
        Ok(program.text)
    }
}

/// A value of the program: its SSA name and type.
#[derive(Clone)]
struct Value {
    name: String,
    ty: String,
}

/// What a block needs of the values made once.
struct Shared {
    /// `[S]` f32 rows of 1 / H: a mean is a sum times this.
    inv_h: Value,
    /// `[S]` f32 rows of LayerNorm's epsilon.
    eps: Value,
    /// What the unfused attention needs (`--attention math`).
    math: Option<Math>,
}

/// The constants of the unfused attention, made once.
struct Math {
    /// `[A, S, dh]` of 1 / sqrt(dh), scaling q.
    scale: Value,
    /// `[S, S]`: 0 where a query may see a key, a large negative elsewhere.
    mask: Value,
}

struct Emitter<'a> {
    sizes: &'a Blocks,
    text: String,
}

impl Emitter<'_> {
    /// A tensor type of `shape` in `dtype`, placed on the mesh by `dist`.
    fn ty(&self, shape: &[usize], dtype: DType, dist: &[&str]) -> String {
        let extents: Vec<String> = shape.iter().map(usize::to_string).collect();
        format!(
            "tensor<{}x{}, #fusion.dist<@tp, [{}]>>",
            extents.join("x"),
            dtype.mlir(),
            dist.join(", ")
        )
    }

    /// [`Emitter::ty`] in the program's element type.
    fn t(&self, shape: &[usize], dist: &[&str]) -> String {
        self.ty(shape, self.sizes.dtype, dist)
    }

    /// `%name = fusion.op operands [attribute] : operand types -> ty`.
    fn op(
        &mut self,
        name: &str,
        op: &str,
        operands: &[&Value],
        attribute: &str,
        ty: String,
    ) -> Value {
        let names: Vec<&str> = operands.iter().map(|value| value.name.as_str()).collect();
        let types: Vec<&str> = operands.iter().map(|value| value.ty.as_str()).collect();
        let attribute = if attribute.is_empty() {
            String::new()
        } else {
            format!(" {attribute}")
        };
        let _ = writeln!(
            self.text,
            "  %{name} = fusion.{op} {}{attribute} : {} -> {ty}",
            names.join(", "),
            types.join(", ")
        );
        Value {
            name: format!("%{name}"),
            ty,
        }
    }

    /// `%name = fusion.fill value : ty` (or `iota`): no operand.
    fn init(&mut self, name: &str, op: &str, value: &str, ty: String) -> Value {
        let _ = writeln!(self.text, "  %{name} = fusion.{op} {value} : {ty}");
        Value {
            name: format!("%{name}"),
            ty,
        }
    }

    fn module(&mut self) {
        let Blocks {
            blocks,
            s,
            h,
            heads,
            f,
            devices: d,
            dtype,
            attention,
            qkv,
        } = *self.sizes;
        let _ = writeln!(
            self.text,
            "// hir-bench program block: {blocks} Megatron sequence-parallel transformer block(s), \
             S={s} H={h} heads={heads} F={f} D={d} {}, {} attention, {} qkv (tools/src/blocks.rs)",
            dtype.mlir(),
            attention.name(),
            qkv.name()
        );
        let devices: Vec<String> = (0..d).map(|device| device.to_string()).collect();
        let _ = writeln!(self.text, "fusion.mesh @tp = [{}]", devices.join(", "));
        let rows = self.t(&[s, h], &["didx", "serial"]);
        let mut arguments = vec![format!("%x: {rows}")];
        let mut weights = Vec::new();
        for block in 0..blocks {
            let values: Vec<Value> = self
                .sizes
                .weights()
                .iter()
                .map(|name| Value {
                    name: format!("%{name}_{block}"),
                    ty: self.weight_type(name),
                })
                .collect();
            arguments.extend(
                values
                    .iter()
                    .map(|value| format!("{}: {}", value.name, value.ty)),
            );
            weights.push(values);
        }
        let _ = writeln!(
            self.text,
            "func.func @blocks({}) -> {rows} {{",
            arguments.join(",\n    ")
        );
        let shared = self.shared();
        let mut x = Value {
            name: "%x".into(),
            ty: rows.clone(),
        };
        for (block, weights) in weights.iter().enumerate() {
            x = self.block(block, &x, weights, &shared);
        }
        let _ = writeln!(self.text, "  return {} : {rows}\n}}", x.name);
    }

    /// The type of the block's weight `name`: Megatron's layout and split.
    fn weight_type(&self, name: &str) -> String {
        let Blocks { h, f, .. } = *self.sizes;
        match name {
            "ln1_g" | "ln1_b" | "ln2_g" | "ln2_b" => self.t(&[h], &["serial"]),
            "wq" | "wk" | "wv" => self.t(&[h, h], &["didx", "serial"]),
            "wqkv" => self.t(&[3 * h, h], &["didx", "serial"]),
            "wo" => self.t(&[h, h], &["serial", "didx"]),
            "w1" => self.t(&[f, h], &["didx", "serial"]),
            "c1" => self.t(&[f], &["didx"]),
            "w2" => self.t(&[h, f], &["serial", "didx"]),
            _ => unreachable!("{name} is not a weight of the block"),
        }
    }

    /// The values every block uses, made once.
    fn shared(&mut self) -> Shared {
        let Blocks { s, h, .. } = *self.sizes;
        let row = self.ty(&[s], DType::F32, &["didx"]);
        let inv_h = self.init("inv_h", "fill", &float(1.0 / h as f64), row.clone());
        let eps = self.init("eps", "fill", &float(1e-5), row);
        let math = (self.sizes.attention == Attention::Math).then(|| self.math());
        Shared { inv_h, eps, math }
    }

    /// The constants of the unfused attention: q's scale and the causal mask.
    fn math(&mut self) -> Math {
        let Blocks {
            s, h, heads, dtype, ..
        } = *self.sizes;
        let dh = h / heads;
        let scale = self.init(
            "scale",
            "fill",
            &float(1.0 / (dh as f64).sqrt()),
            self.t(&[heads, s, dh], &["didx", "serial", "serial"]),
        );
        // Key j is hidden from query i where j > i: relu(j - i) is nonzero
        // there, in f32, whose integers are exact up to 2^24 (bf16's only
        // to 256, where j - i would round to 0).
        let square = self.ty(&[s, s], DType::F32, &["serial", "serial"]);
        let queries = self.init("query_pos", "iota", "0", square.clone());
        let keys = self.init("key_pos", "iota", "1", square.clone());
        let ahead = self.op("ahead", "sub", &[&keys, &queries], "", square.clone());
        let mut hidden = self.op("hidden", "relu", &[&ahead], "", square);
        let masks = self.t(&[s, s], &["serial", "serial"]);
        if dtype != DType::F32 {
            hidden = self.op("hidden_t", "cast", &[&hidden], "", masks.clone());
        }
        // Far below any score, yet finite in the type: exp(it - max) is 0.
        let low = if dtype == DType::F16 { -6e4 } else { -1e30 };
        let low = self.init("mask_low", "fill", &float(low), masks.clone());
        let zero = self.init("mask_zero", "fill", &float(0.0), masks.clone());
        let mask = self.op("mask", "where", &[&hidden, &low, &zero], "", masks);
        Math { scale, mask }
    }

    /// `value` cast to `ty`, or itself where it has that type already.
    fn cast(&mut self, name: &str, value: &Value, ty: String) -> Value {
        if value.ty == ty {
            return value.clone();
        }
        self.op(name, "cast", &[value], "", ty)
    }

    /// LayerNorm of `x`'s rows on each device: `(x - mean) / sqrt(var +
    /// eps) * g + b`, the mean and variance over H. As torch's LayerNorm, it
    /// computes in f32 between a cast in and a cast out, whatever the
    /// program's element type: one rounding, and a fused kernel that is not
    /// bound by rounding every intermediate to bf16.
    fn layer_norm(&mut self, p: &str, x: &Value, g: &Value, b: &Value, shared: &Shared) -> Value {
        let Blocks { s, h, .. } = *self.sizes;
        let rows = self.ty(&[s, h], DType::F32, &["didx", "serial"]);
        let row = self.ty(&[s], DType::F32, &["didx"]);
        let x = self.cast(&format!("{p}_x"), x, rows.clone());
        let sum = self.op(&format!("{p}_sum"), "sum", &[&x], "[1]", row.clone());
        let mean = self.op(
            &format!("{p}_mean"),
            "mul",
            &[&sum, &shared.inv_h],
            "",
            row.clone(),
        );
        let mean = self.op(
            &format!("{p}_mean_b"),
            "broadcast",
            &[&mean],
            "[1]",
            rows.clone(),
        );
        let centered = self.op(&format!("{p}_c"), "sub", &[&x, &mean], "", rows.clone());
        let squares = self.op(
            &format!("{p}_sq"),
            "mul",
            &[&centered, &centered],
            "",
            rows.clone(),
        );
        let sum = self.op(
            &format!("{p}_sqsum"),
            "sum",
            &[&squares],
            "[1]",
            row.clone(),
        );
        let var = self.op(
            &format!("{p}_var"),
            "mul",
            &[&sum, &shared.inv_h],
            "",
            row.clone(),
        );
        let var = self.op(
            &format!("{p}_var_eps"),
            "add",
            &[&var, &shared.eps],
            "",
            row.clone(),
        );
        let rstd = self.op(&format!("{p}_rstd"), "rsqrt", &[&var], "", row);
        let rstd = self.op(
            &format!("{p}_rstd_b"),
            "broadcast",
            &[&rstd],
            "[1]",
            rows.clone(),
        );
        let normed = self.op(
            &format!("{p}_n"),
            "mul",
            &[&centered, &rstd],
            "",
            rows.clone(),
        );
        // Broadcast, then cast: ops of the iteration shape, in one kernel.
        let out = self.t(&[s, h], &["didx", "serial"]);
        let g = self.op(&format!("{p}_g"), "broadcast", &[g], "[0]", out.clone());
        let g = self.cast(&format!("{p}_g32"), &g, rows.clone());
        let b = self.op(&format!("{p}_b"), "broadcast", &[b], "[0]", out.clone());
        let b = self.cast(&format!("{p}_b32"), &b, rows.clone());
        let scaled = self.op(&format!("{p}_gn"), "mul", &[&normed, &g], "", rows.clone());
        let y = self.op(&format!("{p}_y32"), "add", &[&scaled, &b], "", rows);
        self.cast(&format!("{p}_y"), &y, out)
    }

    /// Block `block`: attention, then the MLP, each with its residual.
    fn block(&mut self, block: usize, x: &Value, weights: &[Value], shared: &Shared) -> Value {
        let names = self.sizes.weights();
        let w = |name: &str| {
            let index = names.iter().position(|weight| *weight == name);
            &weights[index.expect("a weight of the block")]
        };
        let Blocks { s, h, heads, f, .. } = *self.sizes;
        let dh = h / heads;
        let p = format!("b{block}");
        let _ = writeln!(self.text, "  // block {block}: attention");
        let rows = self.t(&[s, h], &["didx", "serial"]);
        let whole = self.t(&[s, h], &["serial", "serial"]);
        let per_head = self.t(&[heads, s, dh], &["didx", "serial", "serial"]);

        let y = self.layer_norm(&format!("{p}_ln1"), x, w("ln1_g"), w("ln1_b"), shared);
        let gathered = self.op(&format!("{p}_yg"), "set", &[&y], "", whole.clone());
        let columns = self.t(&[s, h], &["serial", "didx"]);
        let token_heads = self.t(&[s, heads, dh], &["serial", "didx", "serial"]);
        // Column parallel: the local columns are whole heads.
        let [q, k, v] = match self.sizes.qkv {
            Qkv::Separate => ["q", "k", "v"].map(|name| {
                let y = self.op(
                    &format!("{p}_{name}"),
                    "linear",
                    &[&gathered, w(&format!("w{name}"))],
                    "",
                    columns.clone(),
                );
                self.op(
                    &format!("{p}_{name}_split"),
                    "reshape",
                    &[&y],
                    "",
                    token_heads.clone(),
                )
            }),
            Qkv::Fused => {
                let y = self.op(
                    &format!("{p}_qkv"),
                    "linear",
                    &[&gathered, w("wqkv")],
                    "",
                    self.t(&[s, 3 * h], &["serial", "didx"]),
                );
                let y = self.op(
                    &format!("{p}_qkv_split"),
                    "reshape",
                    &[&y],
                    "",
                    self.t(&[s, heads, 3 * dh], &["serial", "didx", "serial"]),
                );
                // Each head's q, k and v, one after the other.
                [("q", 0), ("k", dh), ("v", 2 * dh)].map(|(name, offset)| {
                    self.op(
                        &format!("{p}_{name}_split"),
                        "slice",
                        &[&y],
                        &format!("offsets [0, 0, {offset}] strides [1, 1, 1]"),
                        token_heads.clone(),
                    )
                })
            }
        }
        .map(|split| {
            let name = split
                .name
                .trim_start_matches('%')
                .replace("_split", "_heads");
            self.op(&name, "transpose", &[&split], "[1, 0, 2]", per_head.clone())
        });
        let heads_out = match &shared.math {
            None => self.op(
                &format!("{p}_o"),
                "attention",
                &[&q, &k, &v],
                "causal",
                per_head.clone(),
            ),
            Some(math) => self.attention_math(&p, &q, &k, &v, math),
        };
        let tokens = self.op(
            &format!("{p}_ot"),
            "transpose",
            &[&heads_out],
            "[1, 0, 2]",
            token_heads,
        );
        let merged = self.op(&format!("{p}_om"), "reshape", &[&tokens], "", columns);
        // Row parallel: contracting the split columns is the reduce-scatter.
        let attention = self.op(
            &format!("{p}_attn"),
            "linear",
            &[&merged, w("wo")],
            "",
            rows.clone(),
        );
        let x = self.op(
            &format!("{p}_x1"),
            "add",
            &[x, &attention],
            "",
            rows.clone(),
        );

        let _ = writeln!(self.text, "  // block {block}: MLP");
        let y = self.layer_norm(&format!("{p}_ln2"), &x, w("ln2_g"), w("ln2_b"), shared);
        let gathered = self.op(&format!("{p}_y2g"), "set", &[&y], "", whole);
        let hidden_ty = self.t(&[s, f], &["serial", "didx"]);
        let hidden = self.op(
            &format!("{p}_fc1"),
            "linear",
            &[&gathered, w("w1"), w("c1")],
            "",
            hidden_ty.clone(),
        );
        let hidden = self.op(&format!("{p}_gelu"), "gelu", &[&hidden], "", hidden_ty);
        let out = self.op(
            &format!("{p}_fc2"),
            "linear",
            &[&hidden, w("w2")],
            "",
            rows.clone(),
        );
        self.op(&format!("{p}_x2"), "add", &[&x, &out], "", rows)
    }

    /// The unfused attention of block prefix `p`'s local heads:
    /// `softmax(q / sqrt(dh) k^T + mask) v`, the softmax over the keys as
    /// `exp(x - amax) / sum`.
    fn attention_math(&mut self, p: &str, q: &Value, k: &Value, v: &Value, math: &Math) -> Value {
        let Blocks { s, h, heads, .. } = *self.sizes;
        let dh = h / heads;
        let per_head = self.t(&[heads, s, dh], &["didx", "serial", "serial"]);
        let scores = self.t(&[heads, s, s], &["didx", "serial", "serial"]);
        let head_rows = self.t(&[heads, s], &["didx", "serial"]);
        let q = self.op(
            &format!("{p}_qs"),
            "mul",
            &[q, &math.scale],
            "",
            per_head.clone(),
        );
        let kt = self.op(
            &format!("{p}_kt"),
            "transpose",
            &[k],
            "[0, 2, 1]",
            self.t(&[heads, dh, s], &["didx", "serial", "serial"]),
        );
        let logits = self.op(&format!("{p}_s"), "matmul", &[&q, &kt], "", scores.clone());
        let mask = self.op(
            &format!("{p}_mask"),
            "broadcast",
            &[&math.mask],
            "[0]",
            scores.clone(),
        );
        let logits = self.op(
            &format!("{p}_sm"),
            "add",
            &[&logits, &mask],
            "",
            scores.clone(),
        );
        let max = self.op(
            &format!("{p}_max"),
            "amax",
            &[&logits],
            "[2]",
            head_rows.clone(),
        );
        let max = self.op(
            &format!("{p}_max_b"),
            "broadcast",
            &[&max],
            "[2]",
            scores.clone(),
        );
        let shifted = self.op(
            &format!("{p}_sh"),
            "sub",
            &[&logits, &max],
            "",
            scores.clone(),
        );
        let exp = self.op(&format!("{p}_e"), "exp", &[&shifted], "", scores.clone());
        let total = self.op(&format!("{p}_z"), "sum", &[&exp], "[2]", head_rows);
        let total = self.op(
            &format!("{p}_z_b"),
            "broadcast",
            &[&total],
            "[2]",
            scores.clone(),
        );
        let probs = self.op(&format!("{p}_p"), "div", &[&exp, &total], "", scores);
        self.op(&format!("{p}_o"), "matmul", &[&probs, v], "", per_head)
    }
}

/// An f64 as an MLIR float literal (which needs a `.`).
fn float(value: f64) -> String {
    format!("{value:.9e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(blocks: usize, devices: usize) -> Blocks {
        Blocks {
            blocks,
            s: 16,
            h: 16,
            heads: 4,
            f: 32,
            devices,
            dtype: DType::BF16,
            attention: Attention::Fused,
            qkv: Qkv::Separate,
        }
    }

    #[test]
    fn generates_verifying_programs_that_grow_with_the_blocks() {
        let context = crate::context();
        let mut lengths = Vec::new();
        for blocks in [1, 2, 4] {
            let text = sizes(blocks, 2).generate().unwrap();
            let module = crate::program::parse_source(&context, &text, "block").unwrap();
            let function = crate::program::entry(&module).unwrap();
            let signature = crate::program::signature(&module, &function).unwrap();
            assert_eq!(signature.inputs.len(), sizes(blocks, 2).arguments());
            assert_eq!(signature.outputs[0].shape, [16, 16]);
            lengths.push(text.lines().count());
        }
        // Each block adds the same number of lines.
        assert_eq!(lengths[1] - lengths[0], (lengths[2] - lengths[1]) / 2);
    }

    #[test]
    fn attention_is_one_op_or_the_unfused_chain() {
        let context = crate::context();
        for (attention, fused) in [(Attention::Fused, true), (Attention::Math, false)] {
            let text = Blocks {
                attention,
                ..sizes(2, 2)
            }
            .generate()
            .unwrap();
            crate::program::parse_source(&context, &text, "block").unwrap();
            assert_eq!(
                text.matches("fusion.attention").count(),
                if fused { 2 } else { 0 }
            );
            assert_eq!(text.contains("fusion.exp"), !fused, "{attention}");
            assert_eq!(text.contains("%mask"), !fused, "{attention}");
        }
    }

    #[test]
    fn qkv_is_three_gemms_or_one_sliced() {
        let context = crate::context();
        for qkv in [Qkv::Separate, Qkv::Fused] {
            let blocks = Blocks { qkv, ..sizes(2, 2) };
            let text = blocks.generate().unwrap();
            let module = crate::program::parse_source(&context, &text, "block").unwrap();
            let function = crate::program::entry(&module).unwrap();
            let signature = crate::program::signature(&module, &function).unwrap();
            assert_eq!(signature.inputs.len(), blocks.arguments());
            let fused = qkv == Qkv::Fused;
            // Per block: q, k, v (or qkv), the out-projection, FC1 and FC2.
            let linears = if fused { 4 } else { 6 };
            assert_eq!(text.matches("fusion.linear").count(), 2 * linears);
            assert_eq!(
                text.matches("fusion.slice").count(),
                if fused { 6 } else { 0 }
            );
            assert_eq!(text.contains("%wqkv_1: tensor<48x16xbf16"), fused, "{qkv}");
        }
    }

    #[test]
    fn sizes_that_do_not_split_are_named() {
        let error = |blocks: Blocks| blocks.check().unwrap_err().to_string();
        assert_eq!(
            error(Blocks {
                s: 6,
                devices: 4,
                ..sizes(1, 4)
            }),
            "block: S=6 is not a multiple of D (tokens split over the devices)=4"
        );
        assert_eq!(
            error(Blocks {
                h: 18,
                ..sizes(1, 1)
            }),
            "block: H=18 is not a multiple of heads (H split into heads)=4"
        );
        assert!(
            error(Blocks {
                blocks: 0,
                ..sizes(1, 1)
            })
            .contains("must be at least 1")
        );
        assert!(
            Blocks {
                heads: 2,
                ..sizes(1, 4)
            }
            .check()
            .is_err()
        );
    }

    #[test]
    fn literals_parse_as_mlir_floats() {
        assert_eq!(float(0.0625), "6.250000000e-2");
        assert_eq!(float(-1e30), "-1.000000000e30");
    }
}
