//! The compile cache: the object code MLIR's ExecutionEngine compiled a
//! lowered program to, kept on disk so that a later compile of the same
//! program (another run, or another rank's process of this one) loads it
//! instead of lowering and compiling it again, as torch.compile's and
//! nvFuser's caches do.
//!
//! An entry is keyed by the SHA-256 of all the code depends on: the
//! program's text, the lowering options' text, HIR's build (its version and
//! the binary its passes and runtime are linked into) and the target LLVM
//! compiles for (LLVM's version, the host's triple, CPU and CPU features).
//! It lives in `HIR_CACHE_DIR`, else `$XDG_CACHE_HOME/hir`, else
//! `~/.cache/hir`, as `<key>.hirobj`; `HIR_CACHE=0` turns the cache off.
//!
//! Ranks that compile the same program at once each write a file of their
//! own and rename it into place, which is atomic: a reader sees a whole
//! entry or none, and the last writer wins with the same bytes. An entry
//! carries its length and checksum, so that a truncated or corrupt one is a
//! miss (which the compile that follows overwrites), never a crash.

use crate::jit::Engine;
use anyhow::Result;
use melior::ir::Module;
use sha2::{Digest, Sha256};
use std::ffi::{CStr, OsString, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::{fs, io};

/// The variable naming the cache's directory.
pub const DIR_ENV: &str = "HIR_CACHE_DIR";

/// The variable that turns the cache off: `0`, `off`, `false` or `no`.
pub const ENABLE_ENV: &str = "HIR_CACHE";

/// Changes with the key's parts or the entries' layout, so that no HIR reads
/// an entry another wrote differently.
const FORMAT: u32 = 1;

/// An entry's first bytes.
const MAGIC: [u8; 8] = *b"HIRCACHE";

/// The magic, the format, the object's length and its SHA-256.
const HEADER: usize = MAGIC.len() + 4 + 8 + 32;

/// Why the cache could not be used; the compile goes on without it.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("HIR's build cannot be identified: {0}")]
    Build(String),
    #[error("the compiled object cannot be had: {0:#}")]
    Object(anyhow::Error),
}

/// Where compiled programs are kept, if anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    /// The cache the environment selects (see the module's doc).
    pub fn from_env() -> Cache {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// The cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache {
            dir: Some(dir.into()),
        }
    }

    /// No cache: every compile compiles.
    pub fn disabled() -> Cache {
        Cache { dir: None }
    }

    /// The directory entries live in; none when the cache is off.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The cache `var` (the environment) selects; an empty variable is an
    /// unset one, and a relative `XDG_CACHE_HOME` is ignored, as the XDG
    /// specification says.
    fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Cache {
        let set = |name: &str| var(name).filter(|value| !value.is_empty());
        if set(ENABLE_ENV)
            .is_some_and(|value| matches!(value.to_str(), Some("0" | "off" | "false" | "no")))
        {
            return Cache::disabled();
        }
        let dir = set(DIR_ENV)
            .map(PathBuf::from)
            .or_else(|| {
                set("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .filter(|dir| dir.is_absolute())
                    .map(|dir| dir.join("hir"))
            })
            .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".cache/hir")));
        Cache { dir }
    }

    /// The object stored under `key`, or none: no cache, no entry, or an
    /// entry that does not read whole.
    pub fn load(&self, key: &Key) -> Option<Vec<u8>> {
        let path = self.dir.as_ref()?.join(key.file_name());
        let entry = match fs::read(&path) {
            Ok(entry) => entry,
            Err(error) => {
                if error.kind() != io::ErrorKind::NotFound {
                    tracing::debug!(path = %path.display(), %error, "compile cache entry unreadable");
                }
                return None;
            }
        };
        let object = unframe(&entry);
        if object.is_none() {
            tracing::debug!(path = %path.display(), bytes = entry.len(), "compile cache entry corrupt");
        }
        object
    }

    /// Stores `object` under `key`, replacing any entry there at once; does
    /// nothing without a cache.
    pub fn store(&self, key: &Key, object: &[u8]) -> Result<(), CacheError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let io = |what, path: &Path| {
            let path = path.to_owned();
            move |source| CacheError::Io { what, path, source }
        };
        fs::create_dir_all(dir).map_err(io("creating the cache directory", dir))?;
        let scratch = dir.join(scratch_name(key, "tmp"));
        let path = dir.join(key.file_name());
        fs::write(&scratch, frame(object))
            .map_err(io("writing", &scratch))
            .and_then(|()| fs::rename(&scratch, &path).map_err(io("renaming into", &path)))
            .inspect_err(|_| {
                // What was written of it is no entry; a failure to remove it
                // leaves a file no lookup reads.
                let _ = fs::remove_file(&scratch);
            })
    }

    /// `module` JIT-compiled: loaded from the cache when it holds the
    /// program `source` lowered with `options` (the text of the options it
    /// is lowered with); else lowered by `lower`, compiled, and stored. Its
    /// external calls are resolved to `symbols`. On a hit `module` is left
    /// as it is; an entry that does not load is a miss; a cache that does
    /// not work is logged and compiled around.
    pub fn jit<'c>(
        &self,
        source: &str,
        options: &str,
        module: &mut Module<'c>,
        lower: impl FnOnce(&mut Module<'c>) -> Result<()>,
        symbols: &[(String, *mut ())],
    ) -> Result<Engine> {
        let cached = self.dir.as_ref().and_then(|dir| match Build::current() {
            Ok(build) => Some((dir, Key::new(source, options, build))),
            Err(error) => {
                tracing::warn!(%error, "compile cache off");
                None
            }
        });
        let Some((dir, key)) = cached else {
            lower(module)?;
            return Engine::new(module, symbols);
        };
        if let Some(object) = self.load(&key) {
            match Engine::load(&object, symbols) {
                Ok(engine) => {
                    tracing::debug!(%key, bytes = object.len(), "compile cache hit");
                    return Ok(engine);
                }
                Err(error) => {
                    tracing::warn!(%key, error = %format!("{error:#}"), "compile cache entry does not load, compiling")
                }
            }
        } else {
            tracing::debug!(%key, "compile cache miss");
        }
        lower(module)?;
        let (engine, stored) = self.compile_and_store(dir, &key, module, symbols)?;
        match stored {
            Ok(bytes) => tracing::debug!(%key, bytes, "compile cache stored"),
            Err(error) => tracing::warn!(%key, %error, "compile cache not stored"),
        }
        Ok(engine)
    }

    /// Compiles the lowered `module` and stores its object under `key` in
    /// `dir` (the cache's): the engine, and the object's size or why it was
    /// not stored.
    fn compile_and_store(
        &self,
        dir: &Path,
        key: &Key,
        module: &Module,
        symbols: &[(String, *mut ())],
    ) -> Result<(Engine, Result<usize, CacheError>)> {
        // MLIR dumps the object to a file: one of this compile's own.
        if let Err(source) = fs::create_dir_all(dir) {
            let error = CacheError::Io {
                what: "creating the cache directory",
                path: dir.to_owned(),
                source,
            };
            return Ok((Engine::new(module, symbols)?, Err(error)));
        }
        let scratch = dir.join(scratch_name(key, "o"));
        let (engine, object) = Engine::new_with_object(module, symbols, &scratch)?;
        let stored = object
            .map_err(CacheError::Object)
            .and_then(|object| self.store(key, &object).map(|()| object.len()));
        Ok((engine, stored))
    }
}

/// An entry's name: the SHA-256, in hex, of what the compiled code depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key(String);

impl Key {
    /// The key of program `source` lowered with `options` by `build`.
    pub fn new(source: &str, options: &str, build: &Build) -> Key {
        let mut hash = Sha256::new();
        let format = FORMAT.to_string();
        for part in [&format, source, options, &build.hir, &build.target] {
            // Each part with its length, so that different parts never hash
            // the same bytes.
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        Key(hex(&hash.finalize()))
    }

    fn file_name(&self) -> String {
        format!("{}.hirobj", self.0)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the compiled code depends on besides the program and its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// HIR's version and the binary it is linked into (its path, size and
    /// modification time), which changes with every build of its passes,
    /// its runtime or LLVM.
    pub hir: String,
    /// LLVM's version and the host target its JIT compiles for.
    pub target: String,
}

impl Build {
    /// This process's build, found once.
    pub fn current() -> Result<&'static Build, CacheError> {
        static BUILD: OnceLock<Result<Build, String>> = OnceLock::new();
        BUILD
            .get_or_init(|| {
                Ok(Build {
                    hir: format!("hir {} {}", env!("CARGO_PKG_VERSION"), binary()?),
                    target: host_target(),
                })
            })
            .as_ref()
            .map_err(|error| CacheError::Build(error.clone()))
    }
}

/// The binary HIR's code is in (the executable, or the shared object of a
/// Python extension), as its path, size and modification time.
fn binary() -> Result<String, String> {
    static ANCHOR: u8 = 0;
    // SAFETY: all-zero is a valid Dl_info (null pointers).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads the address and fills `info`.
    let found = unsafe { libc::dladdr((&raw const ANCHOR).cast::<c_void>(), &mut info) };
    let named = (found != 0 && !info.dli_fname.is_null())
        // SAFETY: dladdr's file name is a C string that lives as long as
        // the object is loaded, which holds this code.
        .then(|| {
            PathBuf::from(
                unsafe { CStr::from_ptr(info.dli_fname) }
                    .to_string_lossy()
                    .as_ref(),
            )
        })
        .filter(|path| path.is_absolute());
    // The executable's own name is argv[0], maybe relative: its path is
    // /proc/self/exe's.
    let path = match named {
        Some(path) => path,
        None => std::env::current_exe()
            .map_err(|error| format!("no path of the executable: {error}"))?,
    };
    let metadata = fs::metadata(&path).map_err(|error| format!("{}: {error}", path.display()))?;
    let modified = metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .ok_or_else(|| format!("{}: no modification time", path.display()))?;
    Ok(format!(
        "{} {} {}",
        path.display(),
        metadata.len(),
        modified.as_nanos()
    ))
}

/// The target the ExecutionEngine compiles for on this host.
fn host_target() -> String {
    let mut text = String::new();
    // SAFETY: `collect` appends to the String passed as user data.
    unsafe { hir_dialects::ffi::hirJitHostTarget(Some(collect), (&raw mut text).cast()) };
    text
}

unsafe extern "C" fn collect(part: mlir_sys::MlirStringRef, user_data: *mut c_void) {
    // SAFETY: the caller passes the String it gave as user data, and a part
    // of `length` bytes at `data`.
    let (text, bytes) = unsafe {
        (
            &mut *user_data.cast::<String>(),
            std::slice::from_raw_parts(part.data.cast::<u8>(), part.length),
        )
    };
    text.push_str(&String::from_utf8_lossy(bytes));
}

/// A file name no other writer uses: the key, this process and a count.
fn scratch_name(key: &Key, extension: &str) -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    format!(
        ".{key}.{}.{}.{extension}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// An entry: the header, then the object.
fn frame(object: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(HEADER + object.len());
    entry.extend_from_slice(&MAGIC);
    entry.extend_from_slice(&FORMAT.to_le_bytes());
    entry.extend_from_slice(&(object.len() as u64).to_le_bytes());
    entry.extend_from_slice(&Sha256::digest(object));
    entry.extend_from_slice(object);
    entry
}

/// The object of an entry whose header matches it, or none.
fn unframe(entry: &[u8]) -> Option<Vec<u8>> {
    let (header, object) = entry.split_at_checked(HEADER)?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (format, rest) = rest.split_at(4);
    let (length, checksum) = rest.split_at(8);
    let whole = magic == MAGIC
        && format == FORMAT.to_le_bytes()
        && length == (object.len() as u64).to_le_bytes()
        && checksum == Sha256::digest(object).as_slice();
    whole.then(|| object.to_vec())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests;
