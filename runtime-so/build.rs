// The library's SONAME is its file name, so that a program linked against
// the installed libhir_runtime.so records that name (not a build path).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhir_runtime.so");
}
