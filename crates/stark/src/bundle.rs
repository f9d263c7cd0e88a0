//! Joining parts into the proof of their statement.
//!
//! A part on its own proves less than a statement: that *if* the computation is in the
//! part's start state at its first segment, it runs through the part's later states. Only a
//! part starting at segment 0 has its start state checked (it must be the workload's);
//! [`bundle`] checks that each part starts where the one before it ends, and the result,
//! verified as a whole, is the proof a single host writes, byte for byte.

use std::ops::Range;

use crate::proof::check_segments;
use crate::statement::{check_start, check_states, verify_segments};
use crate::{BundleError, Proof, VerifierError, VerifyPolicy, Workload};

/// Joins `parts` (each with the name errors call it by, e.g. its file name) into the proof
/// of their statement: byte for byte what [`prove_statement`](crate::prove_statement)
/// writes.
///
/// Checks that every part proves the first part's statement with its parameters, that the
/// parts cover every segment exactly once, that each starts where the one before it ends,
/// and that the joined proof passes [`verify_statement`](crate::verify_statement) under
/// `policy` — its floor, its required parameters and its cap. A bundle is a verdict.
///
/// # Errors
/// The first problem found, naming the part.
pub fn bundle<W: Workload>(
    parts: Vec<(String, Proof<W>)>,
    policy: &VerifyPolicy,
) -> Result<Proof<W>, BundleError> {
    let Some((reference, first)) = parts.first() else {
        return Err(BundleError::Empty);
    };
    if let Some((name, part)) = parts.iter().find(|(_, p)| !p.same_statement(first)) {
        return Err(BundleError::Foreign {
            part: name.clone(),
            reference: reference.clone(),
            what: if part.workload == first.workload {
                "parameter set"
            } else {
                "statement"
            },
        });
    }
    let invalid = |part: &String, reason: VerifierError| BundleError::Invalid {
        part: part.clone(),
        reason,
    };
    let (params, workload) = (first.params, first.workload.clone());
    workload
        .validate()
        .map_err(VerifierError::from)
        .and_then(|()| policy.check_params(&workload.air(0), &params))
        .map_err(|reason| invalid(reference, reason))?;
    // Shapes first, so that a malformed part is named as itself, not as a neighbour's overlap.
    for (name, part) in &parts {
        check_segments(&part.workload, part.first, part.segments.len())
            .map_err(VerifierError::from)
            .and_then(|()| check_states(part))
            .map_err(|reason| invalid(name, reason))?;
    }
    let mut parts = parts;
    parts.sort_by_key(|(_, p)| (p.first, p.segments.len()));
    let ends: Vec<PartEnds<'_, W::State>> = (parts.iter())
        .map(|(name, part)| PartEnds::of(name, part.first, &part.states))
        .collect();
    check_cover(&ends, workload.segments())?;
    let (names, whole) = join(parts);
    let len = whole.encoded_len();
    if len > policy.max_proof_bytes {
        return Err(BundleError::TooLarge {
            len,
            cap: policy.max_proof_bytes,
        });
    }
    check_start(&whole).map_err(|reason| invalid(&names[0].0, reason))?;
    let verdicts: Vec<Result<(), BundleError>> = {
        use rayon::prelude::*;
        names
            .par_iter()
            .map(|(name, range)| {
                let states = &whole.states[range.start..=range.end];
                let segments = &whole.segments[range.clone()];
                verify_segments(&workload, &params, range.start, states, segments)
                    .map_err(|reason| invalid(name, reason))
            })
            .collect()
    };
    verdicts.into_iter().collect::<Result<(), _>>()?;
    Ok(whole)
}

/// A part as [`check_cover`] judges it: its name, the segments it covers and the states it
/// starts and ends in.
pub struct PartEnds<'a, S> {
    /// What errors call it.
    pub name: &'a str,
    /// The segments it covers.
    pub range: Range<usize>,
    /// The state its first segment starts in.
    pub start: &'a S,
    /// The state its last segment ends in.
    pub end: &'a S,
}

impl<'a, S> PartEnds<'a, S> {
    /// The part `name` whose segments from `first` start and end in `states` (the first
    /// segment's start, then each one's end).
    ///
    /// # Panics
    /// If `states` is empty.
    pub fn of(name: &'a str, first: usize, states: &'a [S]) -> Self {
        let (start, end) = (&states[0], &states[states.len() - 1]);
        let range = first..first.saturating_add(states.len() - 1);
        Self {
            name,
            range,
            start,
            end,
        }
    }
}

/// Checks that `parts`, in the order of their first segments, cover a statement's
/// segments `0..count` once each, each starting where the one before it ends: what joins
/// parts, plain ([`bundle`]) or compressed.
///
/// # Errors
/// A segment no part covers, one two parts cover, or a part that does not start where the
/// one before it ends, each naming the part.
pub fn check_cover<S: PartialEq>(
    parts: &[PartEnds<'_, S>],
    count: usize,
) -> Result<(), BundleError> {
    let mut covered = 0;
    for (k, part) in parts.iter().enumerate() {
        let range = part.range.clone();
        let previous = k.checked_sub(1).map(|j| &parts[j]);
        if range.start > covered {
            return Err(BundleError::Missing {
                range: covered..range.start,
                after: previous.map(|p| p.name.to_string()),
            });
        }
        if let Some(previous) = previous {
            if range.start < covered {
                return Err(BundleError::Overlap {
                    part: part.name.to_string(),
                    range,
                    other: previous.name.to_string(),
                    other_range: previous.range.clone(),
                });
            }
            if previous.end != part.start {
                return Err(BundleError::Chain {
                    part: part.name.to_string(),
                    previous: previous.name.to_string(),
                });
            }
        }
        covered = range.end;
    }
    if covered < count {
        return Err(BundleError::Missing {
            range: covered..count,
            after: parts.last().map(|p| p.name.to_string()),
        });
    }
    Ok(())
}

/// The parts, in order and chained, as one proof from segment 0; and each part's name with
/// the segments it brought.
fn join<W: Workload>(parts: Vec<(String, Proof<W>)>) -> (Vec<(String, Range<usize>)>, Proof<W>) {
    let mut names = Vec::with_capacity(parts.len());
    let mut parts = parts.into_iter();
    let (name, mut whole) = parts.next().expect("at least one part");
    names.push((name, whole.range()));
    for (name, part) in parts {
        names.push((name, part.range()));
        whole.states.extend(part.states.into_iter().skip(1));
        whole.segments.extend(part.segments);
    }
    (names, whole)
}
