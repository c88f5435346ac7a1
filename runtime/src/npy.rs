//! `.npy` files (NumPy's format, versions 1 to 3, C order, little-endian)
//! for a launcher's inputs and outputs.
//!
//! NumPy has no bf16, so bf16 arrays are written as `<f4` (every bf16 is an
//! f32: nothing is lost, and any NumPy reads them); reading converts what the
//! file holds (`<f4`, `<f2`, or `<f8`, rounded) to the type the program wants
//! with [`Array::cast`]. f16 arrays are `<f2`; i32 and i64 arrays are `<i4`
//! and `<i8`, read and written exactly.

use crate::error::{Error, Result};
use half::{bf16, f16};
use hir_abi::DType;
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

/// An array in memory: row-major elements of `dtype`, little-endian.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

impl Array {
    /// `values` rounded to `dtype`: through f32 to a float type; to an
    /// integer type truncated toward zero and wrapped (exact for the
    /// integers of the type).
    pub fn from_f64(dtype: DType, shape: &[usize], values: &[f64]) -> Array {
        assert_eq!(shape.iter().product::<usize>(), values.len());
        let data = match dtype {
            DType::I32 => values
                .iter()
                .flat_map(|&v| (v as i64 as i32).to_le_bytes())
                .collect(),
            DType::I64 => values
                .iter()
                .flat_map(|&v| (v as i64).to_le_bytes())
                .collect(),
            _ => {
                let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
                return Array::from_f32(dtype, shape, &values);
            }
        };
        Array {
            dtype,
            shape: shape.to_vec(),
            data,
        }
    }

    /// `values` rounded to `dtype` (to an integer type as [`Array::from_f64`]).
    pub fn from_f32(dtype: DType, shape: &[usize], values: &[f32]) -> Array {
        assert_eq!(shape.iter().product::<usize>(), values.len());
        let data = match dtype {
            DType::I32 | DType::I64 => {
                let values: Vec<f64> = values.iter().map(|&v| v.into()).collect();
                return Array::from_f64(dtype, shape, &values);
            }
            DType::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            DType::BF16 => values
                .iter()
                .flat_map(|&v| bf16::from_f32(v).to_le_bytes())
                .collect(),
            DType::F16 => values
                .iter()
                .flat_map(|&v| f16::from_f32(v).to_le_bytes())
                .collect(),
        };
        Array {
            dtype,
            shape: shape.to_vec(),
            data,
        }
    }

    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values, rounded to f32 (integers beyond 2^24 inexactly).
    pub fn to_f32(&self) -> Vec<f32> {
        self.to_f64().into_iter().map(|v| v as f32).collect()
    }

    /// The values, exactly (integers beyond 2^53 aside).
    pub fn to_f64(&self) -> Vec<f64> {
        let size = self.dtype.size();
        self.data
            .chunks_exact(size)
            .map(|bytes| match self.dtype {
                DType::F32 => f32::from_le_bytes(bytes.try_into().unwrap()).into(),
                DType::BF16 => bf16::from_le_bytes(bytes.try_into().unwrap()).to_f64(),
                DType::F16 => f16::from_le_bytes(bytes.try_into().unwrap()).to_f64(),
                DType::I32 => i32::from_le_bytes(bytes.try_into().unwrap()).into(),
                DType::I64 => i64::from_le_bytes(bytes.try_into().unwrap()) as f64,
            })
            .collect()
    }

    /// The array in `dtype`, rounding to nearest even where it narrows (to
    /// an integer type as [`Array::from_f64`]).
    pub fn cast(&self, dtype: DType) -> Array {
        if dtype == self.dtype {
            return self.clone();
        }
        if !(dtype.is_float() && self.dtype.is_float()) {
            return Array::from_f64(dtype, &self.shape, &self.to_f64());
        }
        Array::from_f32(dtype, &self.shape, &self.to_f32())
    }

    /// The file's bytes.
    pub fn to_npy(&self) -> Vec<u8> {
        let (descr, array) = match self.dtype {
            DType::F32 => ("<f4", self.clone()),
            DType::F16 => ("<f2", self.clone()),
            DType::BF16 => ("<f4", self.cast(DType::F32)),
            DType::I32 => ("<i4", self.clone()),
            DType::I64 => ("<i8", self.clone()),
        };
        let shape = match self.shape.as_slice() {
            [one] => format!("({one},)"),
            dims => format!(
                "({})",
                dims.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        // Magic, version and length take 10 bytes; the data starts 64-aligned.
        let padded = (10 + header.len() + 1).div_ceil(64) * 64;
        header.push_str(&" ".repeat(padded - 10 - header.len() - 1));
        header.push('\n');
        let mut bytes = MAGIC.to_vec();
        bytes.extend([1, 0]);
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend(&array.data);
        bytes
    }

    /// Parses a file's bytes; `<f8` data is rounded to f32.
    pub fn from_npy(bytes: &[u8]) -> Result<Array> {
        let bad = |why: String| Error::Invalid(format!("not a supported .npy file: {why}"));
        if bytes.len() < 10 || &bytes[..6] != MAGIC {
            return Err(bad("no NumPy magic string".into()));
        }
        let (length, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (
                u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
                12,
            ),
            version => return Err(bad(format!("unknown version {version}"))),
        };
        let header = bytes
            .get(start..start + length)
            .ok_or_else(|| bad("the header is cut short".into()))?;
        let header =
            std::str::from_utf8(header).map_err(|_| bad("the header is not text".into()))?;
        let descr = field(header, "descr")
            .map(|value| value.trim_matches(|c| c == '\'' || c == '"'))
            .ok_or_else(|| bad(format!("no 'descr' in {header:?}")))?;
        if field(header, "fortran_order") != Some("False") {
            return Err(bad(format!("only C order is supported, header {header:?}")));
        }
        let shape = field(header, "shape")
            .and_then(|value| value.strip_prefix('('))
            .and_then(|value| value.strip_suffix(')'))
            .ok_or_else(|| bad(format!("no 'shape' in {header:?}")))?;
        let shape = shape
            .split(',')
            .map(str::trim)
            .filter(|dim| !dim.is_empty())
            .map(|dim| dim.parse::<usize>())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| bad(format!("bad shape ({shape})")))?;
        let (dtype, size) = match descr {
            "<f4" => (DType::F32, 4),
            "<f2" => (DType::F16, 2),
            "<f8" => (DType::F32, 8),
            "<i4" => (DType::I32, 4),
            "<i8" => (DType::I64, 8),
            other => {
                return Err(bad(format!(
                    "element type '{other}'; supported: '<f4', '<f2', '<f8', '<i4', '<i8'"
                )));
            }
        };
        let data = &bytes[start + length..];
        let needed = shape
            .iter()
            .try_fold(size, |bytes: usize, &extent| bytes.checked_mul(extent))
            .ok_or_else(|| {
                bad(format!(
                    "shape {shape:?} of '{descr}' overflows 64-bit sizes"
                ))
            })?;
        if data.len() != needed {
            return Err(bad(format!(
                "shape {shape:?} of '{descr}' needs {needed} bytes of data, the file has {}",
                data.len()
            )));
        }
        let data = if descr == "<f8" {
            data.chunks_exact(8)
                .flat_map(|b| (f64::from_le_bytes(b.try_into().unwrap()) as f32).to_le_bytes())
                .collect()
        } else {
            data.to_vec()
        };
        Ok(Array { dtype, shape, data })
    }
}

/// The text of `'key': value` in a header dict, up to the next top-level
/// comma.
fn field<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let rest = &header[header.find(&format!("'{key}'"))? + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

pub fn read(path: &Path) -> Result<Array> {
    let bytes = std::fs::read(path)
        .map_err(|error| Error::Io(format!("cannot read {}: {error}", path.display())))?;
    Array::from_npy(&bytes).map_err(|error| Error::Invalid(format!("{}: {error}", path.display())))
}

pub fn write(path: &Path, array: &Array) -> Result<()> {
    std::fs::write(path, array.to_npy())
        .map_err(|error| Error::Io(format!("cannot write {}: {error}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Vec<f32> {
        (0..n).map(|i| i as f32 * 0.75 - 3.0).collect()
    }

    #[test]
    fn round_trips_every_dtype() {
        let dir = std::env::temp_dir().join(format!("hir-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for dtype in DType::ALL {
            for shape in [vec![2, 3, 4], vec![5], vec![]] {
                let n = shape.iter().product();
                let array = Array::from_f32(dtype, &shape, &values(n));
                let path = dir.join(format!("{}-{}.npy", dtype.mlir(), shape.len()));
                write(&path, &array).unwrap();
                let back = read(&path).unwrap();
                assert_eq!(back.shape, shape);
                assert_eq!(back.cast(dtype), array, "{dtype:?} {shape:?}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn integers_round_trip_exactly() {
        let values = [i64::from(i32::MIN), -1, 0, 7, i64::from(i32::MAX)];
        let wide: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        for dtype in DType::INTS {
            let array = Array::from_f64(dtype, &[5], &wide);
            let back = Array::from_npy(&array.to_npy()).unwrap();
            assert_eq!(back, array);
            assert_eq!(back.to_f64(), wide, "{dtype:?}");
        }
        let big = Array::from_f64(DType::I64, &[1], &[(1i64 << 53) as f64]);
        assert_eq!(big.data, (1i64 << 53).to_le_bytes());
        // Wider than i32: wrapped, as the kernels wrap.
        let wrapped = Array::from_f64(DType::I32, &[1], &[2147483648.0]);
        assert_eq!(wrapped.to_f64(), [f64::from(i32::MIN)]);
        let header = String::from_utf8_lossy(&Array::from_f64(DType::I64, &[1], &[1.0]).to_npy())
            .into_owned();
        assert!(header.contains("'descr': '<i8'"), "{header}");
    }

    #[test]
    fn a_shape_whose_size_overflows_is_an_error_not_a_wrap() {
        // 2^33 x 2^31 f4 elements: 2^66 bytes, 0 once wrapped, as the data.
        let mut bytes = Array::from_f32(DType::F32, &[0], &[]).to_npy();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        let header = header.replace("(0,)", "(8589934592, 2147483648)");
        let padded = format!("{:<width$}", header.trim_end(), width = header_len - 1) + "\n";
        assert_eq!(padded.len(), header_len);
        bytes.splice(10..10 + header_len, padded.bytes());
        let error = Array::from_npy(&bytes).unwrap_err().to_string();
        assert!(error.contains("overflows 64-bit sizes"), "{error}");
    }

    #[test]
    fn headers_are_aligned_and_numpy_shaped() {
        let bytes = Array::from_f32(DType::BF16, &[3], &[1.0, 2.0, 3.0]).to_npy();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
        assert_eq!(bytes.len(), 10 + header_len + 12);
    }

    /// A version 1 file with this header dict and data.
    fn file(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([1, 0]);
        bytes.extend((dict.len() as u16 + 1).to_le_bytes());
        bytes.extend(dict.as_bytes());
        bytes.push(b'\n');
        bytes.extend(data);
        bytes
    }

    #[test]
    fn reads_f64_and_rejects_what_it_cannot_read() {
        let f64s: Vec<u8> = [1.5f64, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
        assert_eq!(
            Array::from_npy(&file(dict, &f64s)).unwrap().to_f32(),
            [1.5, -2.0]
        );

        let error = |bytes: &[u8]| Array::from_npy(bytes).unwrap_err().to_string();
        assert!(error(b"PK\x03\x04 not numpy").contains("no NumPy magic string"));
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
        assert!(error(&file(dict, &[0; 15])).contains("needs 16 bytes of data, the file has 15"));
        let dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }";
        assert!(error(&file(dict, &[0; 16])).contains("only C order"));
        let dict = "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 2), }";
        assert!(error(&file(dict, &[0; 16])).contains("element type '<u4'"));
        let dict = "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }";
        assert!(error(&file(dict, &[0; 16])).contains("element type '>f4'"));
        let missing = read(Path::new("/nonexistent/a.npy")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("cannot read /nonexistent/a.npy")
        );
    }
}
