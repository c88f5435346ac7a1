//! Builds the C++ half of the dialects (ODS, verifiers, C API, shims and the
//! mlir-opt plugin) once, with CMake, and links the static archive. The
//! plugin is copied next to the tools so that lit and users find it.

use std::{env, fs, path::PathBuf};

fn main() {
    let crate_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = crate_dir
        .parent()
        .expect("the dialects crate lives in the workspace root");
    for path in [
        "CMakeLists.txt",
        "dialects/CMakeLists.txt",
        "dialects/HIRConfig.cmake.in",
        "dialects/fusion",
        "dialects/host",
        "dialects/comm",
        "dialects/common",
        "dialects/capi",
        "dialects/plugin",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");

    // OUT_DIR is <target>/<profile>/build/hir-dialects-<hash>/out.
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let profile_dir = out_dir
        .ancestors()
        .nth(3)
        .expect("OUT_DIR is inside the target directory");

    let llvm_prefix = env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    let install = cmake::Config::new(root)
        .generator("Ninja")
        .profile("Release")
        .define("MLIR_DIR", format!("{llvm_prefix}/lib/cmake/mlir"))
        // What `cmake --install` of this build installs as lib/libhir_runtime.so:
        // crate runtime-so's output, built by the same cargo build.
        .define("HIR_RUNTIME_LIBRARY", profile_dir.join("libhir_runtime.so"))
        .build();

    println!(
        "cargo:rustc-link-search=native={}",
        install.join("lib").display()
    );
    println!("cargo:rustc-link-lib=static=hir_dialects");
    println!("cargo:include={}", install.join("include").display());

    fs::copy(
        install.join("lib/libHIRDialects.so"),
        profile_dir.join("libHIRDialects.so"),
    )
    .expect("copy the dialect plugin next to the tools");
}
