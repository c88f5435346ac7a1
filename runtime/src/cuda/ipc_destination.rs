//! Where a `cuda` receive's buffer is, as its sender needs it: the words a
//! receiver leaves in its mailbox (`mailbox.rs`) for the sender of
//! `ipc.rs`.

use super::axes::coalesce;
use super::kernels::MAX_RANK;
use crate::error::{Error, Result};
use crate::memref::View;
use hir_abi::DType;

/// A receive's buffer as its sender needs it, in the receiver's address
/// space. Encoded as `u64` words, `dtype, ptr, rank`, then the sizes and
/// strides: at most [`super::mailbox::WORDS`].
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Destination(pub View);

impl Destination {
    /// `view`, its axes merged where they can be if it has more than the
    /// mailbox holds.
    pub fn of(view: &View) -> Result<Destination> {
        if view.rank() <= MAX_RANK {
            return Ok(Destination(view.clone()));
        }
        let (sizes, strides) = coalesce(&view.sizes, std::slice::from_ref(&view.strides));
        if sizes.len() > MAX_RANK {
            return Err(Error::Invalid(format!(
                "a cuda recv buffer of {} non-mergeable axes exceeds the {MAX_RANK} a cuda \
                 transfer takes",
                sizes.len()
            )));
        }
        Ok(Destination(View {
            sizes: sizes.into(),
            strides: strides.into_iter().next().unwrap_or_default().into(),
            ..view.clone()
        }))
    }

    pub fn encode(&self) -> Vec<u64> {
        let view = &self.0;
        let dtype = DType::ALL.iter().position(|&d| d == view.dtype).unwrap();
        [dtype as u64, view.ptr as u64, view.rank() as u64]
            .into_iter()
            .chain(view.sizes.iter().chain(&view.strides).map(|&x| x as u64))
            .collect()
    }

    pub fn decode(words: &[u64]) -> Result<Destination> {
        let malformed = || Error::Invalid("a malformed receive destination".into());
        let (&[dtype, ptr, rank], rest) = words.split_first_chunk::<3>().ok_or_else(malformed)?;
        if usize::try_from(rank).ok() != Some(rest.len() / 2) || rest.len() % 2 != 0 {
            return Err(malformed());
        }
        let rank = rest.len() / 2;
        let dtype = *DType::ALL.get(dtype as usize).ok_or_else(malformed)?;
        let field = |range: std::ops::Range<usize>| {
            rest[range]
                .iter()
                .map(|&x| usize::try_from(x).map_err(|_| malformed()))
                .collect::<Result<Vec<usize>>>()
        };
        Ok(Destination(View {
            dtype,
            ptr: usize::try_from(ptr).map_err(|_| malformed())? as *mut u8,
            sizes: field(0..rank)?.into(),
            strides: field(rank..2 * rank)?.into(),
        }))
    }
}
