//! Race detection over one rank's queues, by vector clocks. Every task gets,
//! when the host enqueues it, the clock of its queue: entry `q` counts the
//! tasks of queue `q` it is ordered after (its own queue's, plus all it
//! inherits through events: `sync_stream`, `wait`, and a communication
//! waiting for the stream that posted it). A task `a` of queue `q` numbered
//! `n` happens before task `b` iff `b`'s clock has entry `q` >= `n`.
//!
//! The tracker keeps the accesses of past tasks; a new access that overlaps
//! one of them, with at least one a write, and does not happen after it is a
//! race, whatever the timing: a missing `comm.wait` or `host.sync_stream` is
//! caught even when the run happens to get away with it. Checks happen on the
//! host at enqueue time, so they are deterministic. A race is the rank's
//! error ([`Races::Fatal`]), or a warning given once per pair of ops
//! ([`Races::Warn`], for a program with a race known to be benign).

use crate::error::{Error, Result};
use crate::memref::{Footprint, View};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// Per queue, how many of its tasks are ordered before.
pub(crate) type Clock = Vec<u64>;

pub(crate) fn entry(clock: &Clock, queue: usize) -> u64 {
    clock.get(queue).copied().unwrap_or(0)
}

pub(crate) fn join(clock: &mut Clock, other: &Clock) {
    if clock.len() < other.len() {
        clock.resize(other.len(), 0);
    }
    for (mine, &theirs) in clock.iter_mut().zip(other) {
        *mine = (*mine).max(theirs);
    }
}

/// A view an op reads or writes.
pub(crate) struct Access {
    pub view: View,
    pub write: bool,
}

impl Access {
    pub fn read(view: &View) -> Access {
        Access {
            view: view.clone(),
            write: false,
        }
    }

    pub fn write(view: &View) -> Access {
        Access {
            view: view.clone(),
            write: true,
        }
    }
}

struct Record {
    queue: usize,
    number: u64,
    /// `hir_rt_allgather_f32 on comm [0, 1]`.
    who: Arc<str>,
    view: View,
    footprint: Footprint,
    write: bool,
}

/// What a data race does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Races {
    /// It is the rank's error, in the op that makes it (the default).
    #[default]
    Fatal,
    /// It is a warning, given once for each pair of ops (entry and queue,
    /// either way round), and the run goes on.
    Warn,
}

/// Records whose byte span is at most this are indexed by address; wider
/// ones (a whole buffer, a strided view across one) are few and scanned.
const NARROW: usize = 64 << 10;

/// The accesses of past tasks, indexed by where they start, so that a loop
/// of many slices checks each access against its neighbours only, not
/// against every slice before it.
pub(crate) struct Tracker {
    races: Races,
    /// The pairs of ops (in order of their names) already warned of.
    warned: HashSet<(Arc<str>, Arc<str>)>,
    /// Records of span at most [`NARROW`], by their first byte.
    narrow: BTreeMap<usize, Vec<Record>>,
    /// The widest span in `narrow`: a record overlapping `[start, end)`
    /// starts at or after `start - widest`.
    widest: usize,
    wide: Vec<Record>,
}

impl Tracker {
    pub fn new(races: Races) -> Tracker {
        Tracker {
            races,
            warned: HashSet::new(),
            narrow: BTreeMap::new(),
            widest: 0,
            wide: Vec::new(),
        }
    }

    /// Checks the accesses of task `number` of `queue` (named `who`), whose
    /// clock is `clock`, then records them. A race is an error, or with
    /// [`Races::Warn`] the warning to give (`None` when there is none, or
    /// when these two ops were warned of before).
    pub fn access(
        &mut self,
        queue: usize,
        number: u64,
        clock: &Clock,
        who: &str,
        accesses: Vec<Access>,
    ) -> Result<Option<String>> {
        let footprints: Vec<Footprint> = accesses.iter().map(|a| a.view.footprint()).collect();
        let mut warning = None;
        for (access, footprint) in accesses.iter().zip(&footprints) {
            let conflict = self.near(footprint).find(|record| {
                record.queue != queue
                    && entry(clock, record.queue) < record.number
                    && (record.write || access.write)
                    && record.footprint.overlaps(footprint)
            });
            if let Some(record) = conflict {
                let race = Error::Race(format!(
                    "{who} {} {} bytes at {:#x} while {} may still {} them, and no event orders \
                     the two (a missing comm.wait or host.sync_stream?)",
                    if access.write { "writes" } else { "reads" },
                    footprint.end - footprint.start,
                    footprint.start,
                    record.who,
                    if record.write { "write" } else { "read" },
                ));
                if self.races == Races::Fatal {
                    return Err(race);
                }
                // One site either way round: a loop's read racing with the
                // last iteration's write, and its write with that read.
                let (a, b): (Arc<str>, Arc<str>) = (who.into(), record.who.clone());
                let pair = if a <= b { (a, b) } else { (b, a) };
                if warning.is_none() && !self.warned.contains(&pair) {
                    self.warned.insert(pair);
                    warning = Some(race.to_string());
                }
            }
        }
        let who: Arc<str> = who.into();
        for (access, footprint) in accesses.into_iter().zip(footprints) {
            // A later access of the same view from the same queue races with
            // whatever the earlier one raced with: keep only the later one
            // (a read does not stand in for a write).
            let superseded = |record: &Record| {
                record.queue == queue
                    && record.view == access.view
                    && (access.write || !record.write)
            };
            let span = footprint.end - footprint.start;
            let records = if span <= NARROW {
                self.widest = self.widest.max(span);
                self.narrow.entry(footprint.start).or_default()
            } else {
                &mut self.wide
            };
            records.retain(|record| !superseded(record));
            records.push(Record {
                queue,
                number,
                who: who.clone(),
                view: access.view,
                footprint,
                write: access.write,
            });
        }
        Ok(warning)
    }

    /// The records that may overlap `footprint`.
    fn near(&self, footprint: &Footprint) -> impl Iterator<Item = &Record> {
        let from = footprint.start.saturating_sub(self.widest);
        self.narrow
            .range(from..footprint.end.max(from))
            .flat_map(|(_, records)| records)
            .chain(&self.wide)
    }

    /// Forgets every access: the host has waited for all of them.
    pub fn clear(&mut self) {
        self.narrow.clear();
        self.wide.clear();
        self.widest = 0;
    }
}
