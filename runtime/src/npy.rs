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
        let (length, start) = match (bytes[6], bytes[7]) {
            (major, minor) if minor != 0 || !(1..=3).contains(&major) => {
                return Err(bad(format!("unknown version {major}.{minor}")));
            }
            (1, _) => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            _ if bytes.len() >= 12 => (
                u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
                12,
            ),
            _ => return Err(bad("the header is cut short".into())),
        };
        let header = bytes
            .get(start..start + length)
            .ok_or_else(|| bad("the header is cut short".into()))?;
        let header =
            std::str::from_utf8(header).map_err(|_| bad("the header is not text".into()))?;
        let Header {
            descr,
            fortran_order,
            shape,
        } = Header::parse(header).map_err(|why| bad(format!("{why}, in header {header:?}")))?;
        if fortran_order {
            return Err(bad(format!("only C order is supported, header {header:?}")));
        }
        let descr = descr.as_str();
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

/// A header's dict, read as strictly as NumPy reads it: a Python dict
/// literal of exactly the keys `descr` (a string), `fortran_order` (`True`
/// or `False`) and `shape` (a tuple of non-negative integers), each once,
/// followed by nothing but the whitespace that pads it.
#[derive(Debug, PartialEq)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

impl Header {
    const KEYS: [&'static str; 3] = ["descr", "fortran_order", "shape"];

    fn parse(text: &str) -> std::result::Result<Header, String> {
        let mut cursor = Cursor { text, at: 0 };
        cursor.expect('{')?;
        let (mut descr, mut fortran_order, mut shape) = (None, None, None);
        loop {
            if cursor.eat('}') {
                break;
            }
            let key = cursor.string()?;
            cursor.expect(':')?;
            let repeated = match key.as_str() {
                "descr" => descr.replace(cursor.string()?).is_some(),
                "fortran_order" => fortran_order.replace(cursor.boolean()?).is_some(),
                "shape" => shape.replace(cursor.shape()?).is_some(),
                other => {
                    return Err(format!(
                        "an unknown key '{other}' (a header has only '{}')",
                        Self::KEYS.join("', '")
                    ));
                }
            };
            if repeated {
                return Err(format!("the key '{key}' appears twice"));
            }
            if !cursor.eat(',') {
                cursor.expect('}')?;
                break;
            }
        }
        let rest = text[cursor.at..].trim_end();
        if !rest.trim_start().is_empty() {
            return Err(format!(
                "{rest:?} after the end of the dict, at byte {}",
                cursor.at
            ));
        }
        let missing = |key: &str| format!("no '{key}'");
        Ok(Header {
            descr: descr.ok_or_else(|| missing("descr"))?,
            fortran_order: fortran_order.ok_or_else(|| missing("fortran_order"))?,
            shape: shape.ok_or_else(|| missing("shape"))?,
        })
    }
}

/// Reads the Python literals of a header, skipping the whitespace before
/// each token.
struct Cursor<'t> {
    text: &'t str,
    at: usize,
}

impl Cursor<'_> {
    fn rest(&mut self) -> &str {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
        &self.text[self.at..]
    }

    fn eat(&mut self, token: char) -> bool {
        let eaten = self.rest().starts_with(token);
        if eaten {
            self.at += token.len_utf8();
        }
        eaten
    }

    fn expect(&mut self, token: char) -> std::result::Result<(), String> {
        if self.eat(token) {
            return Ok(());
        }
        let at = self.at;
        let found = self.rest().chars().next();
        Err(match found {
            Some(found) => format!("'{token}' expected at byte {at}, found '{found}'"),
            None => format!("'{token}' expected at byte {at}, found the end"),
        })
    }

    /// A string in single or double quotes, without escapes.
    fn string(&mut self) -> std::result::Result<String, String> {
        let at = self.at;
        let rest = self.rest();
        let quote = rest
            .chars()
            .next()
            .filter(|&quote| quote == '\'' || quote == '"')
            .ok_or_else(|| format!("a quoted string expected at byte {at}"))?;
        let body = &rest[1..];
        let end = body
            .find(quote)
            .ok_or_else(|| format!("a string at byte {at} does not end"))?;
        let value = &body[..end];
        if value.contains('\\') {
            return Err(format!("a string with an escape at byte {at}"));
        }
        let value = value.to_string();
        self.at += end + 2;
        Ok(value)
    }

    fn boolean(&mut self) -> std::result::Result<bool, String> {
        for (word, value) in [("True", true), ("False", false)] {
            if self.rest().starts_with(word) {
                self.at += word.len();
                return Ok(value);
            }
        }
        Err(format!("True or False expected at byte {}", self.at))
    }

    /// A tuple of non-negative integers: `()`, `(3,)`, `(2, 3)`, `(2, 3,)`.
    fn shape(&mut self) -> std::result::Result<Vec<usize>, String> {
        let start = self.at;
        self.expect('(')?;
        let mut shape = Vec::new();
        loop {
            if self.eat(')') {
                break;
            }
            let at = self.at;
            let rest = self.rest();
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let extent = rest[..digits]
                .parse::<usize>()
                .map_err(|_| format!("an extent expected at byte {at}, found {rest:.12?}"))?;
            self.at += digits;
            shape.push(extent);
            if !self.eat(',') {
                self.expect(')')?;
                if shape.len() == 1 {
                    // `(3)` is the integer 3 in Python, not a shape.
                    return Err(format!(
                        "the shape at byte {start} is no tuple: (N,) has a comma"
                    ));
                }
                break;
            }
        }
        Ok(shape)
    }
}

/// The bytes of the file `path`, which must be a regular file (a FIFO or a
/// device may never end, or never start: a FIFO without a writer would
/// block its reader), read up to the size it had when opened.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let cannot =
        |error: std::io::Error| Error::Io(format!("cannot read {}: {error}", path.display()));
    // Non-blocking, so that opening a FIFO with no writer returns: the
    // check below then refuses it (a regular file reads as ever).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    let metadata = file.metadata().map_err(cannot)?;
    if !metadata.is_file() {
        return Err(Error::Invalid(format!(
            "{} is not a regular file: an .npy file is read from one",
            path.display()
        )));
    }
    let size = metadata.len();
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
        .map_err(|_| Error::OutOfMemory(format!("{} bytes to read {}", size, path.display())))?;
    file.take(size.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > size {
        return Err(Error::Io(format!(
            "{} grew past its {size} bytes while it was read",
            path.display()
        )));
    }
    Ok(bytes)
}

pub fn read(path: &Path) -> Result<Array> {
    let bytes = read_bytes(path)?;
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
        // Not regular files: a FIFO without a writer (whose reader would
        // block) and a device are refused at once.
        let fifo = std::env::temp_dir().join(format!("hir-npy-fifo-{}", std::process::id()));
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let error = read(&fifo).unwrap_err().to_string();
        std::fs::remove_file(&fifo).unwrap();
        assert!(
            error.ends_with("is not a regular file: an .npy file is read from one"),
            "{error}"
        );
        let error = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(
            error,
            "/dev/zero is not a regular file: an .npy file is read from one"
        );
        let missing = read(Path::new("/nonexistent/a.npy")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("cannot read /nonexistent/a.npy")
        );
    }

    #[test]
    fn headers_are_read_as_strictly_as_numpy_reads_them() {
        let data = [0u8; 8];
        let error = |dict: &str| Array::from_npy(&file(dict, &data)).unwrap_err().to_string();
        // What NumPy writes, and other spacings and quotes it reads, pass.
        for dict in [
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
            "{\"shape\":(2,),\"descr\":\"<f4\",\"fortran_order\":False}   ",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2)}",
        ] {
            let array = Array::from_npy(&file(dict, &data)).unwrap();
            assert_eq!(array.len(), 2, "{dict}");
        }
        for (dict, why) in [
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), 'shape': (2,), }",
                "the key 'shape' appears twice",
            ),
            (
                "{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                "the key 'descr' appears twice",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'align': True, }",
                "an unknown key 'align'",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } trailing",
                "\" trailing\" after the end of the dict",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }{}",
                "\"{}\" after the end of the dict",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",
                "is no tuple",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
                "an extent expected",
            ),
            ("{'descr': '<f4', 'shape': (2,), }", "no 'fortran_order'"),
            (
                "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }",
                "True or False expected",
            ),
            (
                "{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }",
                "'}' expected",
            ),
            ("{'descr': '<f4", "does not end"),
        ] {
            let error = error(dict);
            assert!(error.contains(why), "{dict}: {error}");
            assert!(error.starts_with("not a supported .npy file: "), "{error}");
        }
        let mut version = file(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
            &data,
        );
        version[7] = 1;
        let error = Array::from_npy(&version).unwrap_err().to_string();
        assert!(error.contains("unknown version 1.1"), "{error}");
    }
}
