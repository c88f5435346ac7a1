//! Compiles `csrc/exit.c`: `setjmp` returns twice, which Rust cannot call
//! soundly, so the jump back out of a failed rank's program is C.

fn main() {
    println!("cargo:rerun-if-changed=csrc/exit.c");
    cc::Build::new()
        .file("csrc/exit.c")
        .warnings_into_errors(true)
        .compile("hir_exit");
}
