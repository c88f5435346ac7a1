//! A job's `torch.distributed` store (a `torch.distributed.Store`: the
//! `TCPStore` of torchrun's agent or of `init_process_group`, under a
//! `PrefixStore`) as the runtime's [`KeyValueStore`], so that HIR's ranks
//! meet through the job's one rendezvous instead of a port of their own.
//!
//! Every call takes the GIL (the rank threads call in while the caller's
//! thread waits with it released); torch's store methods release it while
//! they wait on the network. A get polls `check` until its keys are there,
//! so that a failure another rank posts ends the wait at once instead of at
//! the timeout: torch's own `wait` cannot wait for "these keys, or that one".

use hir_runtime::bootstrap::{Got, KeyValueStore};
use hir_runtime::error::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::time::{Duration, Instant};

/// The key a failed rank writes: `RANK WHAT`, the first failure of the job.
const FAILED: &str = "failed";
/// The counter that decides which failure is the first.
const FAILURES: &str = "failures";
/// The longest pause between two looks at a missing key.
const MAX_POLL: Duration = Duration::from_millis(20);

pub struct TorchStore {
    store: Py<PyAny>,
    /// The store's type, for messages (`PrefixStore`).
    kind: String,
}

impl TorchStore {
    pub fn new(store: Bound<'_, PyAny>) -> PyResult<TorchStore> {
        let kind = store.get_type().name()?.to_string();
        Ok(TorchStore {
            store: store.unbind(),
            kind,
        })
    }

    /// Calls the store's `method`, an exception being the runtime's error.
    fn call<T>(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
        read: impl for<'py> FnOnce(Bound<'py, PyAny>) -> PyResult<T>,
    ) -> Result<T> {
        Python::attach(|py| {
            let args = args(py)?;
            let value = self.store.bind(py).call_method1(method, args)?;
            read(value)
        })
        .map_err(|error| Error::Io(format!("{} failed in {method}: {error}", self.describe())))
    }

    fn check(&self, keys: &[String]) -> Result<bool> {
        let keys = keys.to_vec();
        self.call(
            "check",
            |py| pyo3::types::PyTuple::new(py, [keys]),
            |value| value.extract(),
        )
    }

    fn get_one(&self, key: &str) -> Result<Vec<u8>> {
        self.call(
            "get",
            |py| pyo3::types::PyTuple::new(py, [key]),
            |value| Ok(value.cast::<PyBytes>()?.as_bytes().to_vec()),
        )
    }
}

impl KeyValueStore for TorchStore {
    fn describe(&self) -> String {
        format!("torch.distributed's store ({})", self.kind)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.call(
            "set",
            |py| {
                pyo3::types::PyTuple::new(
                    py,
                    [
                        key.into_pyobject(py)?.into_any(),
                        PyBytes::new(py, value).into_any(),
                    ],
                )
            },
            |_| Ok(()),
        )
    }

    fn get_or_missing(&self, keys: &[String], timeout: Duration) -> Result<Got> {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            if self.check(keys)? {
                let values = keys.iter().map(|key| self.get_one(key));
                return values.collect::<Result<_>>().map(Got::Values);
            }
            self.check_failed()?;
            let now = Instant::now();
            if now >= deadline {
                let mut missing = Vec::new();
                for key in keys {
                    if !self.check(std::slice::from_ref(key))? {
                        missing.push(key.clone());
                    }
                }
                return Ok(Got::Missing(missing));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    fn add(&self, key: &str, delta: i64) -> Result<i64> {
        self.call(
            "add",
            |py| {
                pyo3::types::PyTuple::new(
                    py,
                    [
                        key.into_pyobject(py)?.into_any(),
                        delta.into_pyobject(py)?.into_any(),
                    ],
                )
            },
            |value| value.extract(),
        )
    }

    fn delete(&self, keys: &[String]) -> Result<()> {
        for key in keys {
            self.call(
                "delete_key",
                |py| pyo3::types::PyTuple::new(py, [key.as_str()]),
                |_| Ok(()),
            )?;
        }
        Ok(())
    }

    fn post_failure(&self, rank: usize, op: &str, message: &str) -> Result<()> {
        if self.add(FAILURES, 1)? == 1 {
            let what = format!("failed in {op}: {message}");
            self.set(FAILED, format!("{rank} {what}").as_bytes())?;
        }
        Ok(())
    }

    fn check_failed(&self) -> Result<()> {
        if !self.check(&[FAILED.to_string()])? {
            return Ok(());
        }
        let failure = String::from_utf8_lossy(&self.get_one(FAILED)?).into_owned();
        let (rank, what) = failure.split_once(' ').unwrap_or(("?", &failure));
        match rank.parse() {
            Ok(rank) => Err(Error::Peer {
                rank,
                what: what.to_string(),
            }),
            Err(_) => Err(Error::Io(format!("a rank failed: {failure}"))),
        }
    }
}
