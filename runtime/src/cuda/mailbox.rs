//! Where a `cuda` receive leaves its destination for its sender: a mailbox
//! in host shared memory, so that the per-transfer exchange costs a few
//! memory accesses instead of store round trips.
//!
//! Each rank owns one region per team (POSIX shared memory, `/dev/shm`),
//! which every member of the team maps; ranks that are threads of one
//! process map it like processes do. A region is `u64` words, each accessed
//! atomically, the same in every mapping:
//!
//! - a header: a magic word, the team size, [`SLOTS`], then per member a
//!   word that member sets to 1 once it has mapped the region;
//! - per sender member `i` and slot `s`, an entry of [`ENTRY`] words: `seq`,
//!   the payload's length and up to [`WORDS`] payload words, and `ack` on a
//!   cache line of its own.
//!
//! Message `n` from the owner (the receiver) to member `i` (the sender) uses
//! slot `n mod SLOTS` of entry `i`:
//!
//! - [`Mailbox::post`] (the owner): waits until `ack >= seq` (the sender
//!   took the slot's previous message, `n - SLOTS` unless a CUDA graph's
//!   replays skipped numbers), writes the payload, then `seq = n + 1`
//!   (release);
//! - [`Mailbox::take`] (the sender): waits until `seq == n + 1` (acquire),
//!   reads the payload, then `ack = n + 1` (release).
//!
//! So a slot is never overwritten before it was read, and a receiver more
//! than `SLOTS` messages ahead of its sender waits for it.
//!
//! Names are exchanged once per team ([`Mailbox::connect`]): each owner
//! creates its region under a name no other region has (its pid, a counter
//! and the clock, created exclusively), the members open each other's and
//! mark themselves in the header, and each owner unlinks its name as soon as
//! every member has marked its region. A crash afterwards leaves nothing in
//! `/dev/shm`: the memory lives while a mapping does.
//!
//! Waits ([`wait_until`]) spin for a few microseconds, then yield, then nap;
//! they give up after the bootstrap's timeout and ask it every
//! [`CHECK`] whether a rank failed.

use super::kernels::MAX_RANK;
use crate::core::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::ops::Team;
use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Transfers with one member in one direction that may be in flight at once
/// (`ipc.rs`'s flag slots and the mailbox's).
pub(crate) const SLOTS: usize = 64;

/// The most payload words a message holds: an encoded destination of up to
/// `MAX_RANK` axes.
pub(crate) const WORDS: usize = 3 + 2 * MAX_RANK;

/// Words per entry (256 bytes): `seq`, `len`, the payload, and `ack` at
/// byte 192, away from the words the owner writes.
const ENTRY: usize = 32;
const SEQ: usize = 0;
const LEN: usize = 1;
const PAYLOAD: usize = 2;
const ACK: usize = 24;
const _: () = assert!(PAYLOAD + WORDS <= ACK && ACK < ENTRY);

/// The header's words: then, from `MAPPED`, one per member.
const MAGIC: usize = 0;
const MEMBERS: usize = 1;
const SLOT_COUNT: usize = 2;
const MAPPED: usize = 4;
/// "HIRMBOX1": the layout above.
const MAGIC_VALUE: u64 = u64::from_le_bytes(*b"HIRMBOX1");

/// How long a wait spins before it yields, and yields before it naps.
const SPIN: Duration = Duration::from_micros(20);
const YIELD: Duration = Duration::from_millis(2);
const NAP: Duration = Duration::from_micros(50);
/// How often a wait asks the bootstrap whether a rank failed (through the
/// store, a round trip, so not on every spin).
pub(crate) const CHECK: Duration = Duration::from_millis(10);

/// The header's size in words for a team of `members`, whole entries.
fn header_words(members: usize) -> usize {
    (MAPPED + members).div_ceil(ENTRY) * ENTRY
}

/// A region's size in words.
fn region_words(members: usize) -> usize {
    header_words(members) + members * SLOTS * ENTRY
}

/// Waits until `ready` holds (an error from it ends the wait), up to the
/// bootstrap's timeout; `waiting` says for what, in the timeout's error.
/// Every [`CHECK`] of waiting, and before timing out, it asks the bootstrap
/// whether a rank failed, and gives up with that failure if one did.
pub(crate) fn wait_until(
    bootstrap: &dyn Bootstrap,
    mut ready: impl FnMut() -> Result<bool>,
    waiting: impl FnOnce() -> String,
) -> Result<()> {
    if ready()? {
        return Ok(());
    }
    let timeout = bootstrap.timeout();
    let start = Instant::now();
    let mut checked = start;
    loop {
        if ready()? {
            return Ok(());
        }
        let now = Instant::now();
        if now - checked >= CHECK {
            bootstrap.check_failed()?;
            checked = now;
        }
        let waited = now - start;
        if waited >= timeout {
            bootstrap.check_failed()?;
            return Err(Error::Timeout {
                after: timeout,
                waiting: waiting(),
            });
        }
        if waited < SPIN {
            for _ in 0..32 {
                std::hint::spin_loop();
            }
        } else if waited < YIELD {
            std::thread::yield_now();
        } else {
            std::thread::sleep(NAP);
        }
    }
}

/// A mapping of a shared memory region of `words` `u64`s; unmapped on drop.
struct Region {
    base: NonNull<AtomicU64>,
    words: usize,
}

// SAFETY: the mapping is plain shared memory that every user accesses only
// through atomics; it stays mapped until the region drops.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// Maps all of `file`, which holds `words` words.
    fn map(file: &File, words: usize) -> std::io::Result<Region> {
        // SAFETY: maps a whole shared memory object this process opened
        // read-write; the result is checked before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                words * 8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let base = NonNull::new(base.cast()).ok_or_else(std::io::Error::last_os_error)?;
        Ok(Region { base, words })
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `words` words mapped at `base` (page aligned, so aligned
        // for `AtomicU64`) until `self` drops; other mappings of the memory
        // write it only through atomics too.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.words) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once; no borrow of
        // `words()` outlives `self`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.words * 8) };
    }
}

/// Opens the shared memory object `name`: created exclusively (mode 0600)
/// with `create`, else an existing one.
fn shm_open(name: &str, create: bool) -> std::io::Result<File> {
    let c_name = CString::new(name)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in the name"))?;
    let flags = if create {
        libc::O_RDWR | libc::O_CREAT | libc::O_EXCL
    } else {
        libc::O_RDWR
    };
    // SAFETY: a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::shm_open(c_name.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn shm_unlink(name: &str) {
    if let Ok(c_name) = CString::new(name) {
        // SAFETY: a NUL-terminated name.
        unsafe { libc::shm_unlink(c_name.as_ptr()) };
    }
}

/// A name no region of this process had, unlikely to be left over from
/// another (creation is exclusive anyway).
fn fresh_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |time| time.subsec_nanos());
    format!(
        "/hir-mailbox-{}-{}-{nanos:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// One rank's mailboxes on one team: its own region, where its receives
/// leave their destinations, and the members' regions it takes from.
pub(crate) struct Mailbox {
    team: Team,
    position: usize,
    /// The name of this rank's region while it still names it.
    name: Option<String>,
    /// Each member's region, this rank's at `position`; `None` until mapped.
    regions: Vec<Option<Region>>,
}

impl Mailbox {
    /// Creates this rank's region for `team`, where it is member `position`.
    pub fn create(team: &Team, position: usize) -> Result<Mailbox> {
        let members = team.len();
        let words = region_words(members);
        let mut attempts = 0;
        let (name, file) = loop {
            let name = fresh_name();
            match shm_open(&name, true) {
                Ok(file) => break (name, file),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempts < 8 => {
                    attempts += 1;
                }
                Err(error) => {
                    return Err(Error::Io(format!(
                        "cannot create the cuda transfer mailbox {name} for team {team} in \
                         /dev/shm: {error}"
                    )));
                }
            }
        };
        let region = file
            .set_len((words * 8) as u64)
            .and_then(|()| Region::map(&file, words))
            .map_err(|error| {
                shm_unlink(&name);
                Error::Io(format!(
                    "cannot size and map the cuda transfer mailbox {name} for team {team}: \
                     {error}"
                ))
            })?;
        let header = region.words();
        header[MEMBERS].store(members as u64, Ordering::Relaxed);
        header[SLOT_COUNT].store(SLOTS as u64, Ordering::Relaxed);
        header[MAGIC].store(MAGIC_VALUE, Ordering::Release);
        let mut regions: Vec<Option<Region>> = (0..members).map(|_| None).collect();
        regions[position] = Some(region);
        Ok(Mailbox {
            team: team.clone(),
            position,
            name: Some(name),
            regions,
        })
    }

    /// The name of this rank's region, for the members to open; `None`
    /// once connected.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether every member's region is mapped.
    pub fn connected(&self) -> bool {
        self.regions.iter().all(Option::is_some)
    }

    /// Maps every member's region from `names` (in team order, as the
    /// members exported them; this rank's own is not read), waits until
    /// every member has mapped this rank's, and unlinks its name, whether
    /// or not that succeeded.
    pub fn connect(&mut self, names: &[&str], bootstrap: &dyn Bootstrap) -> Result<()> {
        let result = self.open_all(names, bootstrap);
        self.unlink();
        result
    }

    fn open_all(&mut self, names: &[&str], bootstrap: &dyn Bootstrap) -> Result<()> {
        let members = self.team.len();
        if names.len() != members {
            return Err(Error::Invalid(format!(
                "{} mailbox names for team {} of {members}",
                names.len(),
                self.team
            )));
        }
        for (member, name) in names.iter().enumerate() {
            if self.regions[member].is_none() {
                let region = self.open(member, name)?;
                region.words()[MAPPED + self.position].store(1, Ordering::Release);
                self.regions[member] = Some(region);
            }
        }
        let own = self.region(self.position)?.words();
        let unmapped = || {
            (0..members)
                .filter(|&member| own[MAPPED + member].load(Ordering::Acquire) == 0)
                .filter(|&member| member != self.position)
                .map(|member| self.team.ranks()[member])
                .collect::<Vec<_>>()
        };
        wait_until(
            bootstrap,
            || Ok(unmapped().is_empty()),
            || {
                format!(
                    "for ranks {:?} to map rank {}'s cuda transfer mailbox on team {}",
                    unmapped(),
                    self.team.ranks()[self.position],
                    self.team
                )
            },
        )
    }

    /// Maps member `member`'s region `name` and checks its layout.
    fn open(&self, member: usize, name: &str) -> Result<Region> {
        let owner = self.team.ranks()[member];
        let team = &self.team;
        let members = team.len();
        let words = region_words(members);
        if name.is_empty() {
            return Err(Error::Invalid(format!(
                "rank {owner} brought no cuda transfer mailbox to team {team}'s first share"
            )));
        }
        let opened = shm_open(name, false).and_then(|file| {
            let bytes = file.metadata()?.len();
            if bytes != (words * 8) as u64 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("it has {bytes} bytes, expected {}", words * 8),
                ));
            }
            Region::map(&file, words)
        });
        let region = opened.map_err(|error| {
            Error::Io(format!(
                "cannot open rank {owner}'s cuda transfer mailbox {name} on team {team} \
                 (cuda transfers need the ranks on one host): {error}"
            ))
        })?;
        let header = region.words();
        let found = [
            header[MAGIC].load(Ordering::Acquire),
            header[MEMBERS].load(Ordering::Relaxed),
            header[SLOT_COUNT].load(Ordering::Relaxed),
        ];
        if found != [MAGIC_VALUE, members as u64, SLOTS as u64] {
            return Err(Error::Invalid(format!(
                "rank {owner}'s cuda transfer mailbox {name} on team {team} has another layout \
                 (magic, members, slots {found:?}, expected [{MAGIC_VALUE}, {members}, {SLOTS}])"
            )));
        }
        Ok(region)
    }

    /// Unlinks this rank's region's name, if it still has one; the mappings
    /// stay.
    pub fn unlink(&mut self) {
        if let Some(name) = self.name.take() {
            shm_unlink(&name);
        }
    }

    fn region(&self, member: usize) -> Result<&Region> {
        self.regions
            .get(member)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "rank {}'s cuda transfer mailbox on team {} is not mapped: no buffer was \
                     shared with share_mem_handle on the team",
                    self.team
                        .ranks()
                        .get(member)
                        .map_or("?".into(), usize::to_string),
                    self.team
                ))
            })
    }

    /// The entry of message `number` to `sender` in `owner`'s region.
    fn entry(&self, owner: usize, sender: usize, number: u64) -> Result<&[AtomicU64]> {
        let members = self.team.len();
        if sender >= members {
            return Err(Error::Invalid(format!(
                "team {} has no member {sender}",
                self.team
            )));
        }
        let words = self.region(owner)?.words();
        let start =
            header_words(members) + (sender * SLOTS + (number % SLOTS as u64) as usize) * ENTRY;
        Ok(&words[start..start + ENTRY])
    }

    /// Leaves message `number` for member `sender`: `payload`, at most
    /// [`WORDS`] words. Waits, when the slot's previous message is still
    /// unread, until the sender took it; `waiting` says for what.
    pub fn post(
        &self,
        sender: usize,
        number: u64,
        payload: &[u64],
        bootstrap: &dyn Bootstrap,
        waiting: impl FnOnce() -> String,
    ) -> Result<()> {
        if payload.len() > WORDS {
            return Err(Error::Invalid(format!(
                "a message of {} words does not fit a cuda transfer mailbox slot ({WORDS})",
                payload.len()
            )));
        }
        let entry = self.entry(self.position, sender, number)?;
        // The last message posted in the slot was taken. It is `number -
        // SLOTS` unless a CUDA graph's replays skipped numbers
        // (`ipc_graph.rs`).
        let posted = entry[SEQ].load(Ordering::Relaxed);
        wait_until(
            bootstrap,
            || Ok(entry[ACK].load(Ordering::Acquire) >= posted),
            waiting,
        )?;
        entry[LEN].store(payload.len() as u64, Ordering::Relaxed);
        for (word, &value) in entry[PAYLOAD..].iter().zip(payload) {
            word.store(value, Ordering::Relaxed);
        }
        entry[SEQ].store(number + 1, Ordering::Release);
        Ok(())
    }

    /// Takes message `number` that member `owner` left for this rank,
    /// waiting until it is there; `waiting` says for what.
    pub fn take(
        &self,
        owner: usize,
        number: u64,
        bootstrap: &dyn Bootstrap,
        waiting: impl FnOnce() -> String,
    ) -> Result<Vec<u64>> {
        let entry = self.entry(owner, self.position, number)?;
        let rank = self.team.ranks()[owner];
        wait_until(
            bootstrap,
            || {
                let seq = entry[SEQ].load(Ordering::Acquire);
                if seq > number + 1 {
                    return Err(Error::Invalid(format!(
                        "rank {rank}'s cuda transfer mailbox on team {} holds message #{} \
                         where #{number} was expected",
                        self.team,
                        seq - 1
                    )));
                }
                Ok(seq == number + 1)
            },
            waiting,
        )?;
        let len = entry[LEN].load(Ordering::Relaxed);
        let payload = usize::try_from(len)
            .ok()
            .filter(|&len| len <= WORDS)
            .map(|len| {
                entry[PAYLOAD..PAYLOAD + len]
                    .iter()
                    .map(|word| word.load(Ordering::Relaxed))
                    .collect()
            });
        entry[ACK].store(number + 1, Ordering::Release);
        payload.ok_or_else(|| {
            Error::Invalid(format!(
                "rank {rank} left a malformed message #{number} of {len} words (at most \
                 {WORDS}) on team {}",
                self.team
            ))
        })
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        self.unlink();
    }
}

#[cfg(test)]
#[path = "mailbox_process_tests.rs"]
mod process_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::bootstrap::ThreadBootstrap;
    use crate::core::sync::Faults;
    use std::sync::Arc;

    fn bootstrap(timeout: Duration) -> (Arc<Faults>, ThreadBootstrap) {
        let faults = Arc::new(Faults::new(2));
        (faults.clone(), ThreadBootstrap::new(faults, timeout))
    }

    fn pair() -> Team {
        Team::new(&[0, 1], 2).unwrap()
    }

    /// Both members of a two-rank team, created, and their regions' names.
    fn created() -> ([Mailbox; 2], Vec<String>) {
        let team = pair();
        let boxes = [0, 1].map(|position| Mailbox::create(&team, position).unwrap());
        let names = boxes
            .iter()
            .map(|mailbox| mailbox.name().unwrap().to_string())
            .collect();
        (boxes, names)
    }

    /// Connects both members on two threads (each maps the other's region:
    /// two mappings of each).
    fn connect(boxes: &mut [Mailbox; 2], names: &[String], bootstrap: &ThreadBootstrap) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        std::thread::scope(|scope| {
            for mailbox in boxes {
                let names = &names;
                scope.spawn(move || mailbox.connect(names, bootstrap).unwrap());
            }
        });
    }

    /// Both members of a two-rank team, created and connected.
    fn connected(bootstrap: &ThreadBootstrap) -> [Mailbox; 2] {
        let (mut boxes, names) = created();
        connect(&mut boxes, &names, bootstrap);
        boxes
    }

    fn payload(number: u64) -> Vec<u64> {
        (0..(number as usize % WORDS) + 1)
            .map(|i| number * 100 + i as u64)
            .collect()
    }

    #[test]
    fn a_posted_message_is_taken_through_another_mapping() {
        let (_, bootstrap) = bootstrap(Duration::from_secs(10));
        let [receiver, sender] = connected(&bootstrap);
        assert!(receiver.connected() && sender.connected());
        std::thread::scope(|scope| {
            let taker = scope.spawn(|| sender.take(0, 0, &bootstrap, || "take".into()));
            std::thread::sleep(Duration::from_millis(20));
            receiver
                .post(1, 0, &[7, 8, 9], &bootstrap, || "post".into())
                .unwrap();
            assert_eq!(taker.join().unwrap().unwrap(), vec![7, 8, 9]);
        });
    }

    #[test]
    fn messages_arrive_in_order_past_many_slot_reuses() {
        let (_, bootstrap) = bootstrap(Duration::from_secs(30));
        let [receiver, sender] = connected(&bootstrap);
        let count = 5 * SLOTS as u64 + 3;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for number in 0..count {
                    receiver
                        .post(1, number, &payload(number), &bootstrap, || "post".into())
                        .unwrap();
                }
            });
            for number in 0..count {
                let taken = sender
                    .take(0, number, &bootstrap, || "take".into())
                    .unwrap();
                assert_eq!(taken, payload(number), "message #{number}");
            }
        });
    }

    #[test]
    fn a_receiver_slots_ahead_waits_for_the_sender_to_take() {
        let (_, bootstrap) = bootstrap(Duration::from_secs(10));
        let [receiver, sender] = connected(&bootstrap);
        for number in 0..SLOTS as u64 {
            receiver
                .post(1, number, &payload(number), &bootstrap, || "post".into())
                .unwrap();
        }
        let next = SLOTS as u64;
        let posted = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let poster = scope.spawn(|| {
                receiver
                    .post(1, next, &[42], &bootstrap, || "post".into())
                    .unwrap();
                posted.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(50));
            assert!(
                !posted.load(Ordering::SeqCst),
                "message #{next} overwrote #0 before it was taken"
            );
            assert_eq!(
                sender.take(0, 0, &bootstrap, || "take".into()).unwrap(),
                payload(0)
            );
            poster.join().unwrap();
        });
        assert!(posted.load(Ordering::SeqCst));
        for number in 1..SLOTS as u64 {
            assert_eq!(
                sender
                    .take(0, number, &bootstrap, || "take".into())
                    .unwrap(),
                payload(number)
            );
        }
        assert_eq!(
            sender.take(0, next, &bootstrap, || "take".into()).unwrap(),
            vec![42]
        );
    }

    #[test]
    fn a_full_slot_times_out_naming_the_wait() {
        let (_, bootstrap) = bootstrap(Duration::from_millis(50));
        let [receiver, _sender] = connected(&bootstrap);
        for number in 0..SLOTS as u64 {
            receiver
                .post(1, number, &[number], &bootstrap, || "post".into())
                .unwrap();
        }
        let error = receiver
            .post(1, SLOTS as u64, &[0], &bootstrap, || {
                "for the sender to take #0".into()
            })
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "timed out after 50ms waiting for the sender to take #0"
        );
    }

    #[test]
    fn a_missing_post_times_out_with_the_message() {
        let (_, bootstrap) = bootstrap(Duration::from_millis(50));
        let [_receiver, sender] = connected(&bootstrap);
        let start = Instant::now();
        let error = sender
            .take(0, 3, &bootstrap, || {
                "for rank 0 to post the matching recv".into()
            })
            .unwrap_err();
        assert!(start.elapsed() >= Duration::from_millis(50));
        assert_eq!(
            error,
            Error::Timeout {
                after: Duration::from_millis(50),
                waiting: "for rank 0 to post the matching recv".into()
            }
        );
    }

    #[test]
    fn a_peer_failure_ends_the_wait() {
        let (faults, bootstrap) = bootstrap(Duration::from_secs(60));
        let [_receiver, sender] = connected(&bootstrap);
        let start = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(30));
                faults.fail(0, "test", Error::Invalid("boom".into()));
            });
            let error = sender.take(0, 0, &bootstrap, || "take".into()).unwrap_err();
            assert_eq!(error, Error::PeerFailed(0));
        });
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn regions_are_unlinked_once_every_member_mapped_them() {
        let (_, bootstrap) = bootstrap(Duration::from_secs(10));
        let (mut boxes, names) = created();
        assert!(shm_open(&names[0], false).is_ok(), "created under its name");
        connect(&mut boxes, &names, &bootstrap);
        for (mailbox, name) in boxes.iter().zip(&names) {
            assert_eq!(mailbox.name(), None);
            let error = shm_open(name, false).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{name}");
        }
    }

    #[test]
    fn a_member_that_never_maps_times_out_and_the_name_is_unlinked() {
        let (_, bootstrap) = bootstrap(Duration::from_millis(50));
        let team = pair();
        let mut own = Mailbox::create(&team, 0).unwrap();
        let peer = Mailbox::create(&team, 1).unwrap();
        let names = [
            own.name().unwrap().to_string(),
            peer.name().unwrap().to_string(),
        ];
        let error = own
            .connect(&[&names[0], &names[1]], &bootstrap)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "timed out after 50ms waiting for ranks [1] to map rank 0's cuda transfer \
             mailbox on team [0, 1]"
        );
        assert!(shm_open(&names[0], false).is_err());
    }

    #[test]
    fn bad_names_and_payloads_are_errors() {
        let (_, bootstrap) = bootstrap(Duration::from_millis(50));
        let team = pair();
        let mut own = Mailbox::create(&team, 0).unwrap();
        let own_name = own.name().unwrap().to_string();
        let error = own
            .connect(&[&own_name, "/hir-mailbox-none"], &bootstrap)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot open rank 1's cuda transfer mailbox /hir-mailbox-none"),
            "{error}"
        );
        let error = own.connect(&[&own_name, ""], &bootstrap).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("brought no cuda transfer mailbox")
        );
        let [receiver, sender] = connected(&bootstrap);
        assert!(
            receiver
                .post(1, 0, &[0; WORDS + 1], &bootstrap, || "post".into())
                .is_err()
        );
        // A corrupt length word from the peer.
        let entry = receiver.entry(0, 1, 0).unwrap();
        entry[LEN].store(WORDS as u64 + 1, Ordering::Relaxed);
        entry[SEQ].store(1, Ordering::Release);
        let error = sender.take(0, 0, &bootstrap, || "take".into()).unwrap_err();
        assert!(
            error.to_string().contains("malformed message #0"),
            "{error}"
        );
        // A slot that holds a later message than the one expected.
        let entry = receiver.entry(0, 1, 1).unwrap();
        entry[SEQ].store(SLOTS as u64 + 2, Ordering::Release);
        let error = sender.take(0, 1, &bootstrap, || "take".into()).unwrap_err();
        assert!(error.to_string().contains("holds message #65"), "{error}");
    }
}
