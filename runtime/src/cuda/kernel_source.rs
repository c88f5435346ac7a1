//! The runtime kernels' CUDA source: `kernels.cu` plus one `extern "C"`
//! entry per [`Key`], compiled to PTX by NVRTC once per process and
//! architecture; and the names of `kernels.cu`'s types and functors, which
//! the fused kernels' source (`fused.rs`, `fused_rows.rs`) uses too. A
//! launch names its kernel by `Key`, a value that is hashed, not a name
//! formatted on every launch: a small op's host time is mostly its launch,
//! and formatting names added a tenth of what HIR adds to it.

use crate::error::{Error, Result};
use crate::lock;
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use hir_abi::fused::Instr;
use hir_abi::{Binary, DType, Reduction, Unary};
use std::collections::HashMap;
use std::ffi::CString;
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};

/// The bytes a thread moves per access on the wide paths.
pub(super) const WIDE: usize = 16;

/// What a generator kernel writes (`Generate` or `Random` parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Generator {
    Fill,
    Iota,
    Random,
}

/// How a reduction kernel spreads its work (see `Kernels::reduce`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Way {
    /// A block per output.
    Block,
    /// A thread per output.
    Short,
    /// A thread per WIDE-byte word of outputs.
    Wide,
    /// Words of outputs a block, the reduced axis over its threads.
    Split,
}

/// One kernel of the runtime's module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Key {
    /// A bit copy of words of this many bytes.
    Copy(usize),
    Unary(Unary, DType),
    Cast(DType, DType),
    Binary(Binary, DType),
    /// [`Key::Binary`] on WIDE-byte words.
    BinaryWide(Binary, DType),
    Where(DType),
    Generate(Generator, DType),
    Reduce(Reduction, DType, Way),
}

impl Key {
    /// Every kernel, in the source's order: per type, the ops that take it
    /// (`Unary::takes`, `Binary::takes`) and every cast but an integer type
    /// to itself (a copy).
    pub(super) fn all() -> Vec<Key> {
        let mut keys: Vec<Key> = [2, 4, 8, WIDE].into_iter().map(Key::Copy).collect();
        for dtype in DType::ALL {
            let unary = Unary::ALL.into_iter().filter(|op| op.takes(dtype));
            keys.extend(unary.map(|op| Key::Unary(op, dtype)));
            let casts = DType::ALL
                .into_iter()
                .filter(|&to| dtype.is_float() || dtype != to);
            keys.extend(casts.map(|to| Key::Cast(dtype, to)));
            for op in Binary::ALL.into_iter().filter(|op| op.takes(dtype)) {
                keys.extend([Key::Binary(op, dtype), Key::BinaryWide(op, dtype)]);
            }
            keys.push(Key::Where(dtype));
            let generators = [Generator::Fill, Generator::Iota, Generator::Random];
            keys.extend(generators.map(|generator| Key::Generate(generator, dtype)));
            for op in Reduction::ALL {
                let ways = [Way::Block, Way::Short, Way::Wide, Way::Split];
                keys.extend(ways.map(|way| Key::Reduce(op, dtype, way)));
            }
        }
        keys
    }

    /// The entry's symbol, e.g. `hir_add_f32_wide`.
    pub(super) fn name(self) -> String {
        match self {
            Key::Copy(size) => format!("hir_copy_{}", size * 8),
            Key::Unary(op, dtype) => format!("hir_{}_{}", op.name(), dtype.mlir()),
            Key::Cast(from, to) => format!("hir_cast_{}_{}", from.mlir(), to.mlir()),
            Key::Binary(op, dtype) => format!("hir_{}_{}", op.name(), dtype.mlir()),
            Key::BinaryWide(op, dtype) => format!("hir_{}_{}_wide", op.name(), dtype.mlir()),
            Key::Where(dtype) => format!("hir_where_{}", dtype.mlir()),
            Key::Generate(generator, dtype) => {
                format!("hir_{}_{}", generator.name(), dtype.mlir())
            }
            Key::Reduce(op, dtype, way) => {
                format!("hir_{}_{}{}", op.name(), dtype.mlir(), way.suffix())
            }
        }
    }

    /// The entry's parameter type and the template it calls.
    fn signature(self) -> (&'static str, String) {
        match self {
            Key::Copy(size) => ("Pointwise", format!("copy<{}>", word(size))),
            Key::Unary(op, dtype) => {
                let e = element(dtype);
                let functor = op_functor(op.name(), dtype);
                ("Pointwise", format!("unary<{e}, {e}, {functor}>"))
            }
            Key::Cast(from, to) => {
                let t = element(to);
                let functor = match (from.is_float(), to.is_float()) {
                    (true, true) => "OpCast".to_string(),
                    (true, false) => format!("OpTo{t}"),
                    (false, true) => format!("IntTo{t}"),
                    (false, false) => "IntCast".to_string(),
                };
                (
                    "Pointwise",
                    format!("unary<{}, {t}, {functor}>", element(from)),
                )
            }
            Key::Binary(op, dtype) | Key::BinaryWide(op, dtype) => {
                let template = match self {
                    Key::Binary(..) => "binary",
                    _ => "binary_wide",
                };
                let functor = op_functor(op.name(), dtype);
                (
                    "Pointwise",
                    format!("{template}<{}, {functor}>", element(dtype)),
                )
            }
            Key::Where(dtype) => ("Ternary", format!("where<{}>", element(dtype))),
            Key::Generate(generator, dtype) => {
                let int = if dtype.is_float() { "" } else { "_int" };
                let params = match generator {
                    Generator::Random => "Random",
                    _ => "Generate",
                };
                let name = generator.name();
                (params, format!("{name}{int}<{}>", element(dtype)))
            }
            Key::Reduce(op, dtype, way) => {
                let functor = match (op, dtype.is_float()) {
                    (Reduction::Sum, true) => "SumOp",
                    (Reduction::Amax, true) => "AmaxOp",
                    (Reduction::Sum, false) => "IntSumOp",
                    (Reduction::Amax, false) => "IntAmaxOp",
                };
                let template = format!("reduce{}", way.suffix());
                (
                    "Reduce",
                    format!("{template}<{}, {functor}>", element(dtype)),
                )
            }
        }
    }
}

impl Generator {
    fn name(self) -> &'static str {
        match self {
            Generator::Fill => "fill",
            Generator::Iota => "iota",
            Generator::Random => "random",
        }
    }
}

impl Way {
    fn suffix(self) -> &'static str {
        match self {
            Way::Block => "",
            Way::Short => "_short",
            Way::Wide => "_wide",
            Way::Split => "_split",
        }
    }
}

/// The `kernels.cu` struct of an element type.
pub(super) fn element(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "F32",
        DType::BF16 => "BF16",
        DType::F16 => "F16",
        DType::I32 => "I32",
        DType::I64 => "I64",
    }
}

fn word(size: usize) -> &'static str {
    match size {
        2 => "unsigned short",
        4 => "unsigned",
        8 => "u64",
        _ => "Word16",
    }
}

/// The `kernels.cu` functor of an op's mnemonic on a float type: `OpNeg`
/// for `neg`.
pub(super) fn functor(name: &str) -> String {
    let mut chars = name.chars();
    let first: String = chars
        .next()
        .map(|c| c.to_ascii_uppercase())
        .into_iter()
        .collect();
    format!("Op{first}{}", chars.as_str())
}

/// [`functor`] on `dtype`: `IntAdd` for `add` on an integer type.
fn op_functor(name: &str, dtype: DType) -> String {
    let float = functor(name);
    if dtype.is_float() {
        float
    } else {
        float.replacen("Op", "Int", 1)
    }
}

/// The CUDA C of a fused program's instruction `instr` on slots named
/// `s<k>`: the functor the unfused kernel applies (a reduction is a row
/// kernel's phase, not an expression).
pub(super) fn expression(instr: Instr) -> String {
    match instr {
        Instr::Unary(op, a) => format!("{}::apply(s{a})", functor(op.name())),
        Instr::Binary(op, a, b) => format!("{}::apply(s{a}, s{b})", functor(op.name())),
        // NaN is nonzero, as in the unfused kernel.
        Instr::Where(mask, a, b) => format!("(s{mask} != 0.0f ? s{a} : s{b})"),
        Instr::Convert(a) => format!("s{a}"),
        // The f32 the fill kernel is passed, exactly (as its bits), which
        // `hir_round` then rounds as the fill does.
        Instr::Constant(bits) => {
            format!(
                "__uint_as_float({:#010x}u)",
                (f64::from_bits(bits) as f32).to_bits()
            )
        }
        Instr::Reduce(..) => unreachable!("a reduction is a phase of a row kernel"),
    }
}

/// `kernels.cu` and one entry per [`Key::all`].
pub(super) fn source() -> String {
    let mut source = include_str!("kernels.cu").to_string();
    for key in Key::all() {
        let (params, body) = key.signature();
        writeln!(
            source,
            "extern \"C\" __global__ void {}({params} p) {{ {body}(p); }}",
            key.name()
        )
        .expect("writing to a string");
    }
    source
}

/// The PTX of [`source`] for `compute_<arch>`, compiled on first use.
pub(super) fn ptx(arch: i32) -> Result<Arc<CString>> {
    static CACHE: OnceLock<Mutex<HashMap<i32, Arc<CString>>>> = OnceLock::new();
    let mut cache = lock(CACHE.get_or_init(Mutex::default));
    if let Some(ptx) = cache.get(&arch) {
        return Ok(ptx.clone());
    }
    let options = CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{arch}")],
        name: Some("hir_kernels.cu".into()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(source(), options).map_err(|error| {
        Error::Cuda(format!(
            "NVRTC cannot compile the runtime's kernels: {error}"
        ))
    })?;
    let ptx = Arc::new(CString::new(ptx.to_src()).expect("PTX is text"));
    cache.insert(arch, ptx.clone());
    Ok(ptx)
}

#[cfg(test)]
#[path = "kernel_source_tests.rs"]
mod tests;
