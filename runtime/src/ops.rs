//! The work a backend is asked to do, decoded from the C ABI and checked the
//! same way whatever the backend: compute [`Kernel`]s, [`CollectiveOp`]s and
//! point-to-point [`Transfer`]s, over a [`Team`].

use crate::error::{Error, Result};
use crate::memref::View;
use hir_abi::{
    Activation, Binary, Collective, DType, Entry, ReduceKind, Reduction, Transport, Unary,
};
use std::fmt;
use std::sync::Arc;

/// The global ranks taking part in a communication, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Team(Arc<[usize]>);

impl Team {
    /// Checks a team as the program passed it, in a world of `world` ranks.
    pub fn new(ranks: &[i64], world: usize) -> Result<Team> {
        if ranks.is_empty() {
            return Err(Error::Invalid("team is empty".into()));
        }
        let mut seen = vec![false; world];
        for &rank in ranks {
            if rank < 0 || rank as usize >= world {
                return Err(Error::Invalid(format!(
                    "team rank {rank} is out of range for a run of {world} ranks"
                )));
            }
            if std::mem::replace(&mut seen[rank as usize], true) {
                return Err(Error::Invalid(format!(
                    "rank {rank} appears twice in the team"
                )));
            }
        }
        Ok(Team(ranks.iter().map(|&rank| rank as usize).collect()))
    }

    pub fn ranks(&self) -> &[usize] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `rank`'s index in the team.
    pub fn position(&self, rank: usize) -> Option<usize> {
        self.0.iter().position(|&member| member == rank)
    }

    /// `rank`'s index, or an error naming the role it plays.
    pub fn require(&self, rank: usize, role: &str) -> Result<usize> {
        self.position(rank)
            .ok_or_else(|| Error::Invalid(format!("{role} {rank} is not in the team {self}")))
    }
}

impl fmt::Display for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A compute op on buffers. A transpose is a `Copy` from its input viewed
/// with the axes permuted.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelOp {
    Copy,
    Unary(Unary),
    /// To the output's element type.
    Cast,
    Binary(Binary),
    /// `inputs[1]` where `inputs[0]` (the mask) is nonzero, `inputs[2]` elsewhere.
    Where,
    /// Over these input axes.
    Reduce(Reduction, Vec<usize>),
    /// Along these new output axes.
    Broadcast(Vec<usize>),
    /// `[B1.., M, K] x [B2.., K, N] -> [B.., M, N]` with B the broadcast of
    /// B1 and B2 ([`matmul_batch`]), and the row case `[K] x [K, N] -> [N]`.
    Matmul,
    /// As `Matmul`, added to the output's values: `out += lhs x rhs`.
    MatmulAccumulate,
    /// `[B.., K] x [N, K]^T (+ bias [N]) -> [B.., N]`.
    Linear,
    /// As `Matmul`, the activation applied to each f32 element before its
    /// rounding (the GEMM's epilogue).
    MatmulActivation(Activation),
    /// As `Linear`, the activation applied after the bias, before the
    /// rounding.
    LinearActivation(Activation),
    /// As `Linear` without a bias, added to the output's values:
    /// `out += in x weight^T`.
    LinearAccumulate,
    /// No input: every output element is this value, rounded to the
    /// output's element type.
    Fill(f64),
    /// No input: every output element is `offset` plus its index along
    /// `axis`, rounded to the output's element type.
    Iota {
        axis: usize,
        offset: i64,
    },
    /// Scaled dot-product attention of `q [B.., Sq, D]`, `k [B.., Sk, D]`,
    /// `v [B.., Sk, Dv]` and an optional `mask [Sq, Sk]` into
    /// `out [B.., Sq, Dv]`: `softmax(q k^T scale + mask) v` over the keys,
    /// `causal` hiding key `j` from query `i` where `j > i`. A query that
    /// sees no key (all hidden or -inf) gets zeros.
    Attention {
        scale: f64,
        causal: bool,
    },
}

impl KernelOp {
    /// The activation a GEMM's epilogue applies, if the op is one that does.
    pub fn activation(&self) -> Option<Activation> {
        match *self {
            KernelOp::MatmulActivation(activation) | KernelOp::LinearActivation(activation) => {
                Some(activation)
            }
            _ => None,
        }
    }

    /// Whether the op is a linear (`input x weight^T (+ bias)`).
    pub fn is_linear(&self) -> bool {
        matches!(self, KernelOp::Linear | KernelOp::LinearActivation(_))
    }
}

/// A compute op with its buffers: inputs in ABI order, then the output.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub op: KernelOp,
    pub inputs: Vec<View>,
    pub output: View,
}

impl Kernel {
    /// The entry that runs this kernel, which also names it in errors and traces.
    pub fn entry(&self) -> Entry {
        let dtype = self.inputs.first().unwrap_or(&self.output).dtype;
        match &self.op {
            KernelOp::Copy => Entry::Copy(dtype),
            KernelOp::Unary(op) => Entry::Unary(*op, dtype),
            KernelOp::Cast => Entry::Cast(dtype, self.output.dtype),
            KernelOp::Binary(op) => Entry::Binary(*op, dtype),
            KernelOp::Where => Entry::Where(dtype),
            KernelOp::Reduce(op, _) => Entry::Reduction(*op, dtype),
            KernelOp::Broadcast(_) => Entry::Broadcast(dtype),
            KernelOp::Matmul => Entry::Matmul(dtype),
            KernelOp::MatmulAccumulate => Entry::MatmulAccumulate(dtype),
            KernelOp::Linear if self.inputs.len() == 3 => Entry::LinearBias(dtype),
            KernelOp::Linear => Entry::Linear(dtype),
            &KernelOp::MatmulActivation(a) => Entry::MatmulActivation(a, dtype),
            &KernelOp::LinearActivation(a) if self.inputs.len() == 3 => {
                Entry::LinearBiasActivation(a, dtype)
            }
            &KernelOp::LinearActivation(a) => Entry::LinearActivation(a, dtype),
            KernelOp::LinearAccumulate => Entry::LinearAccumulate(dtype),
            KernelOp::Fill(_) => Entry::Fill(dtype),
            KernelOp::Iota { .. } => Entry::Iota(dtype),
            KernelOp::Attention { .. } if self.inputs.len() == 4 => Entry::AttentionMask(dtype),
            KernelOp::Attention { .. } => Entry::Attention(dtype),
        }
    }

    /// Checks the buffers' shapes and element types against the op.
    pub fn validate(&self) -> Result<()> {
        let arity = match self.op {
            KernelOp::Binary(_)
            | KernelOp::Matmul
            | KernelOp::MatmulAccumulate
            | KernelOp::MatmulActivation(_)
            | KernelOp::LinearAccumulate => 2..=2,
            KernelOp::Linear | KernelOp::LinearActivation(_) => 2..=3,
            KernelOp::Where => 3..=3,
            KernelOp::Attention { .. } => 3..=4,
            KernelOp::Fill(_) | KernelOp::Iota { .. } => 0..=0,
            _ => 1..=1,
        };
        if !arity.contains(&self.inputs.len()) {
            return Err(invalid(format!(
                "takes {arity:?} inputs, got {}",
                self.inputs.len()
            )));
        }
        let dtype = self.inputs.first().unwrap_or(&self.output).dtype;
        if self.inputs.iter().any(|input| input.dtype != dtype)
            || (self.op != KernelOp::Cast && self.output.dtype != dtype)
        {
            return Err(invalid("buffers have different element types".into()));
        }
        if !self.entry().exists() {
            return Err(invalid(format!(
                "is not defined on {} (float only)",
                dtype.mlir()
            )));
        }
        // Empty for the ops of no input.
        let input = self.inputs.first().map_or(&[][..], |view| &view.sizes[..]);
        let output = &self.output.sizes;
        match &self.op {
            KernelOp::Fill(value) if !dtype.is_float() && value.fract() != 0.0 => Err(invalid(
                format!("value {value} is not an integer of {}", dtype.mlir()),
            )),
            KernelOp::Fill(_) => Ok(()),
            KernelOp::Iota { axis, .. } if *axis >= output.len() => {
                Err(axis_out_of_range(*axis, output.len()))
            }
            KernelOp::Iota { .. } => Ok(()),
            KernelOp::Copy
            | KernelOp::Unary(_)
            | KernelOp::Cast
            | KernelOp::Binary(_)
            | KernelOp::Where => {
                for view in self.inputs.iter().skip(1) {
                    same_shape("rhs", &view.sizes, input)?;
                }
                same_shape("output", output, input)
            }
            KernelOp::Reduce(_, axes) => {
                check_axes(axes, input.len(), "reduced")?;
                let kept: Vec<usize> = (0..input.len())
                    .filter(|axis| !axes.contains(axis))
                    .map(|axis| input[axis])
                    .collect();
                same_shape("output", output, &kept)
            }
            KernelOp::Broadcast(axes) => {
                check_axes(axes, output.len(), "broadcast")?;
                let kept: Vec<usize> = (0..output.len())
                    .filter(|axis| !axes.contains(axis))
                    .map(|axis| output[axis])
                    .collect();
                same_shape("input", input, &kept)
            }
            KernelOp::Matmul | KernelOp::MatmulAccumulate | KernelOp::MatmulActivation(_)
                if input.len() == 1 =>
            {
                let rhs = &self.inputs[1].sizes;
                if rhs.len() != 2 || rhs[0] != input[0] {
                    return Err(invalid(format!(
                        "row lhs {input:?} must be [K] and rhs {rhs:?} [K, N]"
                    )));
                }
                same_shape("output", output, &rhs[1..])
            }
            KernelOp::Matmul | KernelOp::MatmulAccumulate | KernelOp::MatmulActivation(_) => {
                let rhs = &self.inputs[1].sizes;
                if input.len() < 2 || rhs.len() < 2 {
                    return Err(invalid(format!(
                        "lhs {input:?} must be [B1.., M, K] and rhs {rhs:?} [B2.., K, N]"
                    )));
                }
                let batch = matmul_batch(&input[..input.len() - 2], &rhs[..rhs.len() - 2])
                    .ok_or_else(|| {
                        invalid(format!(
                            "the batch axes of lhs {input:?} and rhs {rhs:?} do not broadcast"
                        ))
                    })?;
                let (m, k) = (input[input.len() - 2], input[input.len() - 1]);
                let (rk, n) = (rhs[rhs.len() - 2], rhs[rhs.len() - 1]);
                if k != rk {
                    return Err(invalid(format!(
                        "lhs {input:?} and rhs {rhs:?} contract {k} with {rk}"
                    )));
                }
                same_shape("output", output, &[&batch[..], &[m, n]].concat())
            }
            KernelOp::Linear | KernelOp::LinearActivation(_) | KernelOp::LinearAccumulate => {
                let weight = &self.inputs[1].sizes;
                if input.is_empty() || weight.len() != 2 || weight[1] != input[input.len() - 1] {
                    return Err(invalid(format!(
                        "input {input:?} must be [B.., K] and weight {weight:?} [N, K]"
                    )));
                }
                if let Some(bias) = self.inputs.get(2) {
                    same_shape("bias", &bias.sizes, &weight[..1])?;
                }
                same_shape(
                    "output",
                    output,
                    &[&input[..input.len() - 1], &weight[..1]].concat(),
                )
            }
            KernelOp::Attention { scale, .. } => {
                // The scores are f32 on every backend.
                if !(*scale as f32).is_finite() {
                    return Err(invalid(format!("scale {scale:?} is not a finite f32")));
                }
                attention_shapes(&self.inputs, output)
            }
        }
    }
}

/// Checks `q [B.., Sq, D]`, `k [B.., Sk, D]`, `v [B.., Sk, Dv]`, the
/// optional `mask [Sq, Sk]` and `output [B.., Sq, Dv]`: the batch axes are
/// the same in all four, never broadcast.
fn attention_shapes(inputs: &[View], output: &[usize]) -> Result<()> {
    let (q, k, v) = (&inputs[0].sizes, &inputs[1].sizes, &inputs[2].sizes);
    let rank = q.len();
    if rank < 2 || k.len() != rank || v.len() != rank {
        return Err(invalid(format!(
            "q {q:?} must be [B.., Sq, D], k {k:?} [B.., Sk, D] and v {v:?} [B.., Sk, Dv], \
             with the same batch axes B"
        )));
    }
    let batch = &q[..rank - 2];
    if &k[..rank - 2] != batch || &v[..rank - 2] != batch {
        return Err(invalid(format!(
            "the batch axes of q {q:?}, k {k:?} and v {v:?} differ"
        )));
    }
    let (sq, d) = (q[rank - 2], q[rank - 1]);
    let (sk, dv) = (k[rank - 2], v[rank - 1]);
    if k[rank - 1] != d {
        return Err(invalid(format!(
            "q {q:?} and k {k:?} have head sizes {d} and {}",
            k[rank - 1]
        )));
    }
    if v[rank - 2] != sk {
        return Err(invalid(format!(
            "k {k:?} and v {v:?} have {sk} and {} keys",
            v[rank - 2]
        )));
    }
    if let Some(mask) = inputs.get(3) {
        same_shape("mask", &mask.sizes, &[sq, sk])?;
    }
    same_shape("output", output, &[batch, &[sq, dv]].concat())
}

/// A collective as one rank posts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveOp {
    pub op: Collective,
    /// For the reducing collectives; `Sum` otherwise.
    pub kind: ReduceKind,
    /// Global rank, for the rooted collectives; 0 otherwise.
    pub root: usize,
    /// For the gathering and scattering collectives; 0 otherwise.
    pub axis: usize,
    pub team: Team,
    pub backend: Transport,
    pub input: View,
    pub output: View,
}

impl CollectiveOp {
    pub fn entry(&self) -> Entry {
        Entry::Collective(self.op, self.input.dtype)
    }

    pub fn dtype(&self) -> DType {
        self.input.dtype
    }

    /// Whether the op has a root.
    pub fn rooted(&self) -> bool {
        matches!(
            self.op,
            Collective::Broadcast | Collective::Reduce | Collective::Gather | Collective::Scatter
        )
    }

    /// Checks what one rank can check alone: the backend, the root, the
    /// reduce kind of an integer type and the shapes of its own buffers.
    pub fn validate(&self) -> Result<()> {
        if self.backend != Transport::Nccl {
            return Err(Error::Invalid(
                "backend 'cuda' moves point-to-point transfers only; collectives use 'nccl'".into(),
            ));
        }
        if self.rooted() {
            self.team.require(self.root, "root")?;
        }
        if self.output.dtype != self.input.dtype {
            return Err(Error::Invalid(
                "input and output have different element types".into(),
            ));
        }
        if self.kind == ReduceKind::Avg && !self.input.dtype.is_float() {
            return Err(Error::Invalid(format!(
                "avg of {} is not supported (integer division)",
                self.input.dtype.mlir()
            )));
        }
        let (input, output) = (&self.input.sizes, &self.output.sizes);
        let n = self.team.len();
        match self.op {
            Collective::Allreduce | Collective::Broadcast | Collective::Reduce => {
                same_shape("output", output, input)
            }
            Collective::Allgather | Collective::Gather => {
                concatenated(self.axis, n, input, output, "output")
            }
            Collective::ReduceScatter | Collective::Scatter => {
                concatenated(self.axis, n, output, input, "input")
            }
            Collective::Alltoall => {
                same_shape("output", output, input)?;
                match input.get(self.axis) {
                    Some(extent) if extent % n == 0 => Ok(()),
                    Some(extent) => Err(Error::Invalid(format!(
                        "team size {n} does not divide axis {} of extent {extent}",
                        self.axis
                    ))),
                    None => Err(axis_out_of_range(self.axis, input.len())),
                }
            }
        }
    }
}

/// One side of a point-to-point transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub buffer: View,
    /// Global rank.
    pub peer: usize,
    pub team: Team,
    pub backend: Transport,
}

/// The batch axes of a matmul of an lhs with batch axes `lhs` and an rhs
/// with `rhs`, broadcast as torch.matmul's: aligned from the right, each pair
/// equal or one of them 1 or missing; `None` where they do not broadcast.
pub fn matmul_batch(lhs: &[usize], rhs: &[usize]) -> Option<Vec<usize>> {
    let rank = lhs.len().max(rhs.len());
    let extent = |axes: &[usize], from_right: usize| {
        axes.len()
            .checked_sub(from_right)
            .map_or(1, |axis| axes[axis])
    };
    let mut batch: Vec<usize> = (1..=rank)
        .map(|from_right| {
            let (x, y) = (extent(lhs, from_right), extent(rhs, from_right));
            (x == y || x == 1 || y == 1).then_some(if x == 1 { y } else { x })
        })
        .collect::<Option<_>>()?;
    batch.reverse();
    Some(batch)
}

/// For each axis of a matmul's batch `batch`, the axis of an operand's batch
/// axes `operand` it reads along (aligned from the right), `None` where the
/// operand lacks the axis or broadcasts it (extent 1 against a longer one):
/// the operand's stride there is 0.
pub fn batch_axes_read(operand: &[usize], batch: &[usize]) -> Vec<Option<usize>> {
    let missing = batch.len() - operand.len();
    (0..batch.len())
        .map(|axis| {
            let own = axis.checked_sub(missing)?;
            (operand[own] == batch[axis]).then_some(own)
        })
        .collect()
}

fn invalid(message: String) -> Error {
    Error::Invalid(message)
}

fn same_shape(what: &str, got: &[usize], want: &[usize]) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(invalid(format!(
            "{what} has shape {got:?}, expected {want:?}"
        )))
    }
}

fn axis_out_of_range(axis: usize, rank: usize) -> Error {
    invalid(format!("axis {axis} is out of range for rank {rank}"))
}

fn check_axes(axes: &[usize], rank: usize, what: &str) -> Result<()> {
    if axes.is_empty() {
        return Err(invalid(format!("no {what} axis")));
    }
    for (i, &axis) in axes.iter().enumerate() {
        if axis >= rank {
            return Err(invalid(format!(
                "{what} axis {axis} is out of range for rank {rank}"
            )));
        }
        if axes[..i].contains(&axis) {
            return Err(invalid(format!("{what} axis {axis} is listed twice")));
        }
    }
    Ok(())
}

/// `whole` is `n` copies of `part` along `axis`.
fn concatenated(axis: usize, n: usize, part: &[usize], whole: &[usize], name: &str) -> Result<()> {
    if axis >= part.len() {
        return Err(axis_out_of_range(axis, part.len()));
    }
    let mut want = part.to_vec();
    want[axis] *= n;
    same_shape(name, whole, &want)
}
