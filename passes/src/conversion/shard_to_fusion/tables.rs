//! Which upstream op becomes which fusion op, one table per source dialect,
//! and the `shard` collectives a program of global tensors does not hold.

use crate::upstream::{shard, structured::linalg};
use hir_dialects::fusion;
use melior::dialect::ods::arith;

/// An op's name, from its generated wrapper.
pub type Name = fn() -> &'static str;

/// linalg's named elementwise ops imported one to one, and the fusion op
/// each becomes; they take their inputs and a destination, whose value they
/// do not read.
pub const LINALG_ELEMENTWISE: &[(Name, Name)] = &[
    (linalg::AddOperation::name, fusion::AddOperation::name),
    (linalg::SubOperation::name, fusion::SubOperation::name),
    (linalg::MulOperation::name, fusion::MulOperation::name),
    (linalg::DivOperation::name, fusion::DivOperation::name),
    (linalg::MaxOperation::name, fusion::MaxOperation::name),
    (linalg::MinOperation::name, fusion::MinOperation::name),
    (linalg::NegFOperation::name, fusion::NegOperation::name),
    (linalg::ExpOperation::name, fusion::ExpOperation::name),
    (linalg::TanhOperation::name, fusion::TanhOperation::name),
    (linalg::AbsOperation::name, fusion::AbsOperation::name),
    (linalg::RsqrtOperation::name, fusion::RsqrtOperation::name),
];

/// arith's float ops and conversions imported one to one, and the fusion op
/// each becomes: on tensors in a function body, on scalars in a
/// `linalg.generic` body. `fptosi` out of the integer's range (poison in
/// arith) becomes fusion.cast's saturation; the unsigned conversions have
/// no counterpart.
pub const ARITH: &[(Name, Name)] = &[
    (arith::AddFOperation::name, fusion::AddOperation::name),
    (arith::SubFOperation::name, fusion::SubOperation::name),
    (arith::MulFOperation::name, fusion::MulOperation::name),
    (arith::DivFOperation::name, fusion::DivOperation::name),
    (arith::MaximumFOperation::name, fusion::MaxOperation::name),
    (arith::MaxNumFOperation::name, fusion::MaxOperation::name),
    (arith::MinimumFOperation::name, fusion::MinOperation::name),
    (arith::MinNumFOperation::name, fusion::MinOperation::name),
    (arith::NegFOperation::name, fusion::NegOperation::name),
    (arith::TruncFOperation::name, fusion::CastOperation::name),
    (arith::ExtFOperation::name, fusion::CastOperation::name),
    (arith::SIToFPOperation::name, fusion::CastOperation::name),
    (arith::FPToSIOperation::name, fusion::CastOperation::name),
    (arith::ExtSIOperation::name, fusion::CastOperation::name),
    (arith::TruncIOperation::name, fusion::CastOperation::name),
];

/// The ops imported one to one on tensors.
pub fn elementwise() -> impl Iterator<Item = &'static (Name, Name)> {
    LINALG_ELEMENTWISE.iter().chain(ARITH)
}

/// The kinds of `linalg.elementwise` imported, and the fusion op each
/// becomes (`max_signed`/`min_signed` are `maximumf`/`minimumf` on floats).
pub const ELEMENTWISE_KINDS: &[(&str, Name)] = &[
    ("exp", fusion::ExpOperation::name),
    ("abs", fusion::AbsOperation::name),
    ("negf", fusion::NegOperation::name),
    ("rsqrt", fusion::RsqrtOperation::name),
    ("tanh", fusion::TanhOperation::name),
    ("add", fusion::AddOperation::name),
    ("sub", fusion::SubOperation::name),
    ("mul", fusion::MulOperation::name),
    ("div", fusion::DivOperation::name),
    ("max_signed", fusion::MaxOperation::name),
    ("min_signed", fusion::MinOperation::name),
];

/// `shard`'s communication ops: what `shard-partition` makes, which a
/// program of global tensors does not hold.
pub const COLLECTIVES: &[Name] = &[
    shard::AllGatherOperation::name,
    shard::AllReduceOperation::name,
    shard::AllSliceOperation::name,
    shard::AllToAllOperation::name,
    shard::BroadcastOperation::name,
    shard::GatherOperation::name,
    shard::RecvOperation::name,
    shard::ReduceOperation::name,
    shard::ReduceScatterOperation::name,
    shard::ScatterOperation::name,
    shard::SendOperation::name,
    shard::ShiftOperation::name,
    shard::UpdateHaloOperation::name,
];

/// The indexing maps of `linalg.matmul`'s `A[M, K] @ B[K, N]` (its default).
pub const MATMUL_MAPS: &str = "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]";
/// The indexing maps of `linalg.matmul`'s `A[M, K] @ B[N, K]^T`.
pub const MATMUL_TRANSPOSED_B_MAPS: &str = "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]";
/// The indexing maps of `linalg.batch_matmul`'s `A[B, M, K] @ B[B, K, N]`
/// (its default).
pub const BATCH_MATMUL_MAPS: &str = "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]";
