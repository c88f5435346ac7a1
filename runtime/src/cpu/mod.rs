//! The cpu backend: the reference every other backend is checked against.
//!
//! A [`World`] is one process: each rank is a thread running the program
//! (through [`World::run`]), and has the caller's stream 0, a pool of streams
//! `1..=num_streams`, and one communication queue per team it talks on (as
//! NCCL has a stream per communicator). Each is a queue drained in
//! order by its own worker thread, so the host enqueues and returns, and work
//! on different streams really overlaps. See `docs/Runtime.md` for the model.
//!
//! This file holds a rank (`CpuDevice`, its host state, its [`Device`]
//! entries) and what the ranks share; `world.rs` starts and runs them.

mod alloc;
mod attention;
mod casts;
mod comm;
mod elements;
mod fused;
mod ints;
mod kernels;
mod links;
mod queue;
mod race;
mod world;

use crate::bounds::Allocations;
use crate::core::sync::{Faults, Waiter};
use crate::device::{Device, Request, Stream};
use crate::error::{Error, Result, panic_message};
use crate::fused::FusedKernel;
use crate::lock;
use crate::memref::View;
use crate::ops::{CollectiveOp, Kernel, Team, Transfer};
use crate::trace::Trace;
use alloc::Allocator;
use comm::{Post, Region};
use hir_abi::{Collective, Transport};
use links::Links;
use queue::Queue;
pub use race::Races;
use race::{Access, Clock, Tracker};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use std::time::Instant;
pub use world::{Config, World};

/// The most tasks a stream holds that have not run yet; see
/// `CpuDevice::post`.
const MAX_PENDING: u64 = 1 << 16;

/// What every rank of the world shares.
struct Shared {
    config: Config,
    faults: Faults,
    trace: Option<Trace>,
    links: Links,
}

impl Shared {
    fn waiter(&self) -> Waiter<'_> {
        Waiter::new(&self.faults, self.config.timeout)
    }
}

/// A point in a queue: complete once its task `number` has run. `clock` is
/// that task's vector clock, which whoever waits for the event inherits.
#[derive(Clone)]
pub(crate) struct Event {
    queue: usize,
    number: u64,
    clock: Arc<Clock>,
}

impl Event {
    /// The event of a request that has nothing to wait for.
    fn complete() -> Event {
        Event {
            queue: 0,
            number: 0,
            clock: Arc::default(),
        }
    }
}

/// A coalescing group being posted.
struct Group {
    /// Its request's index in `Host::requests`.
    request: usize,
    team: Option<Team>,
    posts: Vec<Post>,
    accesses: Vec<Access>,
}

type Work = Box<dyn FnOnce() -> Result<()> + Send>;

/// A rank's host-side state, touched only by its host thread.
struct Host {
    current: usize,
    /// Stream 0, the pool, then the communication queues.
    queues: Vec<Arc<Queue>>,
    /// Per queue, the clock of its last task.
    clocks: Vec<Clock>,
    races: Tracker,
    /// Request `retired + i + 1` is `requests[i]`; `None` while its group is
    /// open. A request does not outlive the synchronize that completes it.
    requests: Vec<Option<Event>>,
    retired: i64,
    group: Option<Group>,
    comm_queues: HashMap<Team, usize>,
    /// Per team, the collectives, barriers and handle exchanges posted so far.
    collectives: HashMap<Team, u64>,
    barriers: HashMap<Team, u64>,
    exchanges: HashMap<Team, u64>,
    /// Per (backend, team, sender, receiver, whether this rank sends), the
    /// transfers posted so far: a rank that sends to itself counts its sends
    /// and its receives apart, so the `k`-th of each match.
    transfers: HashMap<(Transport, Team, usize, usize, bool), u64>,
    /// The IPC handle cache: buffers already shared with a team.
    shared: HashSet<(Region, Team)>,
    /// This rank's buffers shared with some team, and the members' (its own
    /// included) it can write.
    exported: Vec<Region>,
    mapped: HashMap<usize, Vec<Region>>,
}

impl Host {
    /// Issues a request, complete at `event` (`None`: not yet known).
    fn issue(&mut self, event: Option<Event>) -> usize {
        self.requests.push(event);
        self.requests.len() - 1
    }

    fn handle(&self, index: usize) -> Request {
        self.retired + index as Request + 1
    }
}

fn next(counters: &mut HashMap<Team, u64>, team: &Team) -> u64 {
    let counter = counters.entry(team.clone()).or_default();
    *counter += 1;
    *counter - 1
}

/// One rank of the cpu backend.
pub(crate) struct CpuDevice {
    rank: usize,
    shared: Arc<Shared>,
    host: Mutex<Host>,
    allocator: Mutex<Allocator>,
    allocations: Arc<Allocations>,
}

impl CpuDevice {
    fn new(rank: usize, shared: Arc<Shared>) -> Result<CpuDevice> {
        let streams = shared.config.num_streams + 1;
        let mut queues: Vec<Arc<Queue>> = Vec::with_capacity(streams);
        for stream in 0..streams {
            match Queue::start(format!("stream {stream}"), format!("hir-r{rank}-s{stream}")) {
                Ok(queue) => queues.push(queue),
                Err(error) => {
                    queues.iter().for_each(|queue| queue.stop());
                    return Err(Error::Io(format!(
                        "cannot start a thread for stream {stream} of rank {rank}: {error}"
                    )));
                }
            }
        }
        if let Some(trace) = &shared.trace {
            trace.track((rank, 0), "host");
            for (index, queue) in queues.iter().enumerate() {
                trace.track((rank, index + 1), &queue.name);
            }
        }
        let allocations = Arc::<Allocations>::default();
        Ok(CpuDevice {
            rank,
            host: Mutex::new(Host {
                current: 0,
                clocks: vec![Clock::new(); queues.len()],
                queues,
                races: Tracker::new(shared.config.races),
                requests: Vec::new(),
                retired: 0,
                group: None,
                comm_queues: HashMap::new(),
                collectives: HashMap::new(),
                barriers: HashMap::new(),
                exchanges: HashMap::new(),
                transfers: HashMap::new(),
                shared: HashSet::new(),
                exported: Vec::new(),
                mapped: HashMap::new(),
            }),
            allocator: Mutex::new(Allocator::new(
                alloc::HostMemory {
                    poison: shared.config.poison,
                },
                allocations.clone(),
                streams,
            )),
            allocations,
            shared,
        })
    }

    fn streams(&self) -> usize {
        self.shared.config.num_streams + 1
    }

    fn check_stream(&self, stream: Stream) -> Result<usize> {
        usize::try_from(stream)
            .ok()
            .filter(|&stream| stream < self.streams())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "stream {stream} does not exist: streams are 0 and the pool 1..={}",
                    self.shared.config.num_streams
                ))
            })
    }

    /// Waits for every queue to run what was enqueued so far.
    fn drain(&self) {
        let mut host = lock(&self.host);
        for (index, queue) in host.queues.iter().enumerate() {
            queue.wait_for(race::entry(&host.clocks[index], index));
        }
        // Everything tracked is done: no later access can race with it, and
        // every request is complete.
        host.races.clear();
        if host.group.is_none() {
            host.retired += host.requests.len() as Request;
            host.requests.clear();
        }
    }

    /// The event of `queue`'s last task so far.
    fn last_event(host: &Host, queue: usize) -> Event {
        let clock = &host.clocks[queue];
        Event {
            queue,
            number: race::entry(clock, queue),
            clock: Arc::new(clock.clone()),
        }
    }

    /// Enqueues a task on `queue`: first it waits for `after` (also inherited
    /// in its clock), then runs `work` (a pure wait when `None`), recording a
    /// trace slice; its accesses are checked for races now.
    fn post(
        &self,
        host: &mut Host,
        queue: usize,
        name: String,
        after: Option<Event>,
        accesses: Vec<Access>,
        work: Option<Work>,
    ) -> Result<Event> {
        // The host runs ahead of a stream by at most MAX_PENDING tasks, as
        // a GPU's launch queue holds only so many: past it the host waits,
        // so that a long loop does not grow the queue until memory runs out.
        // A task waits only for tasks already enqueued, or for other ranks
        // with a timeout, so the stream always drains.
        // Once full, it waits for half to drain: one wait per many tasks.
        let posted = race::entry(&host.clocks[queue], queue);
        let queued = &host.queues[queue];
        // (Cheap first: most runs never post that many to one stream.)
        if posted >= MAX_PENDING && posted >= queued.finished() + MAX_PENDING {
            queued.wait_for(posted - MAX_PENDING / 2);
        }
        let mut clock = host.clocks[queue].clone();
        if let Some(after) = &after {
            race::join(&mut clock, &after.clock);
        }
        if clock.len() <= queue {
            clock.resize(queue + 1, 0);
        }
        clock[queue] += 1;
        let number = clock[queue];
        let who = format!("{name} on {}", host.queues[queue].name);
        if let Some(warning) = host.races.access(queue, number, &clock, &who, accesses)? {
            // Printed as the run goes on: the program may never return.
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(
                stderr,
                "warning: rank {}: {name}: {warning} (--races=warn: reported once for these \
                 two ops, and the run goes on)",
                self.rank
            );
        }
        host.clocks[queue] = clock.clone();
        let after = after
            .filter(|after| after.number > 0)
            .map(|after| (host.queues[after.queue].clone(), after.number));
        let (shared, rank) = (self.shared.clone(), self.rank);
        host.queues[queue].push(Box::new(move || {
            let mut start = Instant::now();
            if let Some((queue, number)) = after {
                queue.wait_for(number);
            }
            if shared.faults.failed(rank) {
                return;
            }
            let result = match work {
                None => Ok(()),
                Some(work) => {
                    start = Instant::now();
                    catch_unwind(AssertUnwindSafe(work))
                        .unwrap_or_else(|payload| Err(Error::Panic(panic_message(&*payload))))
                }
            };
            if let Some(trace) = &shared.trace {
                let label = name.strip_prefix("hir_rt_").unwrap_or(&name);
                trace.record((rank, queue + 1), label, start, Instant::now());
            }
            if let Err(error) = result {
                shared.faults.fail(rank, &name, error);
            }
        }));
        Ok(Event {
            queue,
            number,
            clock: Arc::new(clock),
        })
    }

    /// The communication queue of `team`, started on first use.
    fn comm_queue(&self, host: &mut Host, team: &Team) -> Result<usize> {
        if let Some(&queue) = host.comm_queues.get(team) {
            return Ok(queue);
        }
        let index = host.queues.len();
        let name = format!("comm {team}");
        let queue =
            Queue::start(name, format!("hir-r{}-c{index}", self.rank)).map_err(|error| {
                Error::Io(format!(
                    "cannot start a thread for the queue of team {team}: {error}"
                ))
            })?;
        if let Some(trace) = &self.shared.trace {
            trace.track((self.rank, index + 1), &queue.name);
        }
        host.queues.push(queue);
        host.clocks.push(Clock::new());
        host.comm_queues.insert(team.clone(), index);
        Ok(index)
    }

    fn request(host: &mut Host, event: Event) -> Request {
        let index = host.issue(Some(event));
        host.handle(index)
    }

    /// Runs a host-blocking step, traced on the host track.
    fn on_host<R>(&self, name: &str, step: impl FnOnce() -> Result<R>) -> Result<R> {
        let start = Instant::now();
        let result = step();
        if let Some(trace) = &self.shared.trace {
            trace.record((self.rank, 0), name, start, Instant::now());
        }
        result
    }

    /// Makes the current stream wait for the `marks` a reused block's last
    /// holder left (its own queue's need no wait: queue order), then, with
    /// `Config::poison`, fills the block with NaN as a fresh one is.
    fn reuse(
        &self,
        host: &mut Host,
        marks: alloc::Marks,
        ptr: NonNull<u8>,
        bytes: usize,
    ) -> Result<()> {
        let current = host.current;
        for mark in marks.into_iter().filter(|mark| mark.queue != current) {
            let name = "alloc (waits for the block's last users)".to_string();
            self.post(host, current, name, Some(mark), Vec::new(), None)?;
        }
        if self.shared.config.poison {
            let block = View::contiguous(hir_abi::DType::F16, ptr.as_ptr(), &[bytes / 2]);
            let address = ptr.as_ptr() as usize;
            let work: Work = Box::new(move || {
                // SAFETY: the block holds `bytes` bytes, and no other task
                // touches it until this one is done (queue order, waits).
                unsafe { (address as *mut u8).write_bytes(0xff, bytes) };
                Ok(())
            });
            let accesses = vec![Access::write(&block)];
            self.post(
                host,
                current,
                "alloc (poison)".into(),
                None,
                accesses,
                Some(work),
            )?;
        }
        Ok(())
    }

    /// Posts `posts` (sends and receives) as one task on `queue`.
    fn post_transfers(
        &self,
        host: &mut Host,
        queue: usize,
        name: String,
        accesses: Vec<Access>,
        posts: Vec<Post>,
    ) -> Result<Event> {
        let after = (queue != host.current).then(|| Self::last_event(host, host.current));
        let shared = self.shared.clone();
        let work: Work = Box::new(move || shared.links.transfer(&posts, &shared.waiter()));
        self.post(host, queue, name, after, accesses, Some(work))
    }

    fn transfer(&self, transfer: Transfer, send: bool) -> Result<Request> {
        let Transfer {
            buffer,
            peer,
            team,
            backend,
        } = transfer;
        team.require(peer, "peer")?;
        team.require(self.rank, "rank")?;
        let (from, to) = if send {
            (self.rank, peer)
        } else {
            (peer, self.rank)
        };
        let entry = if send {
            hir_abi::Entry::Send(buffer.dtype)
        } else {
            hir_abi::Entry::Recv(buffer.dtype)
        };
        let access = if send {
            Access::read(&buffer)
        } else {
            Access::write(&buffer)
        };
        let mut host = lock(&self.host);
        let host = &mut *host;
        if backend == Transport::Cuda {
            let region = buffer.footprint();
            let inside = |&(start, end): &Region| start <= region.start && region.end <= end;
            if region.end > region.start && !host.exported.iter().any(inside) {
                return Err(Error::Invalid(format!(
                    "buffer ({} bytes at {:#x}) was not shared with share_mem_handle before a 'cuda' transfer",
                    region.end - region.start,
                    region.start
                )));
            }
        }
        let counter = host
            .transfers
            .entry((backend, team.clone(), from, to, send))
            .or_default();
        let number = *counter;
        *counter += 1;
        let post = Post {
            key: (backend, team.clone(), from, to, number),
            send,
            buffer,
            mapped: match (backend, send) {
                (Transport::Cuda, true) => host.mapped.get(&peer).cloned().unwrap_or_default(),
                _ => Vec::new(),
            },
        };
        if let Some(group) = &mut host.group {
            if group.team.get_or_insert_with(|| team.clone()) != &team {
                return Err(Error::Invalid(format!(
                    "a coalescing group spans teams {} and {team}; the cpu backend groups one team",
                    group.team.as_ref().unwrap()
                )));
            }
            group.posts.push(post);
            group.accesses.push(access);
            let request = group.request;
            return Ok(host.handle(request));
        }
        let queue = match (backend, send) {
            // A CUDA-IPC copy is the sender's: it runs on the current stream
            // once the receiver has posted its buffer. The receive only posts
            // the buffer and completes when the copy lands, so it must not
            // hold the stream (the sends after it would wait behind it, and a
            // ring of such ranks would deadlock): it runs on the team's queue,
            // and `comm.wait` is what orders the stream after it.
            (Transport::Cuda, true) => host.current,
            _ => self.comm_queue(host, &team)?,
        };
        let event = self.post_transfers(host, queue, entry.name(), vec![access], vec![post])?;
        Ok(Self::request(host, event))
    }
}

impl Device for CpuDevice {
    fn rank(&self) -> usize {
        self.rank
    }

    fn num_devices(&self) -> usize {
        self.shared.config.ranks
    }

    fn failed(&self) -> bool {
        self.shared.faults.failed(self.rank)
    }

    fn fail(&self, op: &str, error: Error) {
        self.shared.faults.fail(self.rank, op, error);
    }

    fn current_stream(&self) -> Stream {
        lock(&self.host).current as Stream
    }

    fn set_current_stream(&self, stream: Stream) -> Result<()> {
        let stream = self.check_stream(stream)?;
        lock(&self.host).current = stream;
        Ok(())
    }

    fn stream_from_pool(&self, index: i64) -> Stream {
        1 + index.rem_euclid(self.shared.config.num_streams as i64)
    }

    fn sync_stream(&self, stream: Stream) -> Result<()> {
        let stream = self.check_stream(stream)?;
        let mut host = lock(&self.host);
        let event = Self::last_event(&host, stream);
        if stream == host.current || event.number == 0 {
            return Ok(());
        }
        let current = host.current;
        let name = format!("sync_stream({stream})");
        self.post(&mut host, current, name, Some(event), Vec::new(), None)?;
        Ok(())
    }

    fn alloc(&self, site: i64, bytes: usize) -> Result<NonNull<u8>> {
        let mut host = lock(&self.host);
        let host = &mut *host;
        let current = host.current;
        let handout = lock(&self.allocator).alloc(site, bytes, current as i64, 0)?;
        if let Some(marks) = handout.after {
            self.reuse(host, marks, handout.ptr, bytes)?;
        }
        Ok(handout.ptr)
    }

    fn dealloc(&self, ptr: *mut u8) -> Result<()> {
        let host = lock(&self.host);
        let marks = |_since| {
            Ok((0..host.queues.len())
                .map(|queue| Self::last_event(&host, queue))
                .filter(|event| event.number > 0)
                .collect())
        };
        lock(&self.allocator).dealloc(ptr, host.current as i64, marks)
    }

    fn allocations(&self) -> &Arc<Allocations> {
        &self.allocations
    }

    fn compute(&self, kernel: Kernel) -> Result<()> {
        kernel.validate()?;
        let mut accesses: Vec<Access> = kernel.inputs.iter().map(Access::read).collect();
        accesses.push(Access::write(&kernel.output));
        let name = kernel.entry().name();
        let work: Work = Box::new(move || kernels::run(&kernel));
        let mut host = lock(&self.host);
        let current = host.current;
        self.post(&mut host, current, name, None, accesses, Some(work))?;
        Ok(())
    }

    fn fused(&self, kernel: FusedKernel) -> Result<()> {
        kernel.validate()?;
        let mut accesses: Vec<Access> = kernel.reads().map(Access::read).collect();
        accesses.extend(kernel.writes().map(Access::write));
        let name = kernel.entry().name();
        let work: Work = Box::new(move || fused::run(&kernel));
        let mut host = lock(&self.host);
        let current = host.current;
        self.post(&mut host, current, name, None, accesses, Some(work))?;
        Ok(())
    }

    fn collective(&self, op: CollectiveOp) -> Result<Request> {
        op.validate()?;
        let Some(position) = op.team.position(self.rank) else {
            // Not in the team: nothing to do, and nothing to wait for.
            return Ok(Self::request(&mut lock(&self.host), Event::complete()));
        };
        let root = op.rooted().then(|| op.team.position(op.root)).flatten();
        let is_root = root == Some(position);
        let mut accesses = Vec::new();
        if !matches!(op.op, Collective::Broadcast | Collective::Scatter) || is_root {
            accesses.push(Access::read(&op.input));
        }
        if !matches!(op.op, Collective::Gather | Collective::Reduce) || is_root {
            accesses.push(Access::write(&op.output));
        }
        let mut host = lock(&self.host);
        let host = &mut *host;
        if host.group.is_some() {
            return Err(Error::Invalid(
                "a collective inside a coalescing group: groups hold sends and receives".into(),
            ));
        }
        let number = next(&mut host.collectives, &op.team);
        let queue = self.comm_queue(host, &op.team)?;
        let after = Some(Self::last_event(host, host.current));
        let (shared, rank, name) = (self.shared.clone(), self.rank, op.entry().name());
        let work: Work = Box::new(move || {
            let waiter = shared.waiter();
            let poison = shared.config.poison;
            shared.links.collective(&waiter, rank, number, &op, poison)
        });
        let event = self.post(host, queue, name, after, accesses, Some(work))?;
        Ok(Self::request(host, event))
    }

    fn send(&self, transfer: Transfer) -> Result<Request> {
        self.transfer(transfer, true)
    }

    fn recv(&self, transfer: Transfer) -> Result<Request> {
        self.transfer(transfer, false)
    }

    fn start_coalescing(&self) -> Result<()> {
        let mut host = lock(&self.host);
        if host.group.is_some() {
            return Err(Error::Invalid("coalescing groups do not nest".into()));
        }
        let request = host.issue(None);
        host.group = Some(Group {
            request,
            team: None,
            posts: Vec::new(),
            accesses: Vec::new(),
        });
        Ok(())
    }

    fn end_coalescing(&self) -> Result<Request> {
        let mut host = lock(&self.host);
        let host = &mut *host;
        let Some(group) = host.group.take() else {
            return Err(Error::Invalid(
                "closes no group: no start_coalescing before it".into(),
            ));
        };
        let event = match group.team {
            None => Event::complete(),
            Some(team) => {
                let queue = self.comm_queue(host, &team)?;
                let name = "hir_rt_end_coalescing".to_string();
                self.post_transfers(host, queue, name, group.accesses, group.posts)?
            }
        };
        host.requests[group.request] = Some(event);
        Ok(host.handle(group.request))
    }

    fn wait(&self, request: Request) -> Result<()> {
        let mut host = lock(&self.host);
        let event = usize::try_from(request - host.retired - 1)
            .ok()
            .and_then(|index| host.requests.get(index))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "request {request} is unknown (requests do not outlive a synchronize)"
                ))
            })?
            .clone()
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "request {request} is of a coalescing group that has not ended: \
                     wait for the group's end_coalescing request"
                ))
            })?;
        let current = host.current;
        if event.number == 0 || event.queue == current {
            return Ok(());
        }
        self.post(
            &mut host,
            current,
            "wait".into(),
            Some(event),
            Vec::new(),
            None,
        )?;
        Ok(())
    }

    fn share_mem_handle(&self, buffer: View, team: Team) -> Result<()> {
        let Some(position) = team.position(self.rank) else {
            return Ok(());
        };
        let footprint = buffer.footprint();
        let region = (footprint.start, footprint.end);
        let mut host = lock(&self.host);
        if host.shared.contains(&(region, team.clone())) {
            return Ok(());
        }
        let number = next(&mut host.exchanges, &team);
        let regions = self.on_host("share_mem_handle", || {
            let waiter = self.shared.waiter();
            self.shared
                .links
                .share(&waiter, &team, number, position, region)
        })?;
        // Every member's, this rank's own too: a send to itself writes there.
        for (&peer, &peer_region) in team.ranks().iter().zip(regions.iter()) {
            host.mapped.entry(peer).or_default().push(peer_region);
        }
        host.exported.push(region);
        host.shared.insert((region, team));
        Ok(())
    }

    fn barrier(&self, team: Team, backend: Transport) -> Result<()> {
        if backend != Transport::Nccl {
            return Err(Error::Invalid(
                "a barrier runs on the 'nccl' backend".into(),
            ));
        }
        let Some(position) = team.position(self.rank) else {
            return Ok(());
        };
        let number = next(&mut lock(&self.host).barriers, &team);
        self.on_host("barrier", || {
            let waiter = self.shared.waiter();
            self.shared.links.barrier(&waiter, &team, number, position)
        })
    }

    fn synchronize(&self) -> Result<()> {
        self.drain();
        Ok(())
    }
}

#[cfg(test)]
mod process_tests;
#[cfg(test)]
mod tests;
