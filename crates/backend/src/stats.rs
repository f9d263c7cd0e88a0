//! Where proving time goes, phase by phase.

use std::time::{Duration, Instant};

/// A stage of proving, in protocol order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Running the computation to build the trace.
    Trace,
    /// Checking the trace against the AIR before proving it.
    Check,
    /// Low-degree extensions: of the trace, and of the quotient's chunks.
    Lde,
    /// Merkle trees over the extended rows: the trace's and the quotient's.
    Tree,
    /// Evaluating the constraints into the quotient and splitting it into chunks.
    Quotient,
    /// Out-of-domain evaluations.
    OutOfDomain,
    /// The DEEP composition over the LDE domain.
    Deep,
    /// The FRI commit phase.
    Fri,
    /// Proof-of-work grinding.
    Grind,
    /// Opening the commitments at the query positions.
    Queries,
}

impl Phase {
    /// Every phase, in protocol order.
    pub const ALL: [Phase; 10] = [
        Phase::Trace,
        Phase::Check,
        Phase::Lde,
        Phase::Tree,
        Phase::Quotient,
        Phase::OutOfDomain,
        Phase::Deep,
        Phase::Fri,
        Phase::Grind,
        Phase::Queries,
    ];

    /// A short, stable name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Trace => "trace",
            Phase::Check => "check",
            Phase::Lde => "lde",
            Phase::Tree => "tree",
            Phase::Quotient => "quotient",
            Phase::OutOfDomain => "out_of_domain",
            Phase::Deep => "deep",
            Phase::Fri => "fri",
            Phase::Grind => "grind",
            Phase::Queries => "queries",
        }
    }
}

/// Wall time spent in each phase, summed over segments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    spent: [Duration; Phase::ALL.len()],
}

impl PhaseTimes {
    /// Runs `f`, adding its wall time to `phase`.
    pub fn time<T>(&mut self, phase: Phase, f: impl FnOnce() -> T) -> T {
        let _span = tracing::info_span!("phase", name = phase.name()).entered();
        let start = Instant::now();
        let out = f();
        self.spent[phase as usize] += start.elapsed();
        out
    }

    /// Adds `spent` to `phase`: time measured elsewhere (a device's events).
    pub fn add(&mut self, phase: Phase, spent: Duration) {
        self.spent[phase as usize] += spent;
    }

    /// Time spent in `phase`.
    pub fn get(&self, phase: Phase) -> Duration {
        self.spent[phase as usize]
    }

    /// Every phase with its time, in protocol order.
    pub fn iter(&self) -> impl Iterator<Item = (Phase, Duration)> + '_ {
        Phase::ALL.into_iter().map(|p| (p, self.get(p)))
    }
}

/// What a device backend counted: its memory's high-water mark and the bytes it moved
/// between host and device, each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// The most device memory the backend held at once, in bytes.
    pub device_peak_bytes: u64,
    /// Bytes copied from the host to the device.
    pub pcie_up_bytes: u64,
    /// Bytes copied from the device to the host.
    pub pcie_down_bytes: u64,
}
