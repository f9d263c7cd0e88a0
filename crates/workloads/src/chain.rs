//! What the hash chains share: n steps cut into segments of equally many, the last segment
//! proving what is left, and the flags that set n.

use ballast_stark::{MAX_SEGMENTS, ParamsError};

use crate::flags::{FlagError, FlagValues};

/// A chain's step count and how many steps one segment holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Steps {
    /// n: the steps of the whole chain.
    pub total: u64,
    /// Steps a full segment proves.
    pub per_segment: u64,
}

impl Steps {
    /// Refuses a chain of no steps, or of more than [`MAX_SEGMENTS`] segments.
    ///
    /// # Errors
    /// [`ParamsError::OutOfRange`] for `steps`.
    pub fn check(self) -> Result<(), ParamsError> {
        let max = MAX_SEGMENTS as u64 * self.per_segment;
        if (1..=max).contains(&self.total) {
            return Ok(());
        }
        Err(ParamsError::OutOfRange {
            name: "steps",
            value: usize::try_from(self.total).unwrap_or(usize::MAX),
            min: 1,
            max: usize::try_from(max).unwrap_or(usize::MAX),
        })
    }

    /// Segments the steps take.
    pub fn segments(self) -> usize {
        self.total.div_ceil(self.per_segment) as usize
    }

    /// Steps segment `segment` proves: a full segment, or what is left for the last one.
    pub fn in_segment(self, segment: usize) -> u64 {
        self.per_segment
            .min(self.total - segment as u64 * self.per_segment)
    }
}

/// A chain's step count from its flags: `--steps`, or `--segments` full segments of
/// `per_segment` steps (`default_segments` of them when neither is given), not both; a count
/// out of range names both flags.
///
/// # Errors
/// Both flags, zero segments, an unreadable number, or a count [`Steps::check`] refuses.
pub(crate) fn steps_from_flags(
    flags: &FlagValues,
    per_segment: u64,
    default_segments: u64,
) -> Result<u64, FlagError> {
    let total = match (flags.number("steps")?, flags.number::<u64>("segments")?) {
        (Some(_), Some(_)) => {
            return Err(FlagError("give --steps or --segments, not both".into()));
        }
        (Some(steps), None) => steps,
        (None, segments) => match segments.unwrap_or(default_segments) {
            0 => return Err(FlagError::invalid("segments", "0, must be at least 1")),
            segments => segments.saturating_mul(per_segment),
        },
    };
    Steps { total, per_segment }
        .check()
        .map_err(|e| FlagError::invalid("steps or --segments", e))?;
    Ok(total)
}
