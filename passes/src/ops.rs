//! The ops the passes look for or build by name, each named once: a variant
//! is one generated op wrapper (so its name comes from the `.td` file), and
//! [`Op::of`] parses an op's name into its variant. What kind of computation
//! an op is comes from its ODS traits ([`hir_dialects::OpKind`]), not from
//! here.

use hir_dialects::{comm, fusion, host};
use melior::dialect::ods::{arith, builtin, func, llvm, memref, scf};
use melior::ir::{OperationRef, operation::OperationLike};

/// The anchor of a pass that runs on a whole module, as pass pipelines name it.
pub const MODULE: &str = "builtin.module";
/// The anchor of a pass that runs on each function.
pub const FUNCTION: &str = "func.func";

macro_rules! ops {
    ($($variant:ident => $wrapper:path,)*) => {
        /// An op a pass tests for or creates by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op {
            $($variant,)*
        }

        impl Op {
            const ALL: &[Op] = &[$(Op::$variant,)*];

            /// The op's full name, e.g. `host.select`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Op::$variant => <$wrapper>::name(),)*
                }
            }
        }
    };
}

ops! {
    FusionMesh => fusion::MeshOperation,
    FusionSet => fusion::SetOperation,
    FusionSum => fusion::SumOperation,
    FusionFill => fusion::FillOperation,
    FusionIota => fusion::IotaOperation,
    FusionAttention => fusion::AttentionOperation,
    FusionReshape => fusion::ReshapeOperation,
    FusionSlice => fusion::SliceOperation,
    FusionNeg => fusion::NegOperation,
    FusionExp => fusion::ExpOperation,
    FusionTanh => fusion::TanhOperation,
    FusionAbs => fusion::AbsOperation,
    FusionRelu => fusion::ReluOperation,
    FusionGelu => fusion::GeluOperation,
    FusionRsqrt => fusion::RsqrtOperation,
    FusionCast => fusion::CastOperation,
    FusionAdd => fusion::AddOperation,
    FusionSub => fusion::SubOperation,
    FusionMul => fusion::MulOperation,
    FusionDiv => fusion::DivOperation,
    FusionMax => fusion::MaxOperation,
    FusionMin => fusion::MinOperation,
    FusionWhere => fusion::WhereOperation,
    FusionTranspose => fusion::TransposeOperation,
    FusionAmax => fusion::AmaxOperation,
    FusionBroadcast => fusion::BroadcastOperation,
    FusionMatmul => fusion::MatmulOperation,
    FusionLinear => fusion::LinearOperation,
    HostAlloc => host::AllocOperation,
    HostDealloc => host::DeallocOperation,
    HostSelect => host::SelectOperation,
    HostBroadcast => host::BroadcastOperation,
    HostRank => host::RankOperation,
    HostNumDevices => host::NumDevicesOperation,
    HostCopy => host::CopyOperation,
    HostCast => host::CastOperation,
    HostWhere => host::WhereOperation,
    HostTranspose => host::TransposeOperation,
    HostReshape => host::ReshapeOperation,
    HostFill => host::FillOperation,
    HostIota => host::IotaOperation,
    HostMatmul => host::MatmulOperation,
    HostLinear => host::LinearOperation,
    HostAttention => host::AttentionOperation,
    HostGetCurrentStream => host::GetCurrentStreamOperation,
    HostSetCurrentStream => host::SetCurrentStreamOperation,
    HostSyncStream => host::SyncStreamOperation,
    HostStreamFromPool => host::StreamFromPoolOperation,
    HostStreamFor => host::StreamForOperation,
    HostFused => host::FusedOperation,
    CommAllgather => comm::AllgatherOperation,
    CommAllreduce => comm::AllreduceOperation,
    CommReduceScatter => comm::ReduceScatterOperation,
    CommBroadcast => comm::BroadcastOperation,
    CommReduce => comm::ReduceOperation,
    CommGather => comm::GatherOperation,
    CommScatter => comm::ScatterOperation,
    CommAlltoall => comm::AlltoallOperation,
    CommSend => comm::SendOperation,
    CommRecv => comm::RecvOperation,
    CommBarrier => comm::BarrierOperation,
    CommWait => comm::WaitOperation,
    CommStartCoalescing => comm::StartCoalescingOperation,
    CommEndCoalescing => comm::EndCoalescingOperation,
    CommShareMemHandles => comm::ShareMemHandlesOperation,
    ArithConstant => arith::ConstantOperation,
    ArithCmpi => arith::CmpIOperation,
    ArithSelect => arith::SelectOperation,
    ArithRemui => arith::RemUIOperation,
    ArithMuli => arith::MulIOperation,
    MemrefSubview => memref::SubViewOperation,
    MemrefExpandShape => memref::ExpandShapeOperation,
    MemrefTranspose => memref::TransposeOperation,
    MemrefDealloc => memref::DeallocOperation,
    MemrefLoad => memref::LoadOperation,
    MemrefStore => memref::StoreOperation,
    ScfYield => scf::YieldOperation,
    ScfIf => scf::IfOperation,
    ScfFor => scf::ForOperation,
    BuiltinModule => builtin::ModuleOperation,
    FuncFunc => func::FuncOperation,
    FuncReturn => func::ReturnOperation,
    MemrefCast => memref::CastOperation,
    MemrefGlobal => memref::GlobalOperation,
    MemrefExtractAlignedPointer => memref::ExtractAlignedPointerAsIndexOperation,
    LlvmIntToPtr => llvm::IntToPtrOperation,
    UnrealizedConversionCast => builtin::UnrealizedConversionCastOperation,
}

impl Op {
    /// The variant of `op`, if it is one the passes name.
    pub fn of(op: &OperationRef) -> Option<Op> {
        let name = op.name();
        let name = name.as_string_ref().as_str().ok()?;
        Op::ALL
            .iter()
            .copied()
            .find(|variant| variant.name() == name)
    }

    /// Whether `op` is this op.
    pub fn is(self, op: &OperationRef) -> bool {
        Op::of(op) == Some(self)
    }

    /// The namespace of the op's dialect, e.g. `host`.
    pub fn dialect(self) -> &'static str {
        self.name()
            .split_once('.')
            .map_or("", |(dialect, _)| dialect)
    }

    /// The name of the op of this op's dialect spelled `mnemonic`, e.g.
    /// `host.neg` for `Op::HostCopy.sibling("neg")`: how a pass roots a
    /// pattern at each op of a family the runtime's ABI enumerates
    /// (`hir_abi::Unary::ALL`), whose mnemonics are the ABI's names.
    pub fn sibling(self, mnemonic: &str) -> String {
        format!("{}.{mnemonic}", self.dialect())
    }

    /// Whether `op` is of the dialect of this op.
    pub fn same_dialect(self, op: &OperationRef) -> bool {
        let name = op.name();
        let name = name.as_string_ref().as_str().unwrap_or_default();
        name.split_once('.')
            .is_some_and(|(dialect, _)| dialect == self.dialect())
    }

    /// Whether `op` is a collective that exchanges slices along an axis
    /// (gathers, scatters or both), rather than combining whole buffers.
    pub fn exchanges(op: &OperationRef) -> bool {
        matches!(
            Op::of(op),
            Some(
                Op::CommAllgather
                    | Op::CommReduceScatter
                    | Op::CommGather
                    | Op::CommScatter
                    | Op::CommAlltoall
            )
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_has_its_own_name() {
        let mut names: Vec<&str> = Op::ALL.iter().map(|op| op.name()).collect();
        assert!(names.contains(&"host.select"));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Op::ALL.len());
        assert_eq!(Op::FuncFunc.name(), FUNCTION);
        assert_eq!(Op::BuiltinModule.name(), MODULE);
        assert_eq!(Op::HostCopy.dialect(), "host");
        assert_eq!(Op::CommWait.sibling("allreduce"), Op::CommAllreduce.name());
    }
}
