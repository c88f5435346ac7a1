//! The program of a `host.fused` op: what `convert-host-to-llvm` serializes
//! its region into and both backends run as one kernel. It is passed to
//! [`crate::Entry::Fused`] as a `memref<*xi64>` constant; the words are also
//! the key the cuda backend caches its compiled kernel by.
//!
//! The iteration shape is the shape of the outputs. The buffers are the
//! op's operands, inputs then outputs. Values live in *slots*: slot
//! `k < loads.len()` is load `k` (a buffer read at the element, through
//! stride 0 along its broadcast axes), slot `loads.len() + j` is the result
//! of instruction `j`. Every instruction computes in f32 on its operand slots
//! and rounds its result to its element type, exactly as the unfused op
//! computes and writes its output buffer. Stores write slots to output
//! buffers, rounding to the buffer's element type.
//!
//! A *row program* (`reduced` is the iteration shape's last axis) may also
//! reduce along that axis: a [`Instr::Reduce`] folds a slot over each row
//! into one value per row. Slots are then of two levels: a slot is
//! *row-level* (one value per row) when it is a reduction, a constant, a
//! load broadcast along the reduced axis, or an instruction on row-level
//! slots only; every other slot varies along the row. A row store writes a
//! row-level slot to a buffer of the iteration shape without the reduced
//! axis (a row statistic, as LayerNorm's mean); every program stores at
//! least one buffer of the whole iteration shape. The reductions' order of summation is the
//! backend's (a sequential f32 sum on cpu, a tree on cuda), so a row program
//! matches the unfused ops within rounding, not bit for bit. (Rounding is
//! as declared: a LayerNorm written in bf16 rounds every intermediate to
//! bf16, which costs integer work per element and accuracy; one written as
//! torch computes it, in f32 between a cast in and a cast out, rounds once.)
//!
//! Every element type is a float: integer buffers are never fused
//! (`host-fuse-elementwise` leaves their ops alone), and [`Program::decode`]
//! refuses them.
//!
//! Words: `[VERSION, reduced, n, dtype * n, loads, (buffer, axes) * loads,
//! instrs, (opcode, dtype, a, b, c) * instrs, stores, (buffer, slot, row) *
//! stores]`, `reduced` the reduced axis or -1, `axes` a bit mask of the
//! iteration axes a load broadcasts along, unused operands 0, `row` 1 for a
//! row store. Opcodes: `1 + i` for `Unary::ALL[i]`, `16 + i` for
//! `Binary::ALL[i]`, 32 `where(a, b, c)` (`b` where `a` is nonzero, NaN
//! included), 33 `convert(a)` (copy or cast: `a` rounded to the dtype),
//! `34 + i` for `Reduction::ALL[i]` over the reduced axis, 40 `constant`
//! (`a` the bits of an f64, as a `host.fill` of the chain holds it: the
//! slot is that value rounded to f32 then to the dtype, as the fill rounds
//! it, so that a fused constant and an unfused fill give the same bits).

use crate::{Binary, DType, Reduction, Unary};
use std::fmt;

/// The most buffers (inputs and outputs) a fused op takes: one entry per
/// count, `hir_rt_fused_<n>`.
pub const MAX_BUFFERS: usize = 8;

/// The most axes a fused op's iteration shape has (its broadcast masks are
/// `i64` bits, and the cuda kernel's views hold this many strides).
pub const MAX_RANK: usize = 8;

const VERSION: i64 = 3;

/// What an instruction computes, on slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    Unary(Unary, usize),
    Binary(Binary, usize, usize),
    /// `lhs` where `mask` is nonzero, `rhs` elsewhere: `(mask, lhs, rhs)`.
    Where(usize, usize, usize),
    /// The slot's value, rounded to the instruction's type (copy, cast).
    Convert(usize),
    /// The slot folded over each row (the reduced axis), in f32.
    Reduce(Reduction, usize),
    /// A constant (the bits of an f64, as [`Instr::constant`] takes it):
    /// what a `host.fill` writes, without a buffer.
    Constant(u64),
}

const CONSTANT: i64 = 40;

impl Instr {
    /// The constant `value` (kept as its bits, so that programs compare and
    /// hash by them).
    pub fn constant(value: f64) -> Instr {
        Instr::Constant(value.to_bits())
    }

    /// The slots it reads.
    pub fn operands(self) -> Vec<usize> {
        match self {
            Instr::Constant(_) => Vec::new(),
            Instr::Unary(_, a) | Instr::Convert(a) | Instr::Reduce(_, a) => vec![a],
            Instr::Binary(_, a, b) => vec![a, b],
            Instr::Where(m, a, b) => vec![m, a, b],
        }
    }

    fn opcode(self) -> i64 {
        let position = |found: Option<usize>| found.expect("every op is in its ALL") as i64;
        match self {
            Instr::Unary(op, _) => 1 + position(Unary::ALL.iter().position(|&u| u == op)),
            Instr::Binary(op, _, _) => 16 + position(Binary::ALL.iter().position(|&b| b == op)),
            Instr::Where(..) => 32,
            Instr::Convert(_) => 33,
            Instr::Reduce(op, _) => 34 + position(Reduction::ALL.iter().position(|&r| r == op)),
            Instr::Constant(_) => CONSTANT,
        }
    }

    /// Its words `a, b, c`: the operand slots (0 where unused), or a
    /// constant's bits then 0, 0.
    fn operand_words(self) -> [i64; 3] {
        if let Instr::Constant(bits) = self {
            return [bits as i64, 0, 0];
        }
        let mut operands = self.operands();
        operands.resize(3, 0);
        [operands[0], operands[1], operands[2]].map(|slot| slot as i64)
    }
}

/// A buffer read at each element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Load {
    pub buffer: usize,
    /// The iteration axes the buffer lacks (it is read with stride 0 along
    /// them, as `host.broadcast` writes it), in increasing order.
    pub broadcast: Vec<usize>,
}

/// A slot written to an output buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Store {
    pub buffer: usize,
    pub slot: usize,
    /// A row store: the buffer lacks the reduced axis, and the slot is
    /// row-level.
    pub row: bool,
}

impl Store {
    /// A store of `slot` to a buffer of the iteration shape.
    pub fn whole(buffer: usize, slot: usize) -> Store {
        Store {
            buffer,
            slot,
            row: false,
        }
    }

    /// A row store of `slot` to a buffer of the iteration shape without
    /// the reduced axis.
    pub fn row(buffer: usize, slot: usize) -> Store {
        Store {
            buffer,
            slot,
            row: true,
        }
    }
}

/// A fused op's program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The axis reductions fold (the iteration shape's last), in a row
    /// program.
    pub reduced: Option<usize>,
    /// The element type of each buffer, inputs then outputs.
    pub dtypes: Vec<DType>,
    pub loads: Vec<Load>,
    /// Each instruction and the element type its result is rounded to.
    pub instrs: Vec<(Instr, DType)>,
    pub stores: Vec<Store>,
}

/// Why words are not a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid(pub String);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid fused program: {}", self.0)
    }
}

fn dtype_code(dtype: DType) -> i64 {
    DType::ALL
        .iter()
        .position(|&t| t == dtype)
        .expect("every dtype is in ALL") as i64
}

impl Program {
    /// The slot count: loads, then one per instruction.
    pub fn slots(&self) -> usize {
        self.loads.len() + self.instrs.len()
    }

    /// The element type of a slot.
    pub fn slot_dtype(&self, slot: usize) -> DType {
        match slot.checked_sub(self.loads.len()) {
            None => self.dtypes[self.loads[slot].buffer],
            Some(instr) => self.instrs[instr].1,
        }
    }

    /// Whether each slot is row-level (one value per row of a row
    /// program; none in another program).
    pub fn row_level(&self) -> Vec<bool> {
        let mut levels: Vec<bool> = self
            .loads
            .iter()
            .map(|load| {
                self.reduced
                    .is_some_and(|axis| load.broadcast.contains(&axis))
            })
            .collect();
        for &(instr, _) in &self.instrs {
            let level = match instr {
                Instr::Reduce(..) => true,
                // The same at every element: one value per row, where there
                // are rows.
                Instr::Constant(_) => self.reduced.is_some(),
                _ => instr.operands().iter().all(|&slot| levels[slot]),
            };
            levels.push(level);
        }
        levels
    }

    /// The words the runtime is passed.
    pub fn encode(&self) -> Vec<i64> {
        let reduced = self.reduced.map_or(-1, |axis| axis as i64);
        let mut words = vec![VERSION, reduced, self.dtypes.len() as i64];
        words.extend(self.dtypes.iter().map(|&dtype| dtype_code(dtype)));
        words.push(self.loads.len() as i64);
        for load in &self.loads {
            let mask = load
                .broadcast
                .iter()
                .fold(0i64, |mask, &axis| mask | 1 << axis);
            words.extend([load.buffer as i64, mask]);
        }
        words.push(self.instrs.len() as i64);
        for &(instr, dtype) in &self.instrs {
            words.extend([instr.opcode(), dtype_code(dtype)]);
            words.extend(instr.operand_words());
        }
        words.push(self.stores.len() as i64);
        for store in &self.stores {
            words.extend([store.buffer as i64, store.slot as i64, store.row as i64]);
        }
        words
    }

    /// The program `words` encode, checked: buffers and slots in range,
    /// each slot read only after it is computed, a constant's unused words
    /// 0, every store to a distinct buffer that no load reads, reductions
    /// of slots that vary along the row and row stores of row-level ones,
    /// in a row program.
    pub fn decode(words: &[i64]) -> Result<Program, Invalid> {
        let mut words = words.iter().copied();
        let mut next = |what: &str| {
            words
                .next()
                .ok_or_else(|| Invalid(format!("ends before its {what}")))
        };
        if next("version")? != VERSION {
            return Err(Invalid(format!("not of version {VERSION}")));
        }
        let count = |value: i64, what: &str, most: usize| {
            usize::try_from(value)
                .ok()
                .filter(|&count| count <= most)
                .ok_or_else(|| Invalid(format!("{what} {value} is not in 0..={most}")))
        };
        // Floats only: a fused program computes in f32.
        let dtype = |code: i64| {
            usize::try_from(code)
                .ok()
                .and_then(|code| DType::ALL.get(code).copied())
                .filter(|dtype| dtype.is_float())
                .ok_or_else(|| Invalid(format!("unknown or integer element type code {code}")))
        };
        let reduced = match next("reduced axis")? {
            -1 => None,
            axis => Some(count(axis, "reduced axis", MAX_RANK - 1)?),
        };
        let buffers = count(next("buffer count")?, "buffer count", MAX_BUFFERS)?;
        let dtypes = (0..buffers)
            .map(|_| dtype(next("element types")?))
            .collect::<Result<Vec<_>, _>>()?;
        let buffer = |value: i64| count(value, "buffer", buffers.saturating_sub(1));
        let mut loads = Vec::new();
        for _ in 0..count(next("load count")?, "load count", 1 << 16)? {
            let source = buffer(next("loads")?)?;
            let mask = next("loads")?;
            if !(0..1 << MAX_RANK).contains(&mask) {
                return Err(Invalid(format!(
                    "broadcast mask {mask:#x} is past {MAX_RANK} axes"
                )));
            }
            let broadcast = (0..MAX_RANK).filter(|axis| mask >> axis & 1 == 1).collect();
            loads.push(Load {
                buffer: source,
                broadcast,
            });
        }
        let mut instrs = Vec::new();
        for _ in 0..count(next("instruction count")?, "instruction count", 1 << 16)? {
            let computed = loads.len() + instrs.len();
            let (opcode, result) = (next("instructions")?, dtype(next("instructions")?)?);
            let slot = |value: i64| {
                count(value, "slot", computed.saturating_sub(1))
                    .map_err(|_| Invalid(format!("slot {value} is read before it is computed")))
            };
            let (a, b, c) = (
                next("instructions")?,
                next("instructions")?,
                next("instructions")?,
            );
            let instr = match opcode {
                1..=15 => match Unary::ALL.get(opcode as usize - 1) {
                    Some(&op) => Instr::Unary(op, slot(a)?),
                    None => return Err(Invalid(format!("unknown opcode {opcode}"))),
                },
                16..=31 => match Binary::ALL.get(opcode as usize - 16) {
                    Some(&op) => Instr::Binary(op, slot(a)?, slot(b)?),
                    None => return Err(Invalid(format!("unknown opcode {opcode}"))),
                },
                32 => Instr::Where(slot(a)?, slot(b)?, slot(c)?),
                33 => Instr::Convert(slot(a)?),
                34..=35 if reduced.is_some() => {
                    Instr::Reduce(Reduction::ALL[opcode as usize - 34], slot(a)?)
                }
                34..=35 => return Err(Invalid("reduces in a program with no reduced axis".into())),
                // One program, one encoding: the words are a cache key.
                CONSTANT if b == 0 && c == 0 => Instr::Constant(a as u64),
                CONSTANT => {
                    return Err(Invalid(format!(
                        "constant's unused words are {b}, {c}, not 0"
                    )));
                }
                _ => return Err(Invalid(format!("unknown opcode {opcode}"))),
            };
            instrs.push((instr, result));
        }
        let slots = loads.len() + instrs.len();
        let mut stores: Vec<Store> = Vec::new();
        for _ in 0..count(next("store count")?, "store count", buffers)? {
            let target = buffer(next("stores")?)?;
            let slot = count(next("stores")?, "slot", slots.saturating_sub(1))?;
            let row = match next("stores")? {
                0 => false,
                1 if reduced.is_some() => true,
                other => return Err(Invalid(format!("store kind {other} is not 0 or 1"))),
            };
            if stores.iter().any(|other| other.buffer == target)
                || loads.iter().any(|load| load.buffer == target)
            {
                return Err(Invalid(format!(
                    "buffer {target} is stored twice, or loaded and stored"
                )));
            }
            stores.push(Store {
                buffer: target,
                slot,
                row,
            });
        }
        if stores.iter().all(|store| store.row) {
            return Err(Invalid("stores no buffer of the iteration shape".into()));
        }
        if let Some(extra) = words.next() {
            return Err(Invalid(format!("has words past its end ({extra}...)")));
        }
        let program = Program {
            reduced,
            dtypes,
            loads,
            instrs,
            stores,
        };
        let levels = program.row_level();
        for (index, &(instr, _)) in program.instrs.iter().enumerate() {
            if let Instr::Reduce(_, operand) = instr
                && levels[operand]
            {
                return Err(Invalid(format!(
                    "instruction {index} reduces slot {operand}, which is one value per row"
                )));
            }
        }
        if let Some(store) = program
            .stores
            .iter()
            .find(|store| store.row && !levels[store.slot])
        {
            return Err(Invalid(format!(
                "row store to buffer {} of slot {}, which varies along the row",
                store.buffer, store.slot
            )));
        }
        Ok(program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Program {
        Program {
            reduced: None,
            dtypes: vec![DType::F32, DType::F32, DType::BF16],
            loads: vec![
                Load {
                    buffer: 0,
                    broadcast: vec![],
                },
                Load {
                    buffer: 1,
                    broadcast: vec![0],
                },
            ],
            instrs: vec![
                (Instr::Binary(Binary::Add, 0, 1), DType::F32),
                (Instr::Unary(Unary::Gelu, 2), DType::F32),
                (Instr::Where(0, 3, 1), DType::F32),
                (Instr::Convert(4), DType::BF16),
            ],
            stores: vec![Store::whole(2, 5)],
        }
    }

    /// LayerNorm of `[r, n]` rows (without its affine part) into `y`, with
    /// the row means also stored: `x`, `1/n` per row, `y`, `mean`.
    fn layer_norm() -> Program {
        let x = Load {
            buffer: 0,
            broadcast: vec![],
        };
        let inv_n = Load {
            buffer: 1,
            broadcast: vec![1],
        };
        Program {
            reduced: Some(1),
            dtypes: vec![DType::BF16, DType::F32, DType::BF16, DType::F32],
            loads: vec![x, inv_n],
            instrs: vec![
                (Instr::Reduce(Reduction::Sum, 0), DType::F32),
                (Instr::Binary(Binary::Mul, 2, 1), DType::F32),
                (Instr::Binary(Binary::Sub, 0, 3), DType::F32),
                (Instr::Binary(Binary::Mul, 4, 4), DType::F32),
                (Instr::Reduce(Reduction::Sum, 5), DType::F32),
                (Instr::Binary(Binary::Mul, 6, 1), DType::F32),
                (Instr::Unary(Unary::Rsqrt, 7), DType::F32),
                (Instr::Binary(Binary::Mul, 4, 8), DType::BF16),
            ],
            stores: vec![Store::whole(2, 9), Store::row(3, 3)],
        }
    }

    #[test]
    fn programs_round_trip_through_their_words() {
        let program = sample();
        let words = program.encode();
        assert_eq!(Program::decode(&words), Ok(program.clone()));
        assert_eq!(program.slots(), 6);
        assert_eq!(program.slot_dtype(1), DType::F32);
        assert_eq!(program.slot_dtype(5), DType::BF16);
        assert_eq!(program.row_level(), vec![false; 6]);
        let rows = layer_norm();
        assert_eq!(Program::decode(&rows.encode()), Ok(rows.clone()));
        let levels = rows.row_level();
        assert_eq!(
            levels,
            [
                false, true, true, true, false, false, true, true, true, false
            ]
        );
    }

    #[test]
    fn row_programs_reduce_only_what_varies_along_the_row() {
        let refused = |program: Program, message: &str| {
            let error = Program::decode(&program.encode()).expect_err("refused");
            assert!(error.0.contains(message), "{error} lacks '{message}'");
        };
        let mut twice = layer_norm();
        twice.instrs[4] = (Instr::Reduce(Reduction::Amax, 3), DType::F32);
        refused(twice, "one value per row");
        let mut varying = layer_norm();
        varying.stores[1].slot = 4;
        refused(varying, "varies along the row");
        let mut rows_only = layer_norm();
        rows_only.stores.remove(0);
        refused(rows_only, "no buffer of the iteration shape");
        let mut unreduced = layer_norm();
        unreduced.reduced = None;
        refused(unreduced, "no reduced axis");
    }

    /// Constants: their f64's bits in the words, row-level in a row
    /// program only, their unused words 0.
    #[test]
    fn constants_are_their_bits_and_one_value_per_row() {
        let mut program = sample();
        program
            .instrs
            .push((Instr::constant(0.7978845608028654), DType::BF16));
        program
            .instrs
            .push((Instr::Binary(Binary::Mul, 5, 6), DType::BF16));
        program.stores[0].slot = 7;
        let words = program.encode();
        assert_eq!(Program::decode(&words), Ok(program.clone()));
        let constant = words.len() - 4 - 2 * 5;
        assert_eq!(
            words[constant..][..5],
            [40, 1, 0.7978845608028654f64.to_bits() as i64, 0, 0]
        );
        assert_eq!(program.row_level(), vec![false; 8]);
        let mut unused = words;
        unused[constant + 3] = 1;
        let error = Program::decode(&unused).expect_err("refused");
        assert!(error.0.contains("unused words"), "{error}");
        // In a row program: a row store of a constant, and of the mean
        // scaled by one (row-level: all its operands are).
        let mut rows = layer_norm();
        rows.dtypes.push(DType::F32);
        rows.instrs.push((Instr::constant(-0.0), DType::F32));
        rows.instrs
            .push((Instr::Binary(Binary::Mul, 3, 10), DType::F32));
        rows.stores[1].slot = 11;
        rows.stores.push(Store::row(4, 10));
        assert_eq!(Program::decode(&rows.encode()), Ok(rows.clone()));
        assert_eq!(rows.row_level()[10..], [true, true]);
    }

    #[test]
    fn malformed_words_are_refused() {
        let words = sample().encode();
        let refused = |words: &[i64], message: &str| {
            let error = Program::decode(words).expect_err("refused");
            assert!(error.0.contains(message), "{error} lacks '{message}'");
        };
        refused(&words[..words.len() - 1], "ends before");
        refused(&[words.clone(), vec![7]].concat(), "past its end");
        let mut integer = words.clone();
        integer[3] = 3;
        refused(&integer, "integer element type");
        let mut version = words.clone();
        version[0] = 1;
        refused(&version, "version");
        // The first instruction is at word 12 (after the version, the
        // reduced axis, 3 dtypes and their count, 2 loads and their count,
        // the instruction count); its first operand (word 14) reading slot
        // 2, its own result.
        let mut forward = words.clone();
        forward[14] = 2;
        refused(&forward, "read before it is computed");
        let mut opcode = words.clone();
        opcode[12] = 99;
        refused(&opcode, "unknown opcode");
        let mut kind = words.clone();
        let last = kind.len() - 1;
        kind[last] = 1;
        refused(&kind, "store kind");
        let mut store = words;
        let last = store.len() - 3;
        store[last] = 0;
        refused(&store, "loaded and stored");
    }
}
