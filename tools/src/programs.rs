//! The benchmark programs of `hir-bench`, generated as fusion-dialect text
//! from parameters: D devices, S chunks, the GEMM's M, K, N and the element
//! type. Three families, after nvFuser's overlap benchmarks:
//!
//! - **ag** (AG+GEMM): `C [M, N] = A [M, K] @ B [K, N]` with A row-sharded
//!   over the D devices, B and C on every device.
//! - **rs** (GEMM+RS, row-parallel, the TP-rowwise program): K is sharded:
//!   device d holds `A_d [M, K/D]` and its own K-slice `B_d [K/D, N]` of
//!   `B [K, N]`; `C = sum_d A_d @ B_d` is reduce-scattered: device d keeps
//!   rows `d*M/D .. (d+1)*M/D`.
//! - **ar** (GEMM+AR, row-parallel): as rs, with C all-reduced onto every
//!   device; its P2P variants lower the allreduce to rings
//!   (`hir-lower{allreduce=ring}`).
//!
//! For rs and ar, B is `[DIDx(D), 1.., K/D, N]`: device d's slice, with a
//! unit axis for each of A's batch axes after the didx one, which
//! `fusion.matmul` broadcasts along them (torch.matmul's batch broadcasting):
//! every chunk reads the one slice in place, nothing is copied. (Before
//! `fusion.matmul` broadcast batch axes, these programs gave every device
//! the same replicated `[K/D, N]`: the same flops and bytes, but not the
//! program users write.)
//!
//! Every input and output of every program is a row-major reshape of one
//! *logical* tensor ([`Logical`]): a launcher makes the logical inputs once
//! and gives every variant of a family the same values, whatever axes its
//! program splits them into.

use anyhow::{Result, bail};
use hir::passes::P2p;
use hir_abi::DType;
use std::fmt::Write as _;

/// A benchmark family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Ag,
    Rs,
    Ar,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Ag, Family::Rs, Family::Ar];

    pub fn name(self) -> &'static str {
        match self {
            Family::Ag => "ag",
            Family::Rs => "rs",
            Family::Ar => "ar",
        }
    }

    /// The flops each device executes for one GEMM of the family: the whole
    /// `2·M·N·K` for ag (every device computes all of C), `2·M·N·K/D` for
    /// rs and ar (every device multiplies its K/D slice).
    pub fn flops_per_device(self, params: &Params) -> f64 {
        let full = 2.0 * params.m as f64 * params.n as f64 * params.k as f64;
        match self {
            Family::Ag => full,
            Family::Rs | Family::Ar => full / params.devices as f64,
        }
    }
}

/// What a benchmark measures, in each family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The GEMM alone, no communication: the ceiling.
    Gemm,
    /// The collective alone, no GEMM.
    Comm,
    /// The collective whole, then the GEMM (ag), or the GEMM then the
    /// collective whole (rs, ar): no overlap.
    NoOverlap,
    /// The collective pipeline: S chunks, each chunk's collective on its
    /// pool stream overlapping the other chunks' GEMMs.
    Pipeline,
    /// The P2P ring over NCCL (`hir-lower{p2p=nccl}`).
    P2pNccl,
    /// The P2P ring over CUDA IPC (`hir-lower{p2p=cuda}`).
    P2pCuda,
}

impl Variant {
    pub const ALL: [Variant; 6] = [
        Variant::Gemm,
        Variant::Comm,
        Variant::NoOverlap,
        Variant::Pipeline,
        Variant::P2pNccl,
        Variant::P2pCuda,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Gemm => "gemm",
            Variant::Comm => "comm",
            Variant::NoOverlap => "nooverlap",
            Variant::Pipeline => "pipeline",
            Variant::P2pNccl => "p2p-nccl",
            Variant::P2pCuda => "p2p-cuda",
        }
    }

    /// The program and `hir-lower`'s `p2p` option the variant runs in
    /// `family` (with `p2p=nccl|cuda`, `allreduce=ring` too: see
    /// [`Form::ArRing`]).
    pub fn program(self, family: Family) -> (Form, P2p) {
        use Form::*;
        match (family, self) {
            (Family::Ag, Variant::Gemm) => (AgGemm, P2p::None),
            (Family::Ag, Variant::Comm) => (AgAllgather, P2p::None),
            (Family::Ag, Variant::NoOverlap) => (AgRing, P2p::None),
            (Family::Ag, Variant::Pipeline) => (AgPipeline, P2p::None),
            (Family::Ag, Variant::P2pNccl) => (AgRing, P2p::Nccl),
            (Family::Ag, Variant::P2pCuda) => (AgRing, P2p::Cuda),
            (Family::Rs, Variant::Gemm) => (RsGemm, P2p::None),
            (Family::Rs, Variant::Comm) => (RsReduceScatter, P2p::None),
            (Family::Rs, Variant::NoOverlap) => (RsRing, P2p::None),
            (Family::Rs, Variant::Pipeline) => (RsPipeline, P2p::None),
            (Family::Rs, Variant::P2pNccl) => (RsRing, P2p::Nccl),
            (Family::Rs, Variant::P2pCuda) => (RsRing, P2p::Cuda),
            (Family::Ar, Variant::Gemm) => (ArGemm, P2p::None),
            (Family::Ar, Variant::Comm) => (ArAllreduce, P2p::None),
            (Family::Ar, Variant::NoOverlap) => (ArNoOverlap, P2p::None),
            (Family::Ar, Variant::Pipeline) => (ArPipeline, P2p::None),
            (Family::Ar, Variant::P2pNccl) => (ArRing, P2p::Nccl),
            (Family::Ar, Variant::P2pCuda) => (ArRing, P2p::Cuda),
        }
    }
}

/// A program `hir-bench emit` prints, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `A [M, K] @ B [K, N] -> C [M, N]`, all replicated: every device runs
    /// the whole GEMM, no communication.
    AgGemm,
    /// `A [DIDx(D), M/D, K] -> [D, M/D, K]`: one allgather.
    AgAllgather,
    /// `A [S, DIDx(D), M/(S·D), K] @ B -> C [Stream(S), D, M/(S·D), N]`:
    /// chunk s allgathers A[s] and multiplies it (examples/ag_matmul.mlir).
    AgPipeline,
    /// `A [DIDx(D), M/D, K] @ B -> C [Stream(D), M/D, N]`
    /// (examples/ag_matmul_p2p.mlir): with p2p=none the allgather runs whole
    /// before the loop of D GEMM chunks; with p2p=nccl|cuda it is a ring.
    AgRing,
    /// `A [DIDx(D), M, K/D] @ B [DIDx(D), K/D, N] -> P [DIDx(D), M, N]`: each
    /// device's partial product, of its own slices, no communication.
    RsGemm,
    /// `P [DIDx(D), D, M/D, N] -> sum over axis 0 -> C [DIDx(D), M/D, N]`:
    /// one reduce-scatter.
    RsReduceScatter,
    /// `A [DIDx(D), S, D, M/(S·D), K/D] @ B [DIDx(D), 1, 1, K/D, N] -> sum
    /// -> C [Stream(S), DIDx(D), M/(S·D), N]`: chunk s multiplies, then
    /// reduce-scatters its rows.
    RsPipeline,
    /// `A [DIDx(D), D, M/D, K/D] @ B [DIDx(D), 1, K/D, N] -> partial
    /// [DIDx(D), Stream(D), M/D, N] -> sum -> C [DIDx(D), M/D, N]`: D GEMM
    /// chunks, then the reduce-scatter whole after the loop; the candidate of
    /// the P2P ring (the chain of accumulating GEMMs).
    RsRing,
    /// As `RsGemm`.
    ArGemm,
    /// `P [DIDx(D), M, N] -> sum over axis 0 -> C [M, N]`: one allreduce.
    ArAllreduce,
    /// `A [DIDx(D), S, M/S, K/D] @ B [DIDx(D), 1, K/D, N] -> sum -> C
    /// [Stream(S), M/S, N]`: chunk s multiplies, then all-reduces its rows.
    ArPipeline,
    /// As `ArPipeline`, with C not stream-parallel: S GEMM chunks, then one
    /// allreduce of all of C.
    ArNoOverlap,
    /// `A [DIDx(D), D, M/D, K/D] @ B [DIDx(D), 1, K/D, N] -> partial
    /// [DIDx(D), Stream(D), M/D, N] -> sum -> C [D, M/D, N]`: `ArNoOverlap`
    /// with S = D, the candidate of the P2P rings (`hir-lower{p2p=nccl|cuda
    /// allreduce=ring}`: the reduce-scatter chain in the loop, then an
    /// allgather ring of C's blocks).
    ArRing,
}

impl Form {
    pub const ALL: [Form; 13] = [
        Form::AgGemm,
        Form::AgAllgather,
        Form::AgPipeline,
        Form::AgRing,
        Form::RsGemm,
        Form::RsReduceScatter,
        Form::RsPipeline,
        Form::RsRing,
        Form::ArGemm,
        Form::ArAllreduce,
        Form::ArPipeline,
        Form::ArNoOverlap,
        Form::ArRing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Form::AgGemm => "ag-gemm",
            Form::AgAllgather => "ag-allgather",
            Form::AgPipeline => "ag-pipeline",
            Form::AgRing => "ag-ring",
            Form::RsGemm => "rs-gemm",
            Form::RsReduceScatter => "rs-reduce-scatter",
            Form::RsPipeline => "rs-pipeline",
            Form::RsRing => "rs-ring",
            Form::ArGemm => "ar-gemm",
            Form::ArAllreduce => "ar-allreduce",
            Form::ArPipeline => "ar-pipeline",
            Form::ArNoOverlap => "ar-nooverlap",
            Form::ArRing => "ar-ring",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Form::AgGemm | Form::AgAllgather | Form::AgPipeline | Form::AgRing => Family::Ag,
            Form::RsGemm | Form::RsReduceScatter | Form::RsPipeline | Form::RsRing => Family::Rs,
            Form::ArGemm
            | Form::ArAllreduce
            | Form::ArPipeline
            | Form::ArNoOverlap
            | Form::ArRing => Family::Ar,
        }
    }

    /// Whether the program has a stream axis of extent S (the chunks).
    pub fn uses_chunks(self) -> bool {
        matches!(
            self,
            Form::AgPipeline | Form::RsPipeline | Form::ArPipeline | Form::ArNoOverlap
        )
    }
}

/// The parameters of a program.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// D: the mesh is devices `0..D`.
    pub devices: usize,
    /// S: the extent of the stream axis of the pipelined programs.
    pub chunks: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub dtype: DType,
}

/// The logical tensor a program's argument or result is a row-major reshape
/// of (`L` is the row-parallel A: `L[d, m, k] = A[m, d·K/D + k]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logical {
    /// ag's A `[M, K]`.
    A,
    /// B `[K, N]`: ag's, and rs's and ar's, whose device d holds rows
    /// `d·K/D .. (d+1)·K/D` (as `[D, K/D, N]`).
    B,
    /// rs's and ar's A, as `L [D, M, K/D]`.
    L,
    /// Partial products to reduce, `[D, M, N]` (the input of rs's and ar's
    /// collective alone).
    P,
    /// ag's C `[M, N] = A @ B`.
    AgC,
    /// rs's and ar's C `[M, N] = sum_d L[d] @ B_d` (B_d: B's rows of device d).
    RowC,
    /// The partial products `[D, M, N]`, `L[d] @ B_d`.
    Partial,
    /// The gathered A `[M, K]`.
    Gathered,
    /// `[M, N] = sum_d P[d]`.
    ReducedP,
}

impl Logical {
    /// The logical shape.
    pub fn shape(self, params: &Params) -> Vec<usize> {
        let Params {
            devices: d,
            m,
            k,
            n,
            ..
        } = *params;
        match self {
            Logical::A | Logical::Gathered => vec![m, k],
            Logical::B => vec![k, n],
            Logical::L => vec![d, m, k / d],
            Logical::P | Logical::Partial => vec![d, m, n],
            Logical::AgC | Logical::RowC | Logical::ReducedP => vec![m, n],
        }
    }
}

/// A generated program.
#[derive(Clone, Debug)]
pub struct Program {
    pub form: Form,
    /// The entry function's name, without `@`.
    pub entry: String,
    pub text: String,
    /// What each argument is a reshape of.
    pub inputs: Vec<Logical>,
    /// What the result is a reshape of.
    pub output: Logical,
}

/// Checks that `form` can be built from `params`, with a message that says
/// which extent does not divide which.
pub fn check(form: Form, params: &Params) -> Result<()> {
    let Params {
        devices: d,
        chunks: s,
        m,
        k,
        n,
        ..
    } = *params;
    if d == 0 || m == 0 || k == 0 || n == 0 || (form.uses_chunks() && s == 0) {
        bail!(
            "{}: D, M, K, N{} must be at least 1 (D={d} M={m} K={k} N={n}{})",
            form.name(),
            if form.uses_chunks() { " and S" } else { "" },
            if form.uses_chunks() {
                format!(" S={s}")
            } else {
                String::new()
            }
        );
    }
    // Every extent is an IR count and every tensor's bytes (the partial
    // products [D, M, N] the largest of rs's and ar's) fit in memory's
    // address range: the products below are then exact, never wrapped.
    let bytes = |extents: &[(usize, &str)]| -> Option<usize> {
        extents
            .iter()
            .try_fold(params.dtype.size(), |bytes, &(extent, _)| {
                bytes.checked_mul(extent)
            })
            .filter(|&bytes| bytes <= isize::MAX as usize)
    };
    for tensor in [
        [(m, "M"), (k, "K"), (1, "")],
        [(k, "K"), (n, "N"), (1, "")],
        [(d, "D"), (m, "M"), (n, "N")],
        [(d, "D"), (m, "M"), (k, "K")],
        [(s, "S"), (d, "D"), (1, "")],
    ] {
        if bytes(&tensor).is_none() {
            let names: Vec<&str> = tensor
                .iter()
                .filter(|(_, name)| !name.is_empty())
                .map(|&(_, name)| name)
                .collect();
            bail!(
                "{}: a [{}] tensor of {} is larger than memory can address (D={d} M={m} K={k} \
                 N={n} S={s})",
                form.name(),
                names.join(", "),
                params.dtype.mlir()
            );
        }
    }
    let divides = |extent: usize, what: &str, by: usize, why: &str| -> Result<()> {
        if !extent.is_multiple_of(by) {
            bail!(
                "{}: {what}={extent} is not divisible by {why}={by}",
                form.name()
            );
        }
        Ok(())
    };
    match form {
        Form::AgGemm => Ok(()),
        Form::AgAllgather | Form::AgRing => divides(m, "M", d, "D (A is row-sharded)"),
        Form::AgPipeline => divides(m, "M", s * d, "S*D (S chunks of D row shards)"),
        Form::RsGemm | Form::ArGemm => divides(k, "K", d, "D (K is sharded)"),
        Form::RsReduceScatter => divides(m, "M", d, "D (C is row-scattered)"),
        Form::ArAllreduce => Ok(()),
        Form::RsRing => {
            divides(k, "K", d, "D (K is sharded)")?;
            divides(m, "M", d, "D (C is row-scattered)")
        }
        Form::ArRing => {
            divides(k, "K", d, "D (K is sharded)")?;
            divides(m, "M", d, "D (D chunks of rows, one block of C per device)")
        }
        Form::RsPipeline => {
            divides(k, "K", d, "D (K is sharded)")?;
            divides(m, "M", s * d, "S*D (S chunks, each scattered over D)")
        }
        Form::ArPipeline | Form::ArNoOverlap => {
            divides(k, "K", d, "D (K is sharded)")?;
            divides(m, "M", s, "S (S chunks of rows)")
        }
    }
}

/// One tensor type: `tensor<shape x dtype, #fusion.dist<@tp, [types]>>`.
fn ty(shape: &[usize], dist: &[&str], dtype: DType) -> String {
    debug_assert_eq!(shape.len(), dist.len());
    let mut text = String::from("tensor<");
    for extent in shape {
        let _ = write!(text, "{extent}x");
    }
    let _ = write!(
        text,
        "{}, #fusion.dist<@tp, [{}]>>",
        dtype.mlir(),
        dist.join(", ")
    );
    text
}

/// A program's pieces: its arguments as (name, type), its ops, its result
/// type, and the logical tensors of its arguments and result.
type Parts = (
    Vec<(&'static str, String)>,
    Vec<String>,
    String,
    Vec<Logical>,
    Logical,
);

/// Generates `form` for `params`.
pub fn generate(form: Form, params: &Params) -> Result<Program> {
    check(form, params)?;
    let Params {
        devices: d,
        chunks: s,
        m,
        k,
        n,
        dtype,
    } = *params;
    let t = |shape: &[usize], dist: &[&str]| ty(shape, dist, dtype);
    let kd = k / d;
    let entry = form.name().replace('-', "_");
    let (args, ops, output_type, inputs, output): Parts = match form {
        Form::AgGemm => {
            let a = t(&[m, k], &["serial", "serial"]);
            let b = t(&[k, n], &["serial", "serial"]);
            let c = t(&[m, n], &["serial", "serial"]);
            (
                vec![("a", a.clone()), ("b", b.clone())],
                vec![format!(
                    "%c = fusion.matmul %a, %b : {a},\n      {b}\n      -> {c}"
                )],
                c,
                vec![Logical::A, Logical::B],
                Logical::AgC,
            )
        }
        Form::AgAllgather => {
            let a = t(&[d, m / d, k], &["didx", "serial", "serial"]);
            let g = t(&[d, m / d, k], &["serial", "serial", "serial"]);
            (
                vec![("a", a.clone())],
                vec![format!("%c = fusion.set %a : {a}\n      -> {g}")],
                g,
                vec![Logical::A],
                Logical::Gathered,
            )
        }
        Form::AgPipeline => {
            let rows = m / (s * d);
            let a = t(&[s, d, rows, k], &["serial", "didx", "serial", "serial"]);
            let b = t(&[k, n], &["serial", "serial"]);
            let c = t(&[s, d, rows, n], &["stream", "serial", "serial", "serial"]);
            (
                vec![("a", a.clone()), ("b", b.clone())],
                vec![format!(
                    "%c = fusion.matmul %a, %b : {a},\n      {b}\n      -> {c}"
                )],
                c,
                vec![Logical::A, Logical::B],
                Logical::AgC,
            )
        }
        Form::AgRing => {
            let a = t(&[d, m / d, k], &["didx", "serial", "serial"]);
            let b = t(&[k, n], &["serial", "serial"]);
            let c = t(&[d, m / d, n], &["stream", "serial", "serial"]);
            (
                vec![("a", a.clone()), ("b", b.clone())],
                vec![format!(
                    "%c = fusion.matmul %a, %b : {a},\n      {b}\n      -> {c}"
                )],
                c,
                vec![Logical::A, Logical::B],
                Logical::AgC,
            )
        }
        Form::RsGemm | Form::ArGemm => {
            let a = t(&[d, m, kd], &["didx", "serial", "serial"]);
            let b = t(&[d, kd, n], &["didx", "serial", "serial"]);
            let p = t(&[d, m, n], &["didx", "serial", "serial"]);
            (
                vec![("a", a.clone()), ("b", b.clone())],
                vec![format!(
                    "%c = fusion.matmul %a, %b : {a},\n      {b}\n      -> {p}"
                )],
                p,
                vec![Logical::L, Logical::B],
                Logical::Partial,
            )
        }
        Form::RsReduceScatter => {
            let p = t(&[d, d, m / d, n], &["didx", "serial", "serial", "serial"]);
            let c = t(&[d, m / d, n], &["didx", "serial", "serial"]);
            (
                vec![("p", p.clone())],
                vec![format!("%c = fusion.sum %p [0] : {p}\n      -> {c}")],
                c,
                vec![Logical::P],
                Logical::ReducedP,
            )
        }
        Form::ArAllreduce => {
            let p = t(&[d, m, n], &["didx", "serial", "serial"]);
            let c = t(&[m, n], &["serial", "serial"]);
            (
                vec![("p", p.clone())],
                vec![format!("%c = fusion.sum %p [0] : {p}\n      -> {c}")],
                c,
                vec![Logical::P],
                Logical::ReducedP,
            )
        }
        Form::RsPipeline | Form::RsRing | Form::ArPipeline | Form::ArNoOverlap | Form::ArRing => {
            // A's axes after the didx one, the partial's and C's.
            let (a_rows, c_shape, c_dist): (Vec<usize>, Vec<usize>, Vec<&str>) = match form {
                Form::RsPipeline => (
                    vec![s, d, m / (s * d)],
                    vec![s, d, m / (s * d), n],
                    vec!["stream", "didx", "serial", "serial"],
                ),
                Form::RsRing => (
                    vec![d, m / d],
                    vec![d, m / d, n],
                    vec!["didx", "serial", "serial"],
                ),
                Form::ArPipeline => (
                    vec![s, m / s],
                    vec![s, m / s, n],
                    vec!["stream", "serial", "serial"],
                ),
                Form::ArRing => (
                    vec![d, m / d],
                    vec![d, m / d, n],
                    vec!["serial", "serial", "serial"],
                ),
                _ => (
                    vec![s, m / s],
                    vec![s, m / s, n],
                    vec!["serial", "serial", "serial"],
                ),
            };
            let mut a_shape = vec![d];
            a_shape.extend(&a_rows);
            a_shape.push(kd);
            let mut a_dist = vec!["didx"];
            a_dist.extend(std::iter::repeat_n("serial", a_rows.len() + 1));
            let mut p_shape = vec![d];
            p_shape.extend(&a_rows);
            p_shape.push(n);
            // The partial is produced chunk by chunk along the first row axis.
            let mut p_dist = vec!["didx", "stream"];
            p_dist.extend(std::iter::repeat_n("serial", a_rows.len()));
            // Device d's slice of B, with a unit axis for each of A's batch
            // axes after the didx one (A's row axes but M): the matmul
            // broadcasts it along them.
            let units = a_rows.len() - 1;
            let mut b_shape = vec![d];
            b_shape.extend(std::iter::repeat_n(1, units));
            b_shape.extend([kd, n]);
            let mut b_dist = vec!["didx"];
            b_dist.extend(std::iter::repeat_n("serial", units + 2));
            let a = t(&a_shape, &a_dist);
            let b = t(&b_shape, &b_dist);
            let p = t(&p_shape, &p_dist);
            let c = t(&c_shape, &c_dist);
            (
                vec![("a", a.clone()), ("b", b.clone())],
                vec![
                    format!("%p = fusion.matmul %a, %b : {a},\n      {b}\n      -> {p}"),
                    format!("%c = fusion.sum %p [0] : {p}\n      -> {c}"),
                ],
                c,
                vec![Logical::L, Logical::B],
                Logical::RowC,
            )
        }
    };
    let mut text = String::new();
    let _ = writeln!(
        text,
        "// {}: generated by hir-bench emit (D={d} S={s} M={m} K={k} N={n} {})",
        form.name(),
        dtype.mlir()
    );
    let _ = writeln!(
        text,
        "fusion.mesh @tp = [{}]",
        (0..d).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(
        text,
        "func.func @{entry}({})\n    -> {output_type} {{",
        args.iter()
            .map(|(name, r#type)| format!("%{name}: {type}"))
            .collect::<Vec<_>>()
            .join(",\n    ")
    );
    for op in ops {
        let _ = writeln!(text, "  {op}");
    }
    let _ = writeln!(text, "  return %c : {output_type}\n}}");
    Ok(Program {
        form,
        entry,
        text,
        inputs,
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(devices: usize, chunks: usize, m: usize, k: usize, n: usize) -> Params {
        Params {
            devices,
            chunks,
            m,
            k,
            n,
            dtype: DType::BF16,
        }
    }

    #[test]
    fn every_variant_names_a_program_of_its_family() {
        for family in Family::ALL {
            for variant in Variant::ALL {
                let (form, p2p) = variant.program(family);
                assert_eq!(form.family(), family);
                assert_eq!(
                    p2p != P2p::None,
                    matches!(variant, Variant::P2pNccl | Variant::P2pCuda)
                );
            }
        }
        assert_eq!(
            Variant::P2pCuda.program(Family::Ar),
            (Form::ArRing, P2p::Cuda)
        );
        // The command line finds a program by its name.
        let names: std::collections::HashSet<_> = Form::ALL.map(Form::name).into();
        assert_eq!(names.len(), Form::ALL.len());
    }

    #[test]
    fn generates_the_collective_pipeline() {
        let program = generate(Form::AgPipeline, &params(2, 4, 64, 16, 8)).unwrap();
        assert!(program.text.contains("fusion.mesh @tp = [0, 1]"));
        assert!(program.text.contains(
            "%a: tensor<4x2x8x16xbf16, #fusion.dist<@tp, [serial, didx, serial, serial]>>"
        ));
        assert!(program.text.contains(
            "-> tensor<4x2x8x8xbf16, #fusion.dist<@tp, [stream, serial, serial, serial]>>"
        ));
        assert_eq!(program.entry, "ag_pipeline");
    }

    #[test]
    fn row_parallel_programs_give_each_device_its_own_slice_of_b() {
        let p = params(2, 2, 8, 8, 6);
        let gemm = generate(Form::RsGemm, &p).unwrap();
        assert!(
            gemm.text
                .contains("%b: tensor<2x4x6xbf16, #fusion.dist<@tp, [didx, serial, serial]>>")
        );
        // A unit axis of B for each of A's row axes, broadcast by the matmul.
        let ring = generate(Form::RsRing, &p).unwrap();
        assert!(ring.text.contains(
            "%b: tensor<2x1x4x6xbf16, #fusion.dist<@tp, [didx, serial, serial, serial]>>"
        ));
        let pipeline = generate(Form::RsPipeline, &p).unwrap();
        assert!(pipeline.text.contains(
            "%b: tensor<2x1x1x4x6xbf16, #fusion.dist<@tp, [didx, serial, serial, serial, serial]>>"
        ));
        assert!(!pipeline.text.contains("fusion.broadcast"));
        for form in [
            Form::RsGemm,
            Form::RsPipeline,
            Form::RsRing,
            Form::ArPipeline,
            Form::ArRing,
        ] {
            assert_eq!(generate(form, &p).unwrap().inputs, [Logical::L, Logical::B]);
        }
    }

    #[test]
    fn divisibility_errors_name_the_extents() {
        let error = generate(Form::AgPipeline, &params(4, 3, 16, 8, 8))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "ag-pipeline: M=16 is not divisible by S*D (S chunks of D row shards)=12"
        );
        let error = check(Form::RsRing, &params(4, 1, 16, 6, 8))
            .unwrap_err()
            .to_string();
        assert!(error.contains("K=6 is not divisible by D (K is sharded)=4"));
        assert!(check(Form::ArAllreduce, &params(3, 1, 5, 7, 2)).is_ok());
        // Extents whose products would wrap are errors, not wrapped checks.
        let error = check(Form::AgPipeline, &params(1 << 33, 1 << 33, 1 << 33, 4, 4))
            .unwrap_err()
            .to_string();
        assert!(error.contains("larger than memory can address"), "{error}");
        let error = check(Form::AgGemm, &params(2, 1, usize::MAX, 4, 4))
            .unwrap_err()
            .to_string();
        assert!(error.contains("a [M, K] tensor of"), "{error}");
    }

    #[test]
    fn shapes_are_reshapes_of_the_logical_tensors() {
        let p = params(2, 2, 8, 4, 6);
        for form in Form::ALL {
            let program = generate(form, &p).unwrap();
            let output = program.output.shape(&p).iter().product::<usize>();
            // The result type's element count is the logical output's.
            let result = program
                .text
                .lines()
                .find(|line| line.trim_start().starts_with("-> tensor<"))
                .unwrap();
            let dims: usize = result
                .split("tensor<")
                .nth(1)
                .unwrap()
                .split('x')
                .filter_map(|extent| extent.parse::<usize>().ok())
                .product();
            assert_eq!(dims, output, "{}", form.name());
        }
    }
}
