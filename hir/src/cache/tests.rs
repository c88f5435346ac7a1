//! The compile cache's tests: the key, where the environment puts the cache,
//! entries (a miss, a hit, corrupt ones, concurrent writers), and a program
//! JIT-compiled through it, then loaded from it.

use super::*;
use std::cell::Cell;
use std::sync::{Arc, Barrier};

/// A fresh directory of this test's own.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hir-cache-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn build() -> Build {
    Build {
        hir: "hir 0.1.0 /opt/hir/bin/hir-run 1000 1".into(),
        target: "LLVM 22.1.0 x86_64-unknown-linux-gnu znver4 +avx2".into(),
    }
}

/// The files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn the_key_is_a_sha256_of_all_its_parts() {
    let key = Key::new("func", "p2p=none", &build());
    assert_eq!(key, Key::new("func", "p2p=none", &build()));
    assert_eq!(key.to_string().len(), 64);
    assert!(key.to_string().bytes().all(|byte| byte.is_ascii_hexdigit()));
    let mut others = vec![
        Key::new("func ", "p2p=none", &build()),
        Key::new("func", "p2p=nccl", &build()),
        // A part's bytes moved to the next part: its length tells them apart.
        Key::new("funcp", "2p=none", &build()),
    ];
    let mut version = build();
    version.hir = "hir 0.2.0 /opt/hir/bin/hir-run 1000 1".into();
    others.push(Key::new("func", "p2p=none", &version));
    let mut rebuilt = build();
    rebuilt.hir = "hir 0.1.0 /opt/hir/bin/hir-run 1000 2".into();
    others.push(Key::new("func", "p2p=none", &rebuilt));
    let mut cpu = build();
    cpu.target = "LLVM 22.1.0 x86_64-unknown-linux-gnu skylake +avx2".into();
    others.push(Key::new("func", "p2p=none", &cpu));
    for (index, other) in others.iter().enumerate() {
        assert_ne!(*other, key, "variant {index}");
    }
}

#[test]
fn the_environment_selects_the_directory() {
    let cache = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(name, value)| (name.to_string(), OsString::from(value)))
            .collect();
        Cache::from_vars(|name| {
            vars.iter()
                .find(|(set, _)| set == name)
                .map(|(_, value)| value.clone())
        })
    };
    let home = ("HOME", "/home/u");
    assert_eq!(cache(&[home]), Cache::at("/home/u/.cache/hir"));
    assert_eq!(
        cache(&[home, ("XDG_CACHE_HOME", "/xdg")]),
        Cache::at("/xdg/hir")
    );
    assert_eq!(
        cache(&[home, ("XDG_CACHE_HOME", "relative")]),
        Cache::at("/home/u/.cache/hir")
    );
    assert_eq!(
        cache(&[home, ("XDG_CACHE_HOME", "/xdg"), (DIR_ENV, "/c")]),
        Cache::at("/c")
    );
    assert_eq!(
        cache(&[home, (DIR_ENV, "")]),
        Cache::at("/home/u/.cache/hir")
    );
    for off in ["0", "off", "false", "no"] {
        assert_eq!(
            cache(&[home, (DIR_ENV, "/c"), (ENABLE_ENV, off)]),
            Cache::disabled()
        );
    }
    assert_eq!(
        cache(&[(DIR_ENV, "/c"), (ENABLE_ENV, "1")]),
        Cache::at("/c")
    );
    assert_eq!(cache(&[]), Cache::disabled());
}

#[test]
fn a_stored_object_is_a_hit_and_others_miss() {
    let dir = scratch_dir("store");
    let cache = Cache::at(&dir);
    let key = Key::new("func", "p2p=none", &build());
    assert_eq!(cache.load(&key), None);
    let object = b"\x7fELF object".repeat(1000);
    cache.store(&key, &object).unwrap();
    assert_eq!(cache.load(&key).as_deref(), Some(object.as_slice()));
    assert_eq!(cache.load(&Key::new("func", "p2p=nccl", &build())), None);
    // Replacing an entry: the newer object.
    cache.store(&key, b"newer").unwrap();
    assert_eq!(cache.load(&key).as_deref(), Some(b"newer".as_slice()));
    assert_eq!(files(&dir), vec![key.file_name()]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_disabled_cache_keeps_nothing() {
    let cache = Cache::disabled();
    let key = Key::new("func", "", &build());
    cache.store(&key, b"object").unwrap();
    assert_eq!(cache.load(&key), None);
    assert_eq!(cache.dir(), None);
}

#[test]
fn a_corrupt_entry_is_a_miss() {
    let dir = scratch_dir("corrupt");
    let cache = Cache::at(&dir);
    let key = Key::new("func", "", &build());
    let object = b"object code".repeat(100);
    let entry = frame(&object);
    let path = dir.join(key.file_name());
    let mut flipped_payload = entry.clone();
    *flipped_payload.last_mut().unwrap() ^= 1;
    let mut flipped_checksum = entry.clone();
    flipped_checksum[HEADER - 1] ^= 1;
    let mut other_format = entry.clone();
    other_format[MAGIC.len()] ^= 1;
    let mut longer = entry.clone();
    longer.push(0);
    let corrupt: [(&str, &[u8]); 8] = [
        ("empty", &[]),
        ("header cut", &entry[..HEADER - 1]),
        ("object cut", &entry[..entry.len() - 1]),
        ("a byte more", &longer),
        ("payload changed", &flipped_payload),
        ("checksum changed", &flipped_checksum),
        ("another format", &other_format),
        ("no header", &object),
    ];
    fs::create_dir_all(&dir).unwrap();
    for (what, bytes) in corrupt {
        fs::write(&path, bytes).unwrap();
        assert_eq!(cache.load(&key), None, "{what}");
    }
    // A store replaces the corrupt entry.
    cache.store(&key, &object).unwrap();
    assert_eq!(cache.load(&key), Some(object));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn writers_of_one_key_at_once_all_succeed_and_leave_it_whole() {
    let dir = scratch_dir("race");
    let key = Key::new("func", "", &build());
    let object: Vec<u8> = (0..4 << 20).map(|index: u32| (index % 251) as u8).collect();
    let threads = 8;
    let start = Arc::new(Barrier::new(threads));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let start = start.clone();
            let (dir, key, object) = (&dir, &key, &object);
            scope.spawn(move || {
                let cache = Cache::at(dir);
                start.wait();
                for _ in 0..4 {
                    cache.store(key, object).unwrap();
                    // A reader between the writers sees the whole entry.
                    assert!(cache.load(key).as_ref() == Some(object));
                }
            });
        }
    });
    assert!(Cache::at(&dir).load(&key) == Some(object));
    // No writer's scratch file is left.
    assert_eq!(files(&dir), vec![key.file_name()]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn this_build_is_identified() {
    let build = Build::current().unwrap();
    assert!(
        build
            .hir
            .starts_with(concat!("hir ", env!("CARGO_PKG_VERSION"), " /"))
    );
    assert!(build.target.starts_with("LLVM 22."), "{}", build.target);
}

/// A runtime function the test program calls, to check that a loaded
/// object's external calls are resolved to the symbols given.
extern "C" fn hir_test_offset(value: i64) -> i64 {
    value + 1
}

/// A program already in the LLVM dialect: the entry stores
/// `hir_test_offset(41)` through its one argument.
const PROGRAM: &str = r#"
llvm.func @hir_test_offset(i64) -> i64
llvm.func @_mlir_ciface_answer(%out: !llvm.ptr) {
  %c = llvm.mlir.constant(41 : i64) : i64
  %r = llvm.call @hir_test_offset(%c) : (i64) -> i64
  llvm.store %r, %out : i64, !llvm.ptr
  llvm.return
}
"#;

/// Compiles PROGRAM through `cache` with `options`: whether it was lowered
/// (a miss), and what its entry returns.
fn compile_and_call(cache: &Cache, options: &str) -> (bool, i64) {
    let context = crate::context::registered_context();
    let mut module = Module::parse(&context, PROGRAM).unwrap();
    let lowered = Cell::new(false);
    let symbols = [(
        "hir_test_offset".to_string(),
        hir_test_offset as extern "C" fn(i64) -> i64 as *mut (),
    )];
    let engine = cache
        .jit(
            PROGRAM,
            options,
            &mut module,
            |_| {
                lowered.set(true);
                Ok(())
            },
            &symbols,
        )
        .unwrap();
    let entry = engine.lookup("_mlir_ciface_answer").unwrap();
    let mut result = 0i64;
    let mut out: *mut i64 = &mut result;
    let mut arguments: [*mut c_void; 1] = [(&raw mut out).cast()];
    // SAFETY: the entry takes one pointer to an i64, passed packed.
    unsafe { entry.call(arguments.as_mut_ptr()) };
    (lowered.get(), result)
}

#[test]
fn a_program_compiles_once_then_loads_from_the_cache() {
    let dir = scratch_dir("jit");
    let cache = Cache::at(&dir);
    assert_eq!(
        compile_and_call(&cache, "a"),
        (true, 42),
        "the first compile misses"
    );
    let entries = files(&dir);
    assert_eq!(entries.len(), 1, "one entry, no scratch file: {entries:?}");
    assert_eq!(
        compile_and_call(&cache, "a"),
        (false, 42),
        "the second hits"
    );
    assert_eq!(
        compile_and_call(&cache, "b"),
        (true, 42),
        "other options miss"
    );
    assert_eq!(files(&dir).len(), 2);

    // An entry that reads whole but is no object is a miss, and replaced.
    let key = Key::new(PROGRAM, "a", Build::current().unwrap());
    cache.store(&key, b"not an object file").unwrap();
    assert_eq!(compile_and_call(&cache, "a"), (true, 42));
    assert_eq!(compile_and_call(&cache, "a"), (false, 42));

    assert_eq!(compile_and_call(&Cache::disabled(), "a"), (true, 42));
    let _ = fs::remove_dir_all(&dir);
}
