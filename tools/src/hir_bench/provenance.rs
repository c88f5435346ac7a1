//! Where a benchmark's numbers come from: the commit, the date, the backend,
//! and on the cuda backend the GPU, the driver, CUDA, NCCL and cuBLASLt, so
//! that every JSON and CSV says what made it.

use crate::cli::Run;
use hir_runtime::Backend;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// `git describe` of the build (`-dirty` for uncommitted changes).
    pub commit: &'static str,
    /// When the report was written, UTC (RFC 3339).
    pub date: String,
    pub backend: &'static str,
    pub devices: usize,
    pub dtype: &'static str,
    /// The cuda backend's GPU and software; `None` on the cpu backend.
    pub gpu: Option<String>,
    pub driver_cuda: Option<String>,
    pub cuda: Option<String>,
    pub nccl: Option<String>,
    pub cublaslt: Option<String>,
}

impl Provenance {
    /// The provenance of `run`, as of now.
    pub fn of(run: &Run) -> Provenance {
        Provenance::new(run.backend, run.devices, run.dtype.mlir())
    }

    /// The provenance of a run on `devices` ranks of `backend`, as of now.
    pub fn new(backend: Backend, devices: usize, dtype: &'static str) -> Provenance {
        let versions = match backend {
            Backend::Cuda => hir_runtime::cuda::versions().ok(),
            Backend::Cpu => None,
        };
        Provenance {
            commit: env!("HIR_COMMIT"),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            backend: backend.name(),
            devices,
            dtype,
            gpu: versions.as_ref().map(|v| v.gpu.clone()),
            driver_cuda: versions.as_ref().map(|v| v.driver_cuda.clone()),
            cuda: versions.as_ref().map(|v| v.cuda.clone()),
            nccl: versions.as_ref().and_then(|v| v.nccl.clone()),
            cublaslt: versions.as_ref().map(|v| v.cublaslt.clone()),
        }
    }

    /// One line for a report: "built from C, run D on GPU (versions)".
    pub fn line(&self) -> String {
        format!(
            "built from {}, run {}{}",
            self.commit,
            self.date,
            match &self.gpu {
                Some(gpu) => format!(
                    " on {gpu} (driver CUDA {}, CUDA {}, NCCL {}, cuBLASLt {})",
                    self.driver_cuda.as_deref().unwrap_or("?"),
                    self.cuda.as_deref().unwrap_or("?"),
                    self.nccl.as_deref().unwrap_or("not loaded"),
                    self.cublaslt.as_deref().unwrap_or("?")
                ),
                None => String::new(),
            }
        )
    }

    /// The CSV columns this adds before each row's own.
    pub const CSV_HEADER: &'static str =
        "commit,date,backend,devices,dtype,gpu,driver_cuda,cuda,nccl,cublaslt";

    /// Its values as CSV fields (none contains a comma: a GPU name with one
    /// has it replaced).
    pub fn csv(&self) -> String {
        let field = |value: &Option<String>| value.as_deref().unwrap_or("").replace(',', ";");
        format!(
            "{},{},{},{},{},{},{},{},{},{}",
            self.commit,
            self.date,
            self.backend,
            self.devices,
            self.dtype,
            field(&self.gpu),
            field(&self.driver_cuda),
            field(&self.cuda),
            field(&self.nccl),
            field(&self.cublaslt)
        )
    }
}
