//! Montgomery's batch inversion: n inverses for one inversion and 3(n − 1) multiplications.

use rayon::prelude::*;

use crate::FieldElement;

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
    fn zero_anywhere_is_reported() {
        let mut values: Vec<Felt> = (1..9000u32).map(Felt::from).collect();
        values[8500] = Felt::ZERO;
        assert!(batch_inverse(&values).is_none());
        assert_eq!(batch_inverse::<Felt>(&[]), Some(vec![]));
    }
}
