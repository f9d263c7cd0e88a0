//! How many items each section of a segment holds: exactly, once the segment's query
//! positions are known (the decoder and the verifier's shape check), or at most (the
//! header's bound).

use ballast_fri::{FriLayerOpening, PlannedLayer, QueryPlan};
use ballast_merkle::batch_opening_len;

use crate::layout::{Count, SectionLayout, segment_sections};
use crate::values::Values;
use crate::{SegmentProof, VerifierError};
use ballast_backend::Geometry;

/// What a segment's counts resolve against: its shape, and once its positions are known
/// (they follow `query count`), their plan.
pub(crate) struct Sizes<'a> {
    pub shape: &'a Geometry,
    pub arities: Vec<usize>,
    plan: Option<QueryPlan>,
    /// Nodes of the batch opening of the trace (and of the quotient) at the positions.
    opening: usize,
}

impl<'a> Sizes<'a> {
    /// The counts of a segment of `shape`.
    pub fn new(shape: &'a Geometry) -> Self {
        Self {
            shape,
            arities: shape.fri_arities(),
            plan: None,
            opening: batch_opening_len(shape.log_lde(), &[]),
        }
    }

    /// Items of `count` in layer `layer` of the segment whose positions are
    /// [`set_positions`](Self::set_positions); `q` before they are planned.
    ///
    /// # Panics
    /// For an opening's or a layer's count before the positions are planned.
    pub fn exact(&self, count: Count, q: usize, layer: usize) -> usize {
        let shape = self.shape;
        match count {
            Count::Exactly(n) => n,
            Count::Width => shape.width,
            Count::QuotientWidth => shape.quotient_width(),
            Count::FriRounds => self.arities.len(),
            Count::FinalPoly => 1 << shape.log_final_poly_len,
            Count::Queries => q,
            Count::TraceRows => q * shape.width,
            Count::QuotientRows => q * shape.quotient_width(),
            Count::Opening => self.opening,
            Count::LayerValues => self.planned(layer).unknown_count(),
            Count::LayerOpening => self.planned(layer).opening_len(),
            Count::Workload
            | Count::States
            | Count::PublicInputs
            | Count::TablesTraceRows
            | Count::TablesQuotientRows => panic!("{count:?} is not a segment's count"),
        }
    }

    /// The most items of `count` in layer `layer` of any segment of the shape: every query
    /// at its own position, nothing shared.
    pub fn max(&self, count: Count, layer: usize) -> u64 {
        let shape = self.shape;
        let q = shape.num_queries as u64;
        let log_len = shape.log_lde() - self.arities[..layer].iter().sum::<usize>();
        let log_arity = self.arities.get(layer).copied().unwrap_or(0);
        match count {
            Count::Opening => q * shape.log_lde() as u64,
            Count::LayerValues => q * ((1 << log_arity) - 1),
            Count::LayerOpening => q * (log_len - log_arity) as u64,
            other => self.exact(other, shape.num_queries, layer) as u64,
        }
    }

    /// Plans the queries at `positions`, after checking they are 1..=num_queries strictly
    /// increasing positions of the LDE domain.
    ///
    /// # Errors
    /// Why they are not.
    pub fn set_positions(&mut self, positions: &[usize]) -> Result<(), String> {
        let num_queries = self.shape.num_queries;
        if !(1..=num_queries).contains(&positions.len()) {
            return Err(format!(
                "{} positions, must be 1..={num_queries}",
                positions.len()
            ));
        }
        let plan = QueryPlan::new(self.shape.log_lde(), &self.arities, positions)
            .map_err(|e| e.to_string())?;
        self.plan = Some(plan);
        self.opening = batch_opening_len(self.shape.log_lde(), positions);
        Ok(())
    }

    fn planned(&self, layer: usize) -> &PlannedLayer {
        &self
            .plan
            .as_ref()
            .expect("the positions are planned")
            .layers()[layer]
    }
}

/// The most bytes a segment of `shape` can have, or `None` on overflow.
pub(crate) fn max_segment_len(shape: &Geometry) -> Option<u64> {
    let sizes = Sizes::new(shape);
    segment_sections(sizes.arities.len()).try_fold(0u64, |total, (section, layer)| {
        sizes
            .max(section.count, layer.unwrap_or(0))
            .checked_mul(section.item.bytes() as u64)?
            .checked_add(total)
    })
}

/// Bytes of `values` of `section` as encoded.
pub(crate) fn encoded_len<T>(section: &SectionLayout<T>, values: &Values<'_>) -> u64 {
    (values.len() * section.item.bytes()) as u64
}

/// Rejects a segment proof whose sections do not have the sizes its shape and query
/// positions fix, before any algebra: the check the decoder makes of bytes, made of a proof
/// built in memory.
///
/// # Errors
/// [`VerifierError::Shape`] naming the first section of another size, or
/// [`VerifierError::QueryPositions`] for positions no transcript draws.
pub(crate) fn check_segment(
    proof: &SegmentProof,
    shape: &Geometry,
    segment: usize,
) -> Result<(), VerifierError> {
    let mut sizes = Sizes::new(shape);
    let rounds = sizes.arities.len();
    if proof.queries.fri.len() != rounds {
        return Err(VerifierError::Shape {
            what: "fri layers",
            expected: rounds,
            got: proof.queries.fri.len(),
        });
    }
    let q = proof.queries.positions.len();
    for (section, layer) in segment_sections(rounds) {
        let layer = layer.unwrap_or(0);
        let expected = sizes.exact(section.count, q, layer);
        let got = (section.get)(proof, layer).len();
        if got != expected {
            return Err(VerifierError::Shape {
                what: section.name,
                expected,
                got,
            });
        }
        if section.count == Count::Queries {
            sizes
                .set_positions(&proof.queries.positions)
                .map_err(|_| VerifierError::QueryPositions { segment })?;
        }
    }
    Ok(())
}

/// An empty FRI layer opening for each of `rounds` rounds: what decoding fills.
pub(crate) fn empty_layers(rounds: usize) -> Vec<FriLayerOpening> {
    vec![FriLayerOpening::default(); rounds]
}
