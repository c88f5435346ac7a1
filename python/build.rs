//! Links the extension so that the wheel is manylinux_2_28: loadable on
//! glibc 2.28 and later though it is built on Debian 12 (glibc 2.36) with
//! Debian's static LLVM. libstdc++, zlib and zstd are linked statically (the
//! policy allows GLIBCXX_3.4.24 at most, GCC 12's is 3.4.30, and no
//! libzstd); glibc symbols newer than 2.28 are sent by `--wrap` to their old
//! versions or to stand-ins (glibc_compat.c). maturin's audit
//! (pyproject.toml) and `auditwheel show` in `scripts/python.sh` check it.

use std::{env, fmt::Write, fs, path::PathBuf, process::Command};

/// Symbols whose old version glibc 2.36 still has: (name, that version).
/// Before glibc 2.34 the pthread, dl and shm functions lived in libpthread,
/// libdl and librt, which the extension therefore also needs.
const REDIRECTS: &[(&str, &str)] = &[
    ("exp", "GLIBC_2.2.5"),
    ("exp2", "GLIBC_2.2.5"),
    ("log", "GLIBC_2.2.5"),
    ("log2", "GLIBC_2.2.5"),
    ("pow", "GLIBC_2.2.5"),
    ("dladdr", "GLIBC_2.2.5"),
    ("dlclose", "GLIBC_2.2.5"),
    ("dlerror", "GLIBC_2.2.5"),
    ("dlopen", "GLIBC_2.2.5"),
    ("dlsym", "GLIBC_2.2.5"),
    ("shm_open", "GLIBC_2.2.5"),
    ("shm_unlink", "GLIBC_2.2.5"),
    ("pthread_attr_getguardsize", "GLIBC_2.2.5"),
    ("pthread_attr_getstack", "GLIBC_2.2.5"),
    ("pthread_attr_setstacksize", "GLIBC_2.2.5"),
    ("pthread_create", "GLIBC_2.2.5"),
    ("pthread_detach", "GLIBC_2.2.5"),
    ("pthread_getattr_np", "GLIBC_2.2.5"),
    ("pthread_getspecific", "GLIBC_2.2.5"),
    ("pthread_join", "GLIBC_2.2.5"),
    ("pthread_key_create", "GLIBC_2.2.5"),
    ("pthread_key_delete", "GLIBC_2.2.5"),
    ("pthread_once", "GLIBC_2.2.5"),
    ("pthread_rwlock_rdlock", "GLIBC_2.2.5"),
    ("pthread_rwlock_unlock", "GLIBC_2.2.5"),
    ("pthread_rwlock_wrlock", "GLIBC_2.2.5"),
    ("pthread_setname_np", "GLIBC_2.12"),
    ("pthread_setspecific", "GLIBC_2.2.5"),
    ("pthread_sigmask", "GLIBC_2.2.5"),
];

/// Symbols with no old version, defined in glibc_compat.c.
const REPLACED: &[&str] = &[
    "stat",
    "fstat",
    "lstat",
    "stat64",
    "fstat64",
    "lstat64",
    "mknod",
    "gettid",
    "arc4random",
    "mallinfo2",
    "__libc_single_threaded",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=glibc_compat.c");
    // The versions above are x86_64's; elsewhere the extension links as is.
    let target = env::var("TARGET").expect("cargo sets TARGET");
    if target != "x86_64-unknown-linux-gnu" {
        return;
    }
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let mut redirects = String::new();
    for (name, version) in REDIRECTS {
        writeln!(
            redirects,
            "__asm__(\".pushsection .text\\n.symver hir_old_{name}, {name}@{version}\\n\
             .globl __wrap_{name}\\n.hidden __wrap_{name}\\n.type __wrap_{name}, @function\\n\
             __wrap_{name}: jmp hir_old_{name}@PLT\\n.size __wrap_{name}, . - __wrap_{name}\\n\
             .popsection\");"
        )
        .expect("write to a String");
    }
    let redirects_c = out_dir.join("glibc_redirects.c");
    fs::write(&redirects_c, redirects).expect("write glibc_redirects.c");
    // Whole archive: the wrapped references come from archives linked after it.
    cc::Build::new()
        .file("glibc_compat.c")
        .file(&redirects_c)
        .warnings_into_errors(true)
        .link_lib_modifier("+whole-archive")
        .compile("hir_glibc_compat");

    let wraps: Vec<String> = REDIRECTS
        .iter()
        .map(|(name, _)| *name)
        .chain(REPLACED.iter().copied())
        .map(|name| format!("--wrap={name}"))
        .collect();
    println!("cargo:rustc-cdylib-link-arg=-Wl,{}", wraps.join(","));
    // glibc 2.28 keeps the old pthread, dl and shm symbols in these three.
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--push-state,--no-as-needed,\
         -l:libpthread.so.0,-l:libdl.so.2,-l:librt.so.1,--pop-state"
    );

    // mlir-sys asks for -lstdc++, -lz and -lzstd: a search directory that
    // holds only their static archives, ahead of the system's, makes the
    // linker take those.
    let static_dir = out_dir.join("static-libs");
    fs::create_dir_all(&static_dir).expect("create static-libs");
    let compiler = cc::Build::new().cpp(true).get_compiler();
    for archive in ["libstdc++.a", "libz.a", "libzstd.a"] {
        let output = Command::new(compiler.path())
            .arg(format!("-print-file-name={archive}"))
            .output()
            .expect("run the C++ compiler");
        let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        assert!(
            path.is_absolute() && path.exists(),
            "{archive} not found (scripts/setup.sh installs it)"
        );
        let link = static_dir.join(archive);
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(&path, &link).expect("link a static archive");
    }
    println!("cargo:rustc-link-search=native={}", static_dir.display());
}
