//! Montgomery's batch inversion: n inverses for one inversion and 3(n − 1) multiplications.

use rayon::prelude::*;

use crate::{Ext3, Felt, FieldElement};

/// Inputs are split into chunks of this many elements, each inverted with one inversion.
/// Inverses are exact, so the result does not depend on the chunking or the thread count.
const CHUNK: usize = 1 << 12;

/// The inverses of `values`, or `None` if any value is zero.
pub fn batch_inverse<E: FieldElement>(values: &[E]) -> Option<Vec<E>> {
    let mut out = vec![E::ZERO; values.len()];
    let all_invertible = out
        .par_chunks_mut(CHUNK)
        .zip(values.par_chunks(CHUNK))
        .all(|(out, values)| invert_chunk(values, out));
    all_invertible.then_some(out)
}

/// `1/(x − z)` for base-field points x and an extension element z, or `None` if some
/// x − z is zero. Runs on the calling thread: callers parallelize over chunks of points.
///
/// Cheaper than inverting the differences as extension elements: for a = x − z the adjugate
/// b (see [`Ext3::try_inverse`]) is linear in x up to one square, a·b is a base-field norm, and
/// only the norms are batch-inverted, in the base field.
pub fn inverse_differences(points: &[Felt], z: Ext3) -> Option<Vec<Ext3>> {
    let [z0, z1, z2] = z.coeffs();
    let (a1, a2) = (-z1, -z2);
    // With W = 2: b0 = a0² − 2·a1·a2, b1 = 2·a2² − a0·a1, b2 = a1² − a0·a2.
    let k0 = (a1 * a2).double();
    let k1 = a2.square().double();
    let k2 = a1.square();
    let adjugates: Vec<[Felt; 3]> = points
        .iter()
        .map(|&x| {
            let a0 = x - z0;
            [a0.square() - k0, k1 - a0 * a1, k2 - a0 * a2]
        })
        .collect();
    let norms: Vec<Felt> = points
        .iter()
        .zip(&adjugates)
        .map(|(&x, &[b0, b1, b2])| (x - z0) * b0 + (a1 * b2 + a2 * b1).double())
        .collect();
    let mut norm_inverses = vec![Felt::ZERO; norms.len()];
    if !invert_chunk(&norms, &mut norm_inverses) {
        return None;
    }
    Some(
        adjugates
            .into_iter()
            .zip(norm_inverses)
            .map(|(b, inv)| Ext3::new(b).scale(inv))
            .collect(),
    )
}

fn invert_chunk<E: FieldElement>(values: &[E], out: &mut [E]) -> bool {
    let mut acc = E::ONE;
    for (prefix, &v) in out.iter_mut().zip(values) {
        *prefix = acc;
        acc *= v;
    }
    let Some(mut inv) = acc.try_inverse() else {
        return false;
    };
    for (slot, &v) in out.iter_mut().zip(values).rev() {
        *slot *= inv;
        inv *= v;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ext3, Felt};

    #[test]
    fn matches_single_inversions() {
        let values: Vec<Felt> = (1..10_000u32).map(|i| Felt::from(i * 7919)).collect();
        let inv = batch_inverse(&values).unwrap();
        for (v, i) in values.iter().zip(&inv) {
            assert_eq!(*v * *i, Felt::ONE);
        }
        let ext: Vec<Ext3> = values[..100]
            .iter()
            .map(|&v| Ext3::new([v, v + Felt::ONE, v]))
            .collect();
        let inv = batch_inverse(&ext).unwrap();
        for (v, i) in ext.iter().zip(&inv) {
            assert_eq!(*v * *i, Ext3::ONE);
        }
    }

    #[test]
    fn inverse_differences_match_extension_inversion() {
        let z = Ext3::new([Felt::new(17), Felt::new(99), Felt::new(1 << 40)]);
        let points: Vec<Felt> = (0..5000u32).map(|i| Felt::from(i * 31 + 2)).collect();
        let fast = inverse_differences(&points, z).unwrap();
        for (&x, inv) in points.iter().zip(&fast) {
            assert_eq!(*inv * (Ext3::from(x) - z), Ext3::ONE);
        }
        let in_base = Ext3::from(Felt::new(64));
        assert!(
            inverse_differences(&points, in_base).is_none(),
            "x = z has no inverse"
        );
    }

    #[test]
    fn zero_anywhere_is_reported() {
        let mut values: Vec<Felt> = (1..9000u32).map(Felt::from).collect();
        values[8500] = Felt::ZERO;
        assert!(batch_inverse(&values).is_none());
        assert_eq!(batch_inverse::<Felt>(&[]), Some(vec![]));
    }
}
