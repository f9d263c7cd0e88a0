//! Where a set of queries lands in each committed layer: which cosets are opened, which of
//! their values the verifier folds itself and which the proof must carry.

use ballast_merkle::{batch_opening_len, check_indices};

use crate::FriError;

/// The queried cosets of every committed layer, for queries at strictly increasing input
/// positions. Prover, verifier and the proof decoder derive the same plan, so the proof's
/// sizes follow from the positions alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryPlan {
    layers: Vec<PlannedLayer>,
    final_positions: Vec<usize>,
}

/// One layer's share of a [`QueryPlan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedLayer {
    log_len: usize,
    log_arity: usize,
    /// The opened cosets (leaf indices), strictly increasing.
    leaves: Vec<usize>,
    /// Per opened coset, the slots a query position of this layer fills, increasing.
    known: Vec<Vec<usize>>,
}

impl QueryPlan {
    /// The plan for queries at `positions` of an input of 2^`log_domain` values, folded in
    /// rounds of 2^`log_arities[i]`.
    ///
    /// # Errors
    /// [`FriError::Positions`] if the positions are empty, not strictly increasing or
    /// outside the domain, or [`FriError::Shape`] if the rounds fold more than the domain.
    pub fn new(
        log_domain: usize,
        log_arities: &[usize],
        positions: &[usize],
    ) -> Result<Self, FriError> {
        check_indices(log_domain, positions).map_err(|e| FriError::Positions(e.to_string()))?;
        let folds: usize = log_arities.iter().sum();
        if folds > log_domain {
            return Err(FriError::Shape {
                what: "binary folds",
                expected: log_domain,
                got: folds,
            });
        }
        let mut log_len = log_domain;
        let mut positions = positions.to_vec();
        let mut layers = Vec::with_capacity(log_arities.len());
        for &log_arity in log_arities {
            let stride_bits = log_len - log_arity;
            let mut placed: Vec<(usize, usize)> = positions
                .iter()
                .map(|&p| (p & ((1 << stride_bits) - 1), p >> stride_bits))
                .collect();
            placed.sort_unstable();
            let mut leaves: Vec<usize> = Vec::new();
            let mut known: Vec<Vec<usize>> = Vec::new();
            for (leaf, slot) in placed {
                if leaves.last() == Some(&leaf) {
                    known.last_mut().expect("a coset per leaf").push(slot);
                } else {
                    leaves.push(leaf);
                    known.push(vec![slot]);
                }
            }
            positions.clone_from(&leaves);
            layers.push(PlannedLayer {
                log_len,
                log_arity,
                leaves,
                known,
            });
            log_len = stride_bits;
        }
        Ok(Self {
            layers,
            final_positions: positions,
        })
    }

    /// The committed layers' shares, in order.
    pub fn layers(&self) -> &[PlannedLayer] {
        &self.layers
    }

    /// The positions, in the domain of the final polynomial, the queries fold to.
    pub fn final_positions(&self) -> &[usize] {
        &self.final_positions
    }
}

impl PlannedLayer {
    /// log2 of the layer's length.
    pub fn log_len(&self) -> usize {
        self.log_len
    }

    /// log2 of the round's arity: the values per coset.
    pub fn log_arity(&self) -> usize {
        self.log_arity
    }

    /// Height of the layer's tree: log2 of its number of cosets.
    pub fn height(&self) -> usize {
        self.log_len - self.log_arity
    }

    /// The opened cosets (leaf indices), strictly increasing; also the positions the
    /// queries occupy in the next layer.
    pub fn leaves(&self) -> &[usize] {
        &self.leaves
    }

    /// Per opened coset, the slots the verifier already knows, increasing.
    pub fn known_slots(&self) -> &[Vec<usize>] {
        &self.known
    }

    /// The (leaf, slot) pairs whose values the proof carries, coset by coset and slot by slot.
    pub fn unknown_slots(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let arity = 1usize << self.log_arity;
        self.leaves
            .iter()
            .zip(&self.known)
            .flat_map(move |(&leaf, known)| {
                (0..arity)
                    .filter(move |slot| known.binary_search(slot).is_err())
                    .map(move |slot| (leaf, slot))
            })
    }

    /// How many values the proof carries for this layer.
    pub fn unknown_count(&self) -> usize {
        let arity = 1usize << self.log_arity;
        self.known.iter().map(|k| arity - k.len()).sum()
    }

    /// How many digests the layer's batch opening has.
    pub fn opening_len(&self) -> usize {
        batch_opening_len(self.height(), &self.leaves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_collapse_into_cosets_layer_by_layer() {
        // 2^6 values, rounds of 8 then 2: strides 8, then 4.
        let plan = QueryPlan::new(6, &[3, 1], &[1, 9, 17, 20, 63]).unwrap();
        let [first, second] = plan.layers() else {
            panic!("two layers")
        };
        assert_eq!(first.leaves(), [1, 4, 7]);
        assert_eq!(first.known_slots(), [vec![0, 1, 2], vec![2], vec![7]]);
        assert_eq!(first.unknown_count(), 5 + 7 + 7);
        assert_eq!(first.unknown_slots().count(), first.unknown_count());
        assert_eq!(first.height(), 3);
        // Layer 1 holds 8 values in cosets {r, r + 4}: positions 1, 4, 7.
        assert_eq!(second.leaves(), [0, 1, 3]);
        assert_eq!(second.known_slots(), [vec![1], vec![0], vec![1]]);
        assert_eq!(plan.final_positions(), [0, 1, 3]);
    }

    #[test]
    fn bad_positions_are_refused() {
        assert!(QueryPlan::new(4, &[3], &[]).is_err());
        assert!(QueryPlan::new(4, &[3], &[3, 3]).is_err());
        assert!(QueryPlan::new(4, &[3], &[5, 2]).is_err());
        assert!(QueryPlan::new(4, &[3], &[16]).is_err());
        assert!(QueryPlan::new(4, &[3, 3], &[1]).is_err());
        assert!(QueryPlan::new(4, &[], &[1, 2]).is_ok());
    }
}
