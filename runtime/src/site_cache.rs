//! The caching policy both backends' allocators share: a stream-ordered
//! cache of blocks per (allocation site, size). `alloc` hands out a block
//! nobody holds, so a `host.alloc` inside a loop gets a buffer of its own in
//! every iteration that overlaps another; `dealloc` returns it with the
//! backend's marks of the work enqueued on it so far ([`Memory::Marks`]:
//! events on the streams that used it), and the block is handed out again
//! only behind those marks: the caller makes the stream current at `alloc`
//! wait for them (the buffer is ready on that stream; work on other streams
//! is ordered after it by the program's forks and joins).
//!
//! Which block a call gets depends only on the sequence of calls, never on
//! how far the streams are: IPC handles and NCCL registrations are cached by
//! buffer, so every rank must get the same block at the same call (a rank
//! that missed the cache would exchange handles its peers do not). A site
//! therefore keeps its blocks and takes, in this order:
//!
//! 1. the block freed last on the calling stream (stream order alone makes
//!    it safe, so the waits cost nothing: a loop whose iterations run on a
//!    pool of streams reuses each stream's block, and keeps its overlap);
//! 2. once the site has as many blocks as the rank has streams, the block
//!    freed longest ago on another stream (the calling stream waits for it);
//! 3. a new block (a device allocation: at most one per stream and site in
//!    a loop, never one per iteration).
//!
//! Memory goes back to the system only when the allocator drops, after
//! every stream has drained. Every block handed out is recorded in the
//! rank's [`Allocations`], which the entries check views against, and
//! forgotten when it is returned: a view of a freed buffer is an error.

use crate::bounds::Allocations;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::Arc;

/// Where a backend's buffers come from.
pub(crate) trait Memory {
    /// What a freed block leaves behind for the next user to wait for.
    type Marks;

    /// Zeroed memory of at least `bytes` bytes (at least one), for `site`.
    fn allocate(&mut self, site: i64, bytes: usize) -> Result<NonNull<u8>>;

    /// Frees what `allocate` returned for `bytes`.
    ///
    /// # Safety
    /// `ptr` came from `allocate(_, bytes)` and is freed once.
    unsafe fn free(&mut self, ptr: NonNull<u8>, bytes: usize);
}

/// A block handed out by [`SiteCache::alloc`].
pub(crate) struct Handout<K> {
    pub ptr: NonNull<u8>,
    /// For a block used before: the marks its last holder left, which the
    /// calling stream must wait for before it touches the block.
    pub after: Option<K>,
}

/// A block in the cache.
struct Free<K> {
    ptr: NonNull<u8>,
    /// The stream that freed it.
    stream: i64,
    marks: K,
}

/// A block being held.
struct Held {
    key: (i64, usize),
    /// Its record in the rank's [`Allocations`].
    known: u64,
    /// The caller's clock when it was handed out (see [`SiteCache::alloc`]).
    since: u64,
}

/// One site's blocks of one size.
struct Site<K> {
    /// Blocks made for it so far.
    made: usize,
    /// Its free blocks, freed longest ago first.
    free: Vec<Free<K>>,
}

pub(crate) struct SiteCache<M: Memory> {
    memory: M,
    sites: HashMap<(i64, usize), Site<M::Marks>>,
    held: HashMap<usize, Held>,
    /// Every block made, by address: its key.
    blocks: HashMap<usize, (i64, usize)>,
    known: Arc<Allocations>,
    /// How many blocks a site makes before it reuses one freed on another
    /// stream: the rank's number of streams.
    spread: usize,
}

impl<M: Memory> SiteCache<M> {
    /// A cache recording its buffers in `known`, for a rank of `streams`
    /// streams.
    pub fn new(memory: M, known: Arc<Allocations>, streams: usize) -> Self {
        Self {
            memory,
            sites: HashMap::new(),
            held: HashMap::new(),
            blocks: HashMap::new(),
            known,
            spread: streams.max(1),
        }
    }

    /// A block of `bytes` for `site`, used first on `stream`; `since` is the
    /// caller's clock now, which `dealloc` gives back to its marks.
    pub fn alloc(
        &mut self,
        site: i64,
        bytes: usize,
        stream: i64,
        since: u64,
    ) -> Result<Handout<M::Marks>> {
        let key = (site, bytes);
        let entry = self.sites.entry(key).or_insert_with(|| Site {
            made: 0,
            free: Vec::new(),
        });
        let reused = match entry.free.iter().rposition(|free| free.stream == stream) {
            Some(index) => Some(entry.free.remove(index)),
            None if entry.made >= self.spread && !entry.free.is_empty() => {
                Some(entry.free.remove(0))
            }
            None => None,
        };
        let (ptr, after) = match reused {
            Some(free) => (free.ptr, Some(free.marks)),
            None => {
                let ptr = self.memory.allocate(site, bytes)?;
                entry.made += 1;
                self.blocks.insert(ptr.as_ptr() as usize, key);
                (ptr, None)
            }
        };
        let known = match self.known.insert(ptr.as_ptr(), bytes) {
            Ok(known) => known,
            Err(error) => {
                // Back to the cache, free at once: nothing used it.
                if let Some(marks) = after {
                    entry.free.push(Free { ptr, stream, marks });
                } else {
                    self.blocks.remove(&(ptr.as_ptr() as usize));
                    entry.made -= 1;
                    // SAFETY: just allocated for `bytes`, not handed out.
                    unsafe { self.memory.free(ptr, bytes) };
                }
                return Err(error);
            }
        };
        self.held
            .insert(ptr.as_ptr() as usize, Held { key, known, since });
        Ok(Handout { ptr, after })
    }

    /// Hands `settle` the marks of every free block, to empty: a backend
    /// drops them once they are known complete (its streams drained) or can
    /// no longer be waited for (they were recorded into a CUDA graph).
    pub fn settle_marks(&mut self, mut settle: impl FnMut(&mut M::Marks)) {
        for site in self.sites.values_mut() {
            for free in &mut site.free {
                settle(&mut free.marks);
            }
        }
    }

    /// Returns a buffer to the cache, freed on `stream`. `marks` makes the
    /// marks of the work enqueued on it so far, given the clock its `alloc`
    /// was called with; it is called only for a buffer that is held.
    pub fn dealloc(
        &mut self,
        ptr: *mut u8,
        stream: i64,
        marks: impl FnOnce(u64) -> Result<M::Marks>,
    ) -> Result<()> {
        let address = ptr as usize;
        let Some(held) = self.held.get(&address) else {
            return Err(match self.blocks.get(&address) {
                Some(&(site, bytes)) => Error::Invalid(format!(
                    "dealloc of {ptr:p} (site {site}, {bytes} bytes), which is not allocated"
                )),
                None => Error::Invalid(format!("dealloc of {ptr:p}, which alloc did not return")),
            });
        };
        let marks = marks(held.since)?;
        let held = self.held.remove(&address).expect("looked up above");
        self.known.remove(address, held.known);
        let ptr = NonNull::new(ptr).expect("held blocks are not null");
        self.sites
            .get_mut(&held.key)
            .expect("a held block's site exists")
            .free
            .push(Free { ptr, stream, marks });
        Ok(())
    }
}

impl<M: Memory> Drop for SiteCache<M> {
    fn drop(&mut self) {
        for (&address, held) in &self.held {
            self.known.remove(address, held.known);
        }
        for (&address, &(_, bytes)) in &self.blocks {
            let ptr = NonNull::new(address as *mut u8).expect("blocks are not null");
            // SAFETY: allocated once in `alloc` for `bytes`, freed once here.
            unsafe { self.memory.free(ptr, bytes) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory that counts its allocations; marks are the clock given back.
    #[derive(Default)]
    struct Counted {
        made: usize,
        freed: std::rc::Rc<std::cell::Cell<usize>>,
        blocks: Vec<[u64; 4]>,
    }

    impl Memory for Counted {
        type Marks = u64;

        fn allocate(&mut self, _site: i64, _bytes: usize) -> Result<NonNull<u8>> {
            self.made += 1;
            self.blocks.push([0; 4]);
            let block = self.blocks.last_mut().unwrap();
            Ok(NonNull::new(block.as_mut_ptr().cast()).unwrap())
        }

        unsafe fn free(&mut self, _ptr: NonNull<u8>, _bytes: usize) {
            self.freed.set(self.freed.get() + 1);
        }
    }

    fn cache(streams: usize) -> SiteCache<Counted> {
        SiteCache::new(Counted::default(), Default::default(), streams)
    }

    fn free(cache: &mut SiteCache<Counted>, ptr: NonNull<u8>, stream: i64) {
        cache.dealloc(ptr.as_ptr(), stream, Ok).unwrap();
    }

    #[test]
    fn a_held_block_is_never_handed_out_twice() {
        let mut cache = cache(4);
        let a = cache.alloc(1, 32, 0, 0).unwrap();
        let b = cache.alloc(1, 32, 0, 0).unwrap();
        assert_ne!(a.ptr, b.ptr);
        assert!(a.after.is_none() && b.after.is_none());
        assert_eq!(cache.memory.made, 2);
    }

    #[test]
    fn a_loop_on_a_pool_reuses_each_streams_block_without_cross_stream_waits() {
        // Iteration i allocates on stream 1 + i % 3 and frees there.
        let mut cache = cache(4);
        let mut first = Vec::new();
        for i in 0..12u64 {
            let stream = 1 + (i % 3) as i64;
            let block = cache.alloc(5, 32, stream, i).unwrap();
            if i < 3 {
                assert!(block.after.is_none());
                first.push(block.ptr);
            } else {
                assert_eq!(block.ptr, first[(i % 3) as usize]);
                // The marks of the previous iteration on this stream.
                assert_eq!(block.after, Some(i - 3));
            }
            free(&mut cache, block.ptr, stream);
        }
        assert_eq!(
            cache.memory.made, 3,
            "one block per stream, not per iteration"
        );
    }

    #[test]
    fn a_site_with_a_block_per_stream_reuses_the_oldest_behind_its_marks() {
        let mut cache = cache(2);
        let a = cache.alloc(1, 8, 1, 10).unwrap().ptr;
        let b = cache.alloc(1, 8, 2, 20).unwrap().ptr;
        free(&mut cache, a, 1);
        free(&mut cache, b, 2);
        // Stream 0 freed nothing, and the site has its two blocks: the one
        // freed longest ago, behind the marks of its last use.
        let c = cache.alloc(1, 8, 0, 30).unwrap();
        assert_eq!((c.ptr, c.after), (a, Some(10)));
        assert_eq!(cache.memory.made, 2);
        // Below the spread, a new block rather than a wait.
        let mut wide = self::cache(3);
        let a = wide.alloc(1, 8, 1, 0).unwrap().ptr;
        free(&mut wide, a, 1);
        let fresh = wide.alloc(1, 8, 2, 0).unwrap();
        assert!(fresh.after.is_none() && fresh.ptr != a);
    }

    #[test]
    fn sites_and_sizes_keep_their_own_blocks() {
        let mut cache = cache(1);
        let a = cache.alloc(7, 100, 0, 0).unwrap().ptr;
        free(&mut cache, a, 0);
        assert_ne!(cache.alloc(7, 200, 0, 0).unwrap().ptr, a);
        assert_ne!(cache.alloc(8, 100, 0, 0).unwrap().ptr, a);
        assert_eq!(cache.alloc(7, 100, 0, 0).unwrap().ptr, a);
    }

    #[test]
    fn a_freed_block_is_unknown_to_the_view_checks_until_handed_out_again() {
        let mut cache = cache(1);
        let a = cache.alloc(1, 32, 0, 0).unwrap().ptr;
        let operand = |ptr: NonNull<u8>| crate::memref::Operand {
            allocated: ptr.as_ptr() as usize,
            view: crate::memref::View::contiguous(hir_abi::DType::F32, ptr.as_ptr(), &[8]),
        };
        assert!(cache.known.checker().check(1, &operand(a)).is_ok());
        free(&mut cache, a, 0);
        assert!(cache.known.checker().check(1, &operand(a)).is_err());
        assert_eq!(cache.alloc(1, 32, 0, 0).unwrap().ptr, a);
        assert!(cache.known.checker().check(1, &operand(a)).is_ok());
    }

    #[test]
    fn a_double_or_foreign_free_is_an_error_and_makes_no_marks() {
        let mut cache = cache(1);
        let a = cache.alloc(3, 16, 0, 0).unwrap().ptr;
        free(&mut cache, a, 0);
        let error = cache
            .dealloc(a.as_ptr(), 0, |_| panic!("no marks for a block not held"))
            .unwrap_err();
        assert!(error.to_string().contains("site 3, 16 bytes"), "{error}");
        let error = cache.dealloc(std::ptr::null_mut(), 0, Ok).unwrap_err();
        assert!(
            error.to_string().contains("which alloc did not return"),
            "{error}"
        );
    }

    #[test]
    fn dropping_frees_every_block_once_held_or_free() {
        let mut cache = cache(2);
        let freed = cache.memory.freed.clone();
        let a = cache.alloc(1, 8, 0, 0).unwrap().ptr;
        cache.alloc(1, 8, 0, 0).unwrap();
        free(&mut cache, a, 0);
        cache.alloc(2, 8, 1, 0).unwrap();
        assert_eq!(cache.memory.made, 3);
        drop(cache);
        assert_eq!(freed.get(), 3);
    }
}
