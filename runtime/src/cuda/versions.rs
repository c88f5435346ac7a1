//! What a benchmark records of the machine it ran on: the GPU, the driver's
//! CUDA version and the versions of the libraries the runtime loads.

use cudarc::driver::{result as cu, sys};

/// The GPU and software a cuda-backend run used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versions {
    /// The name of device 0, e.g. `NVIDIA H100 80GB HBM3`.
    pub gpu: String,
    /// The newest CUDA version the driver supports, e.g. `13.0`.
    pub driver_cuda: String,
    /// The CUDA runtime cuBLASLt was built against.
    pub cuda: String,
    pub cublaslt: String,
    /// `None` where `libnccl.so` is not on the library path.
    pub nccl: Option<String>,
    /// `None` where cuDNN 9 is not on the library path (attention then runs
    /// HIR's own kernels).
    pub cudnn: Option<String>,
}

/// `major.minor` of CUDA's `1000 * major + 10 * minor` encoding.
fn cuda_version(encoded: i64) -> String {
    format!("{}.{}", encoded / 1000, encoded % 1000 / 10)
}

/// `major.minor.patch` of NCCL's and cuBLASLt's `10000 * major + 100 * minor
/// + patch` encoding (NCCL 2.x since 2.9; cuBLASLt 11 and later).
fn library_version(encoded: i64) -> String {
    format!(
        "{}.{}.{}",
        encoded / 10000,
        encoded % 10000 / 100,
        encoded % 100
    )
}

/// The versions of this machine; an error if the driver or cuBLASLt cannot
/// be loaded or asked (see [`super::probe`]).
pub fn versions() -> Result<Versions, String> {
    super::probe()?;
    let device = cu::device::get(0).map_err(|error| format!("cuDeviceGet: {error}"))?;
    let gpu = cu::device::get_name(device).map_err(|error| format!("cuDeviceGetName: {error}"))?;
    let mut driver = 0;
    // SAFETY: the driver is loaded and initialised (`probe`); it writes one int.
    let status = unsafe { sys::cuDriverGetVersion(&mut driver) };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuDriverGetVersion: {status:?}"));
    }
    // SAFETY: cuBLASLt is on the library path (`probe`); both calls only
    // return constants of the library.
    let (cublaslt, cudart) = unsafe {
        (
            cudarc::cublaslt::sys::cublasLtGetVersion(),
            cudarc::cublaslt::sys::cublasLtGetCudartVersion(),
        )
    };
    let nccl = super::nccl_present()
        .then(cudarc::nccl::result::get_nccl_version)
        .and_then(Result::ok)
        .map(|version| library_version(i64::from(version)));
    Ok(Versions {
        gpu,
        driver_cuda: cuda_version(i64::from(driver)),
        cuda: cuda_version(cudart as i64),
        cublaslt: library_version(cublaslt as i64),
        nccl,
        cudnn: super::cudnn::available()
            .ok()
            .map(super::cudnn::version_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_decode() {
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12080), "12.8");
        assert_eq!(library_version(22703), "2.27.3");
        assert_eq!(library_version(130100), "13.1.0");
    }
}
