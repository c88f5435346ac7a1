//! A timeline of what ran where: one slice per op or communication, on a
//! track per (rank, stream), written as Chrome trace JSON, which Perfetto
//! (ui.perfetto.dev) and `chrome://tracing` open.
//!
//! Format: `{"traceEvents": [...], "displayTimeUnit": "ms"}`, each rank a
//! process (`pid` = rank, named `rank N`), each track a thread (`tid`: 0 is
//! the host, then the rank's queues in creation order: `stream 0`, the pool,
//! `comm [team]`), each slice a complete event (`"ph": "X"`, `ts` and `dur`
//! in microseconds since the world started).

use crate::lock;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// A track of the trace: a rank's host (`0`) or one of its queues.
pub type Track = (usize, usize);

#[derive(Clone, Debug)]
pub struct Slice {
    pub rank: usize,
    pub tid: usize,
    pub name: String,
    /// Microseconds since the trace began.
    pub start_us: f64,
    pub duration_us: f64,
}

pub struct Trace {
    epoch: Instant,
    tracks: Mutex<BTreeMap<Track, String>>,
    slices: Mutex<Vec<Slice>>,
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            epoch: Instant::now(),
            tracks: Mutex::new(BTreeMap::new()),
            slices: Mutex::new(Vec::new()),
        }
    }
}

impl Trace {
    /// Names a track.
    pub fn track(&self, (rank, tid): Track, name: &str) {
        lock(&self.tracks).insert((rank, tid), name.to_string());
    }

    pub fn record(&self, (rank, tid): Track, name: &str, start: Instant, end: Instant) {
        let since = |t: Instant| t.saturating_duration_since(self.epoch).as_secs_f64() * 1e6;
        lock(&self.slices).push(Slice {
            rank,
            tid,
            name: name.to_string(),
            start_us: since(start),
            duration_us: since(end) - since(start),
        });
    }

    /// Microseconds since the trace began.
    pub fn now_us(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64() * 1e6
    }

    /// Records a slice timed by another clock, already in trace microseconds.
    pub fn record_us(&self, (rank, tid): Track, name: &str, start_us: f64, duration_us: f64) {
        lock(&self.slices).push(Slice {
            rank,
            tid,
            name: name.to_string(),
            start_us,
            duration_us,
        });
    }

    /// The slices so far, in the order they ended.
    pub fn slices(&self) -> Vec<Slice> {
        lock(&self.slices).clone()
    }

    pub fn to_chrome_json(&self) -> String {
        chrome_json(&self.chrome_events())
    }

    /// The trace as Chrome events: metadata naming the ranks and tracks, then
    /// the slices.
    pub fn chrome_events(&self) -> Vec<String> {
        let mut events = Vec::new();
        let tracks = lock(&self.tracks).clone();
        let mut ranks: Vec<usize> = tracks.keys().map(|&(rank, _)| rank).collect();
        ranks.dedup();
        for rank in ranks {
            events.push(format!(
                r#"{{"ph":"M","name":"process_name","pid":{rank},"args":{{"name":"rank {rank}"}}}}"#
            ));
            events.push(format!(
                r#"{{"ph":"M","name":"process_sort_index","pid":{rank},"args":{{"sort_index":{rank}}}}}"#
            ));
        }
        for ((rank, tid), name) in &tracks {
            events.push(format!(
                r#"{{"ph":"M","name":"thread_name","pid":{rank},"tid":{tid},"args":{{"name":{}}}}}"#,
                json_string(name)
            ));
            events.push(format!(
                r#"{{"ph":"M","name":"thread_sort_index","pid":{rank},"tid":{tid},"args":{{"sort_index":{tid}}}}}"#
            ));
        }
        for slice in lock(&self.slices).iter() {
            events.push(format!(
                r#"{{"ph":"X","name":{},"pid":{},"tid":{},"ts":{:.3},"dur":{:.3}}}"#,
                json_string(&slice.name),
                slice.rank,
                slice.tid,
                slice.start_us,
                slice.duration_us
            ));
        }
        events
    }

    pub fn write_chrome_trace(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_chrome_json())
    }
}

/// A Chrome trace file of `events`, which may come from several [`Trace`]s
/// (ranks in several processes: each names its own rank's process).
pub fn chrome_json(events: &[String]) -> String {
    format!(
        "{{\"traceEvents\":[\n{}\n],\"displayTimeUnit\":\"ms\"}}\n",
        events.join(",\n")
    )
}

fn json_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(quoted, "\\u{:04x}", c as u32).unwrap(),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}
