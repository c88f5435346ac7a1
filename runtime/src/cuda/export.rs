//! What a rank's `share_mem_handle` gives its peers for `cuda` transfers
//! (`ipc.rs`), and how they use it: the allocation the shared buffer lies
//! in, known by the driver's buffer id; the [`Export`] a rank sends (its
//! allocation, flag array and mailbox, reachable by pointer or by IPC
//! handle); and a peer's view translated through the mapping made of it.

use super::Check;
use crate::error::{Error, Result};
use crate::memref::View;
use cudarc::driver::sys;

/// A byte range `[start, end)` of one rank's device memory.
pub(super) type Region = (usize, usize);

pub(super) fn overlap(a: Region, b: Region) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// A device allocation: where it lies, and the driver's id for it, which
/// (unlike its address) no later allocation of the process takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Allocation {
    pub(super) region: Region,
    pub(super) id: u64,
}

/// A peer's allocation and where it is mapped in this rank's address space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Mapping {
    pub(super) remote: Allocation,
    pub(super) local: usize,
}

/// Rewrites a peer's `view` into this rank's address space, if it lies
/// within one mapping.
pub(super) fn translate(mappings: &[Mapping], view: &View) -> Option<View> {
    let footprint = view.footprint();
    let (start, end) = (footprint.start, footprint.end);
    mappings
        .iter()
        .find(|m| m.remote.region.0 <= start && end <= m.remote.region.1)
        .map(|m| View {
            ptr: (m.local + (view.ptr as usize - m.remote.region.0)) as *mut u8,
            ..view.clone()
        })
}

/// The allocation among `allocations` that holds `view`, by address.
pub(super) fn holding(allocations: &[Allocation], view: &View) -> Option<Allocation> {
    let footprint = view.footprint();
    allocations
        .iter()
        .find(|a| a.region.0 <= footprint.start && footprint.end <= a.region.1)
        .copied()
}

/// How the peers reach a rank's memory.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Reach {
    /// In this process: its pointers as they are, and the context to enable
    /// peer access to.
    Context(u64),
    /// From other processes: the IPC handles of the buffer's allocation and
    /// of the flag array.
    Handles { buffer: [u8; 64], flags: [u8; 64] },
}

/// What a rank brings to a share: the shared buffer's allocation, its flag
/// array for the team and, on the team's first share, the name of its
/// mailbox (empty afterwards).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Export {
    pub(super) base: u64,
    pub(super) size: u64,
    pub(super) id: u64,
    pub(super) flags: u64,
    pub(super) reach: Reach,
    pub(super) mailbox: String,
}

impl Export {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut bytes: Vec<u8> = [self.base, self.size, self.id, self.flags]
            .iter()
            .flat_map(|word| word.to_le_bytes())
            .collect();
        match &self.reach {
            Reach::Context(ctx) => bytes.extend(ctx.to_le_bytes()),
            Reach::Handles { buffer, flags } => {
                bytes.extend(buffer);
                bytes.extend(flags);
            }
        }
        bytes.extend(self.mailbox.as_bytes());
        bytes
    }

    pub(super) fn allocation(&self) -> Allocation {
        Allocation {
            region: (self.base as usize, (self.base + self.size) as usize),
            id: self.id,
        }
    }

    pub(super) fn decode(bytes: &[u8], same_process: bool) -> Result<Export> {
        let want = if same_process { 40 } else { 32 + 128 };
        if bytes.len() < want || bytes.len() > want + MAX_NAME {
            return Err(Error::Invalid(format!(
                "a shared memory export has {} bytes, expected {want} and a mailbox name of at \
                 most {MAX_NAME}",
                bytes.len()
            )));
        }
        // Empty, or a POSIX shared memory name: `/` and printable ASCII.
        let mailbox = std::str::from_utf8(&bytes[want..])
            .ok()
            .filter(|name| match name.strip_prefix('/') {
                Some(rest) => {
                    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_graphic() && b != b'/')
                }
                None => name.is_empty(),
            })
            .ok_or_else(|| {
                Error::Invalid("a shared memory export has a malformed mailbox name".into())
            })?
            .to_string();
        let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
        let reach = if same_process {
            Reach::Context(word(4))
        } else {
            Reach::Handles {
                buffer: bytes[32..96].try_into().unwrap(),
                flags: bytes[96..160].try_into().unwrap(),
            }
        };
        Ok(Export {
            base: word(0),
            size: word(1),
            id: word(2),
            flags: word(3),
            reach,
            mailbox,
        })
    }
}

/// The longest mailbox name an export carries (`NAME_MAX`).
pub(super) const MAX_NAME: usize = 255;

/// The allocation `buffer` lies in.
pub(super) fn allocation(buffer: &View) -> Result<Allocation> {
    let (mut base, mut size) = (0, 0);
    // SAFETY: only queries the driver about an address.
    unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, buffer.ptr as u64) }
        .result()
        .check(&format!(
            "finding the allocation of buffer {:p} (cuMemGetAddressRange): \
             share_mem_handle takes device memory from alloc",
            buffer.ptr
        ))?;
    Ok(Allocation {
        region: (base as usize, (base as usize) + size),
        id: buffer_id(base)?,
    })
}

/// The driver's id of the allocation holding `address`.
pub(super) fn buffer_id(address: u64) -> Result<u64> {
    let mut id = 0u64;
    // SAFETY: only queries the driver about an address; the attribute is an
    // unsigned long long.
    unsafe {
        sys::cuPointerGetAttribute(
            (&raw mut id).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_BUFFER_ID,
            address,
        )
    }
    .result()
    .check(&format!(
        "finding the allocation id of {address:#x} (cuPointerGetAttribute)"
    ))?;
    Ok(id)
}

pub(super) fn ipc_handle(base: u64) -> Result<[u8; 64]> {
    let mut handle = std::mem::MaybeUninit::<sys::CUipcMemHandle>::uninit();
    // SAFETY: `base` starts a cuMemAlloc allocation.
    unsafe { sys::cuIpcGetMemHandle(handle.as_mut_ptr(), base) }
        .result()
        .check("exporting memory (cuIpcGetMemHandle)")?;
    // SAFETY: initialized by the successful call.
    Ok(unsafe { handle.assume_init() }
        .reserved
        .map(|byte| byte as u8))
}
