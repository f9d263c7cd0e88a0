//! The steps prover and verifier must take identically: transcript binding and the
//! out-of-domain point.

use ballast_air::Air;
use ballast_field::{Ext3, Felt};
use ballast_ntt::LdePlan;
use ballast_transcript::Transcript;

use crate::{OodValues, StarkParams};

/// The protocol version, bound into every transcript and written in every proof.
pub const PROTOCOL_VERSION: u16 = 1;

/// Domain separator of the STARK transcript.
const DOMAIN: &[u8] = b"ballast-stark";

/// Where a segment sits in a continuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentPosition {
    /// Zero-based segment index.
    pub index: usize,
    /// Number of segments in the statement.
    pub count: usize,
}

/// A transcript bound to everything the proof is about, before any challenge: protocol
/// version, the AIR's identity and shape, every parameter, the segment's position and the
/// public inputs.
pub(crate) fn bind<A: Air>(air: &A, params: &StarkParams, position: SegmentPosition) -> Transcript {
    let mut t = Transcript::new(DOMAIN);
    t.absorb_u64("protocol-version", u64::from(PROTOCOL_VERSION));
    t.absorb("air-id", air.id().as_bytes());
    t.absorb_u64("width", air.width() as u64);
    t.absorb_u64("log-rows", air.log_rows() as u64);
    t.absorb_u64("constraints", air.num_transition_constraints() as u64);
    t.absorb_u64("constraint-degree", air.max_constraint_degree() as u64);
    params.absorb_into(&mut t);
    t.absorb_u64("segment-index", position.index as u64);
    t.absorb_u64("segment-count", position.count as u64);
    t.absorb_felts("public-inputs", &air.public_inputs());
    t
}

/// Draws the out-of-domain point z, redrawing while z or z·ω would fall in the trace domain
/// H or the LDE coset g·H' (where a zerofier or a DEEP denominator vanishes). A draw is
/// redrawn with probability below 2^-150.
pub(crate) fn draw_ood_point(t: &mut Transcript, log_rows: usize, log_blowup: usize) -> Ext3 {
    let n = 1u64 << log_rows;
    let lde_size = n << log_blowup;
    let shift_inv = Ext3::from(LdePlan::SHIFT.inverse());
    loop {
        let z = t.challenge_ext("ood-point");
        let in_trace_domain = z.pow(n) == Ext3::ONE;
        let in_lde_coset = (z * shift_inv).pow(lde_size) == Ext3::ONE;
        if !in_trace_domain && !in_lde_coset {
            return z;
        }
    }
}

/// Absorbs the out-of-domain claims (prover and verifier alike).
pub(crate) fn absorb_ood(transcript: &mut Transcript, ood: &OodValues) {
    transcript.absorb_ext("ood-trace-z", &ood.trace_z);
    transcript.absorb_ext("ood-trace-zw", &ood.trace_zw);
    transcript.absorb_ext("ood-quotient-z", &ood.quotient_z);
}

/// log2 of the number of quotient chunks for constraints of total degree `degree`:
/// the quotient has degree < max(degree − 1, 1)·n.
pub(crate) fn log_quotient_chunks(degree: usize) -> usize {
    degree
        .saturating_sub(1)
        .max(1)
        .next_power_of_two()
        .trailing_zeros() as usize
}

/// ω^(n−1), the trace domain's last point.
pub(crate) fn last_point(log_rows: usize) -> Felt {
    Felt::two_adic_root(log_rows).inverse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotient_chunks_cover_the_quotient_degree() {
        assert_eq!(log_quotient_chunks(1), 0);
        assert_eq!(log_quotient_chunks(2), 0);
        assert_eq!(log_quotient_chunks(3), 1);
        assert_eq!(log_quotient_chunks(5), 2);
    }

    #[test]
    fn last_point_is_omega_to_n_minus_one() {
        let w = Felt::two_adic_root(5);
        assert_eq!(last_point(5), w.pow(31));
    }
}
