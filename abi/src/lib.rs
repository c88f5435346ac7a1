//! The C ABI between a lowered host program and the runtime. [`Entry`] is the
//! single source of truth for its symbols: `convert-host-to-llvm` and
//! `convert-comm-to-llvm` (in `hir-passes`) declare and call them by
//! [`Entry::name`], and the runtime (`hir-runtime`) defines every one of
//! [`Entry::all`] for the JIT set-up to register. This crate has no
//! dependencies, so that the passes do not depend on the runtime's (CUDA).
//!
//! Conventions:
//! - Buffers travel as unranked memrefs (`memref<*xT>`) through
//!   `llvm.emit_c_interface`: the callee is `_mlir_ciface_<name>` and receives
//!   a pointer to `{ i64 rank; void *descriptor }`, the descriptor being the
//!   ranked `{ T *allocated, *aligned; i64 offset, sizes[rank], strides[rank] }`.
//!   Entries that take buffers are suffixed with their element types, since
//!   a declaration has one type.
//! - Streams and requests are `i64` handles (stream 0 is the caller's).
//! - Teams and axis lists are `memref<*xi64>` constants.
//! - Attributes are `i64`: reduce kinds and backends by their [`ReduceKind`]
//!   and [`Transport`] codes.
//! - The calling thread's rank is set by the launcher; no entry takes it.

use std::fmt;

pub mod fused;

/// An element type of a buffer. The integers are signless in MLIR and
/// signed (two's complement) here: their arithmetic wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    BF16,
    F16,
    I32,
    I64,
}

impl DType {
    /// Every element type; its index is the type's code in a fused program.
    pub const ALL: [DType; 5] = [DType::F32, DType::BF16, DType::F16, DType::I32, DType::I64];

    /// The floating-point types, which every entry takes.
    pub const FLOATS: [DType; 3] = [DType::F32, DType::BF16, DType::F16];

    /// The integer types, which the entries of [`DType::takes`] take.
    pub const INTS: [DType; 2] = [DType::I32, DType::I64];

    /// The MLIR spelling, also the symbol suffix.
    pub const fn mlir(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::BF16 => "bf16",
            DType::F16 => "f16",
            DType::I32 => "i32",
            DType::I64 => "i64",
        }
    }

    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::BF16 | DType::F16)
    }

    /// The type of an MLIR element type spelled `name`.
    pub fn from_mlir(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|dtype| dtype.mlir() == name)
    }

    pub const fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::BF16 | DType::F16 => 2,
            DType::I64 => 8,
        }
    }

    /// What [`Entry::Cast`] from `from` to `self` computes of a value `x` of
    /// `from`, in f64 (torch's `tensor.to`), for `--check`'s reference:
    /// - to a float type: `x`, which the caller rounds to `self` (to nearest
    ///   even, once from the exact value);
    /// - from a float to an integer type: `x` truncated toward zero, NaN
    ///   giving 0 and values beyond the type's range its smallest or largest
    ///   value (saturating, where torch is undefined; i64's largest,
    ///   2^63 - 1, is 2^63 in f64);
    /// - between the integer types: `x`, but i64 to i32 keeps the low 32
    ///   bits (`x` modulo 2^32 in i32's range; exact for |x| < 2^53).
    pub fn cast_from(self, from: DType, x: f64) -> f64 {
        let bits = match self {
            DType::I32 => 32,
            DType::I64 => 64,
            _ => return x,
        };
        let (min, max) = (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0);
        if from.is_float() {
            if x.is_nan() {
                0.0
            } else {
                x.trunc().clamp(min, max)
            }
        } else if self == DType::I32 {
            (x - min).rem_euclid(2f64.powi(32)) + min
        } else {
            x
        }
    }
}

/// How a reduction combines values; the code is the `i64` the entries take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum ReduceKind {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    Avg = 4,
}

impl ReduceKind {
    pub const ALL: [ReduceKind; 5] = [
        ReduceKind::Sum,
        ReduceKind::Prod,
        ReduceKind::Max,
        ReduceKind::Min,
        ReduceKind::Avg,
    ];

    /// The kind an entry's `i64` argument names.
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| *kind as i64 == code)
    }
}

/// How data moves between ranks (`comm`'s `on nccl`/`on cuda`, the
/// `p2p` option of `hir-lower`); the code is the `i64` the entries take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum Transport {
    Nccl = 0,
    Cuda = 1,
}

impl Transport {
    pub const ALL: [Transport; 2] = [Transport::Nccl, Transport::Cuda];

    /// The spelling of the `comm` dialect (`on cuda`) and of the options.
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Nccl => "nccl",
            Transport::Cuda => "cuda",
        }
    }

    /// The transport spelled `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|transport| transport.name() == name)
    }

    /// The transport an entry's `i64` argument names.
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|transport| *transport as i64 == code)
    }
}

/// Elementwise one-operand operations (copy and cast aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unary {
    Neg,
    Exp,
    Tanh,
    Abs,
    Relu,
    Gelu,
    Rsqrt,
}

impl Unary {
    pub const ALL: [Unary; 7] = [
        Unary::Neg,
        Unary::Exp,
        Unary::Tanh,
        Unary::Abs,
        Unary::Relu,
        Unary::Gelu,
        Unary::Rsqrt,
    ];

    /// The op's mnemonic in the `fusion` and `host` dialects.
    pub const fn name(self) -> &'static str {
        match self {
            Unary::Neg => "neg",
            Unary::Exp => "exp",
            Unary::Tanh => "tanh",
            Unary::Abs => "abs",
            Unary::Relu => "relu",
            Unary::Gelu => "gelu",
            Unary::Rsqrt => "rsqrt",
        }
    }

    /// Whether the op is defined on `dtype`: the transcendental ones are
    /// float only; neg, abs and relu are exact on integers (neg and abs
    /// wrap: the most negative value is its own negation).
    pub const fn takes(self, dtype: DType) -> bool {
        dtype.is_float() || matches!(self, Unary::Neg | Unary::Abs | Unary::Relu)
    }

    /// What the op computes of one element, in f64: the meaning the
    /// backends' kernels implement and `--check`'s reference evaluates.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            Unary::Neg => -x,
            Unary::Exp => x.exp(),
            Unary::Tanh => x.tanh(),
            Unary::Abs => x.abs(),
            // NaN stays NaN, as in `torch.relu`.
            Unary::Relu => {
                if x < 0.0 {
                    0.0
                } else {
                    x
                }
            }
            // `torch.nn.functional.gelu(x, approximate='tanh')`.
            Unary::Gelu => {
                let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
                0.5 * x * (1.0 + inner.tanh())
            }
            Unary::Rsqrt => 1.0 / x.sqrt(),
        }
    }
}

/// An activation a GEMM applies in its epilogue (`host.linear activation
/// gelu`, cuBLASLt's `GELU` epilogues): to each f32 element of the product
/// (plus bias), before the one rounding to the output's element type. The
/// code is the case of `host`'s `Activation` enum attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum Activation {
    Gelu = 0,
}

impl Activation {
    pub const ALL: [Activation; 1] = [Activation::Gelu];

    /// The spelling of `host`'s `activation` attribute, also the entries'.
    pub const fn name(self) -> &'static str {
        self.unary().name()
    }

    /// The elementwise op it applies, whose [`Unary::eval`] it computes.
    pub const fn unary(self) -> Unary {
        match self {
            Activation::Gelu => Unary::Gelu,
        }
    }

    /// The activation of the attribute's code.
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|activation| *activation as i64 == code)
    }
}

/// Elementwise binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

impl Binary {
    pub const ALL: [Binary; 6] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Max,
        Binary::Min,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Binary::Add => "add",
            Binary::Sub => "sub",
            Binary::Mul => "mul",
            Binary::Div => "div",
            Binary::Max => "max",
            Binary::Min => "min",
        }
    }

    /// Whether the op is defined on `dtype`: every one but division takes
    /// integers (add, sub and mul wrap).
    pub const fn takes(self, dtype: DType) -> bool {
        dtype.is_float() || !matches!(self, Binary::Div)
    }
}

/// Reductions over axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduction {
    Sum,
    Amax,
}

impl Reduction {
    pub const ALL: [Reduction; 2] = [Reduction::Sum, Reduction::Amax];

    pub const fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Amax => "amax",
        }
    }
}

/// Collectives; every one returns a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    Allgather,
    Allreduce,
    ReduceScatter,
    Broadcast,
    Reduce,
    Gather,
    Scatter,
    Alltoall,
}

impl Collective {
    pub const ALL: [Collective; 8] = [
        Collective::Allgather,
        Collective::Allreduce,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Gather,
        Collective::Scatter,
        Collective::Alltoall,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Collective::Allgather => "allgather",
            Collective::Allreduce => "allreduce",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::Gather => "gather",
            Collective::Scatter => "scatter",
            Collective::Alltoall => "alltoall",
        }
    }
}

/// One entry point of the runtime. The C signature of each is on its variant
/// (`buf` is a pointer to an unranked memref descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// `i64 ()`: the current stream.
    GetCurrentStream,
    /// `void (i64 stream)`.
    SetCurrentStream,
    /// `i64 (i64 index)`: stream `index mod pool size` of the pool.
    StreamFromPool,
    /// `void (i64 stream)`: the current stream waits for `stream`'s work so far.
    SyncStream,
    /// `i64 ()`: the calling rank.
    Rank,
    /// `i64 ()`: the number of ranks.
    NumDevices,
    /// `ptr (i64 site, i64 bytes)`: a buffer, the same one for the same site
    /// and size on every call.
    Alloc,
    /// `void (ptr)`: returns a buffer to the cache.
    Dealloc,
    /// `void (buf in, buf out)`.
    Copy(DType),
    /// `void (buf in, buf out)`.
    Unary(Unary, DType),
    /// `void (buf in, buf out)`: from the first type to the second, as
    /// [`DType::cast_from`] says.
    Cast(DType, DType),
    /// `void (buf lhs, buf rhs, buf out)`.
    Binary(Binary, DType),
    /// `void (buf mask, buf lhs, buf rhs, buf out)`: `lhs` where `mask` is
    /// nonzero, `rhs` elsewhere.
    Where(DType),
    /// `void (buf in, buf out, buf axes)`.
    Reduction(Reduction, DType),
    /// `void (buf in, buf out, buf axes)`: `axes` are the new axes of `out`.
    Broadcast(DType),
    /// `void (buf in, buf out, buf permutation)`: `out` axis `i` is `in` axis
    /// `permutation[i]`.
    Transpose(DType),
    /// `void (buf in, buf out)`: `in`'s elements in row-major order, in
    /// `out`'s shape.
    Reshape(DType),
    /// `void (buf out, f64 value)`: every element of `out` is `value`.
    Fill(DType),
    /// `void (buf out, i64 axis, i64 offset)`: each element of `out` is
    /// `offset` plus its index along `axis`.
    Iota(DType),
    /// `void (buf lhs, buf rhs, buf out)`.
    Matmul(DType),
    /// `void (buf lhs, buf rhs, buf out)`: `out += lhs x rhs`.
    MatmulAccumulate(DType),
    /// `void (buf in, buf weight, buf out)`.
    Linear(DType),
    /// `void (buf in, buf weight, buf bias, buf out)`.
    LinearBias(DType),
    /// `void (buf lhs, buf rhs, buf out)`: `Matmul` with the activation
    /// applied to each f32 element before its rounding.
    MatmulActivation(Activation, DType),
    /// `void (buf in, buf weight, buf out)`: `Linear` with the activation.
    LinearActivation(Activation, DType),
    /// `void (buf in, buf weight, buf bias, buf out)`: `LinearBias` with the
    /// activation, applied after the bias.
    LinearBiasActivation(Activation, DType),
    /// `void (buf in, buf weight, buf out)`: `out += in x weight^T`.
    LinearAccumulate(DType),
    /// `void (buf q, buf k, buf v, buf out, f64 scale, i64 causal)`:
    /// scaled dot-product attention, `q [B.., Sq, D]`, `k [B.., Sk, D]`,
    /// `v [B.., Sk, Dv]`, `out [B.., Sq, Dv]`; `causal` nonzero hides key
    /// `j` from query `i` where `j > i` (top-left aligned, as torch's).
    Attention(DType),
    /// `void (buf q, buf k, buf v, buf mask, buf out, f64 scale, i64 causal)`:
    /// as `Attention`, `mask [Sq, Sk]` added to every batch's scaled scores.
    AttentionMask(DType),
    /// `void (buf program, buf 0, .., buf n-1)`: the `host.fused` op of `n`
    /// buffers (inputs then outputs), `program` its [`fused::Program`]'s
    /// `i64` words. The buffers' element types are the program's: they are
    /// declared `memref<*xf32>`, the unranked descriptor being the same for
    /// every element type.
    Fused(usize),
    /// `i64 (buf in, buf out, i64 kind, i64 root, i64 axis, buf team, i64 backend)`:
    /// a request. `kind`, `root` and `axis` are 0 where the collective has none.
    Collective(Collective, DType),
    /// `i64 (buf buffer, i64 peer, buf team, i64 backend)`: a request.
    Send(DType),
    /// `i64 (buf buffer, i64 peer, buf team, i64 backend)`: a request.
    Recv(DType),
    /// `void ()`: opens a group; until `EndCoalescing`, `Send` and `Recv`
    /// return the group's request.
    StartCoalescing,
    /// `i64 ()`: the group's request.
    EndCoalescing,
    /// `void (i64 request)`: the current stream waits for the request.
    Wait,
    /// `void (buf buffer, buf team)`: exchanges the buffer's IPC handle.
    ShareMemHandle(DType),
    /// `void (buf team, i64 backend)`: the host waits for the whole team.
    Barrier,
}

impl Entry {
    /// Every entry, for the JIT to register.
    pub fn all() -> Vec<Entry> {
        use Entry::*;
        let mut all = vec![
            GetCurrentStream,
            SetCurrentStream,
            StreamFromPool,
            SyncStream,
            Rank,
            NumDevices,
            Alloc,
            Dealloc,
            StartCoalescing,
            EndCoalescing,
            Wait,
            Barrier,
        ];
        all.extend((1..=fused::MAX_BUFFERS).map(Fused));
        // Every typed entry of every type, less those `exists` rules out.
        for dtype in DType::ALL {
            let typed: [fn(DType) -> Entry; 17] = [
                Copy,
                Where,
                Broadcast,
                Transpose,
                Reshape,
                Fill,
                Iota,
                Matmul,
                MatmulAccumulate,
                Linear,
                LinearBias,
                LinearAccumulate,
                Attention,
                AttentionMask,
                Send,
                Recv,
                ShareMemHandle,
            ];
            let candidates = typed
                .map(|entry| entry(dtype))
                .into_iter()
                .chain(DType::ALL.map(|to| Cast(dtype, to)))
                .chain(self::Unary::ALL.map(|op| Unary(op, dtype)))
                .chain(Activation::ALL.into_iter().flat_map(|activation| {
                    [
                        MatmulActivation(activation, dtype),
                        LinearActivation(activation, dtype),
                        LinearBiasActivation(activation, dtype),
                    ]
                }))
                .chain(self::Binary::ALL.map(|op| Binary(op, dtype)))
                .chain(self::Reduction::ALL.map(|op| Reduction(op, dtype)))
                .chain(self::Collective::ALL.map(|op| Collective(op, dtype)));
            all.extend(candidates.filter(|entry| entry.exists()));
        }
        all
    }

    /// Whether the runtime defines the entry ([`Entry::all`] lists it): the
    /// integer types have no matmul, linear or attention, and only the unary and
    /// binary ops that [`Unary::takes`] and [`Binary::takes`] them; casts
    /// go from every type to every other.
    pub const fn exists(self) -> bool {
        use Entry::*;
        match self {
            Unary(op, dtype) => op.takes(dtype),
            Binary(op, dtype) => op.takes(dtype),
            Matmul(dtype)
            | MatmulAccumulate(dtype)
            | Linear(dtype)
            | LinearBias(dtype)
            | MatmulActivation(_, dtype)
            | LinearActivation(_, dtype)
            | LinearBiasActivation(_, dtype)
            | LinearAccumulate(dtype)
            | Attention(dtype)
            | AttentionMask(dtype) => dtype.is_float(),
            Fused(n) => n >= 1 && n <= fused::MAX_BUFFERS,
            _ => true,
        }
    }

    /// Whether the entry takes buffers, so that it is called through
    /// `_mlir_ciface_<name>`.
    pub const fn takes_buffers(self) -> bool {
        !matches!(
            self,
            Entry::GetCurrentStream
                | Entry::SetCurrentStream
                | Entry::StreamFromPool
                | Entry::SyncStream
                | Entry::Rank
                | Entry::NumDevices
                | Entry::Alloc
                | Entry::Dealloc
                | Entry::StartCoalescing
                | Entry::EndCoalescing
                | Entry::Wait
        )
    }

    /// The symbol the host program declares, e.g. `hir_rt_matmul_bf16`.
    pub fn name(self) -> String {
        self.to_string()
    }

    /// The symbol the runtime defines: `name`, behind `_mlir_ciface_` for
    /// entries that take buffers.
    pub fn c_name(self) -> String {
        if self.takes_buffers() {
            format!("_mlir_ciface_{self}")
        } else {
            self.to_string()
        }
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Entry::*;
        f.write_str("hir_rt_")?;
        match *self {
            GetCurrentStream => f.write_str("get_current_stream"),
            SetCurrentStream => f.write_str("set_current_stream"),
            StreamFromPool => f.write_str("stream_from_pool"),
            SyncStream => f.write_str("sync_stream"),
            Rank => f.write_str("rank"),
            NumDevices => f.write_str("num_devices"),
            Alloc => f.write_str("alloc"),
            Dealloc => f.write_str("dealloc"),
            Copy(t) => write!(f, "copy_{}", t.mlir()),
            Unary(op, t) => write!(f, "{}_{}", op.name(), t.mlir()),
            Cast(from, to) => write!(f, "cast_{}_{}", from.mlir(), to.mlir()),
            Binary(op, t) => write!(f, "{}_{}", op.name(), t.mlir()),
            Where(t) => write!(f, "where_{}", t.mlir()),
            Reduction(op, t) => write!(f, "{}_{}", op.name(), t.mlir()),
            Broadcast(t) => write!(f, "broadcast_to_{}", t.mlir()),
            Transpose(t) => write!(f, "transpose_{}", t.mlir()),
            Reshape(t) => write!(f, "reshape_{}", t.mlir()),
            Fill(t) => write!(f, "fill_{}", t.mlir()),
            Iota(t) => write!(f, "iota_{}", t.mlir()),
            Matmul(t) => write!(f, "matmul_{}", t.mlir()),
            MatmulAccumulate(t) => write!(f, "matmul_acc_{}", t.mlir()),
            Linear(t) => write!(f, "linear_{}", t.mlir()),
            LinearBias(t) => write!(f, "linear_bias_{}", t.mlir()),
            MatmulActivation(a, t) => write!(f, "matmul_{}_{}", a.name(), t.mlir()),
            LinearActivation(a, t) => write!(f, "linear_{}_{}", a.name(), t.mlir()),
            LinearBiasActivation(a, t) => write!(f, "linear_bias_{}_{}", a.name(), t.mlir()),
            LinearAccumulate(t) => write!(f, "linear_acc_{}", t.mlir()),
            Attention(t) => write!(f, "attention_{}", t.mlir()),
            AttentionMask(t) => write!(f, "attention_mask_{}", t.mlir()),
            Fused(n) => write!(f, "fused_{n}"),
            Collective(op, t) => write!(f, "{}_{}", op.name(), t.mlir()),
            Send(t) => write!(f, "send_{}", t.mlir()),
            Recv(t) => write!(f, "recv_{}", t.mlir()),
            StartCoalescing => f.write_str("start_coalescing"),
            EndCoalescing => f.write_str("end_coalescing"),
            Wait => f.write_str("wait"),
            ShareMemHandle(t) => write!(f, "share_mem_handle_{}", t.mlir()),
            Barrier => f.write_str("barrier"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_entry_has_its_own_symbol() {
        let all = Entry::all();
        let names: HashSet<String> = all.iter().map(|entry| entry.c_name()).collect();
        assert_eq!(names.len(), all.len());
        assert!(names.contains("_mlir_ciface_hir_rt_matmul_bf16"));
        assert!(names.contains("hir_rt_get_current_stream"));
        assert!(names.contains("_mlir_ciface_hir_rt_reduce_scatter_f16"));
        assert!(names.contains("_mlir_ciface_hir_rt_fused_8"));
        assert!(names.contains("_mlir_ciface_hir_rt_allreduce_i64"));
        assert!(names.contains("_mlir_ciface_hir_rt_iota_i32"));
        assert!(names.contains("_mlir_ciface_hir_rt_linear_bias_gelu_bf16"));
        assert!(names.contains("_mlir_ciface_hir_rt_matmul_gelu_f32"));
        assert_eq!(Activation::from_code(0), Some(Activation::Gelu));
        assert_eq!(Activation::from_code(1), None);
    }

    #[test]
    fn integers_take_the_exact_ops_only() {
        for dtype in DType::INTS {
            assert!(Entry::Binary(Binary::Add, dtype).exists());
            assert!(Entry::Unary(Unary::Abs, dtype).exists());
            assert!(Entry::Reduction(Reduction::Sum, dtype).exists());
            assert!(!Entry::Binary(Binary::Div, dtype).exists());
            assert!(!Entry::Unary(Unary::Exp, dtype).exists());
            assert!(!Entry::Matmul(dtype).exists());
            assert!(!Entry::Linear(dtype).exists());
            assert!(Entry::Cast(dtype, DType::F32).exists());
            assert!(Entry::Cast(DType::F32, dtype).exists());
        }
        assert!(Entry::Binary(Binary::Div, DType::BF16).exists());
        // `exists` says what `all` lists, for every entry of every type.
        let all = Entry::all();
        for dtype in DType::ALL {
            let mut entries = vec![
                Entry::Copy(dtype),
                Entry::Where(dtype),
                Entry::Broadcast(dtype),
                Entry::Transpose(dtype),
                Entry::Reshape(dtype),
                Entry::Fill(dtype),
                Entry::Iota(dtype),
                Entry::Matmul(dtype),
                Entry::MatmulAccumulate(dtype),
                Entry::Linear(dtype),
                Entry::LinearBias(dtype),
                Entry::MatmulActivation(Activation::Gelu, dtype),
                Entry::LinearActivation(Activation::Gelu, dtype),
                Entry::LinearBiasActivation(Activation::Gelu, dtype),
                Entry::LinearAccumulate(dtype),
                Entry::Send(dtype),
                Entry::Recv(dtype),
                Entry::ShareMemHandle(dtype),
            ];
            entries.extend(DType::ALL.map(|to| Entry::Cast(dtype, to)));
            entries.extend(Unary::ALL.map(|op| Entry::Unary(op, dtype)));
            entries.extend(Binary::ALL.map(|op| Entry::Binary(op, dtype)));
            entries.extend(Reduction::ALL.map(|op| Entry::Reduction(op, dtype)));
            entries.extend(Collective::ALL.map(|op| Entry::Collective(op, dtype)));
            for entry in entries {
                assert_eq!(entry.exists(), all.contains(&entry), "{entry:?}");
            }
        }
    }

    #[test]
    fn casts_to_integers_truncate_saturate_and_wrap() {
        use DType::*;
        let cast = |from: DType, to: DType, x: f64| to.cast_from(from, x);
        assert_eq!(cast(F32, I32, 2.7), 2.0);
        assert_eq!(cast(BF16, I64, -2.7), -2.0);
        assert_eq!(cast(F16, I32, -0.5), 0.0);
        assert_eq!(cast(F32, I32, f64::NAN), 0.0);
        assert_eq!(cast(F32, I32, f64::INFINITY), 2147483647.0);
        assert_eq!(cast(F32, I32, -3e9), -2147483648.0);
        assert_eq!(cast(F32, I64, f64::NEG_INFINITY), -(2f64.powi(63)));
        assert_eq!(cast(F32, I64, 1e30), 2f64.powi(63));
        assert_eq!(cast(I64, I32, 2f64.powi(31)), -2147483648.0);
        assert_eq!(cast(I64, I32, -(2f64.powi(31)) - 1.0), 2147483647.0);
        assert_eq!(cast(I64, I32, 2f64.powi(32) + 5.0), 5.0);
        assert_eq!(cast(I64, I32, -7.0), -7.0);
        assert!(cast(I64, I32, -(2f64.powi(32))).is_sign_positive());
        assert_eq!(cast(I32, I64, -7.0), -7.0);
        // To a float type the value is kept, for the caller to round.
        assert_eq!(cast(I64, BF16, 257.0), 257.0);
        assert!(cast(F32, F16, f64::NAN).is_nan());
    }
}
