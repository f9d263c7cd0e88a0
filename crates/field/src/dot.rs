//! Dot products with one modular reduction per result instead of one per term.
//!
//! Each 64×64-bit product is added to a 128-bit accumulator; carries out of it are counted
//! separately and folded back at the end with 2^128 ≡ −2^32 (mod p). The result equals the
//! term-by-term sum exactly.

use ballast_cpu::Kernels;

use crate::felt::reduce128;
use crate::packed::{self, Halves, Kernel, PackedField, ProductSum};
use crate::{BLOCK_ROWS, Ext3, Felt};

/// A 192-bit accumulator: a 128-bit sum and the count of its overflows.
#[derive(Clone, Copy, Default)]
struct Wide {
    low: u128,
    overflows: u64,
}

impl Wide {
    #[inline(always)]
    fn add_product(&mut self, a: u64, b: u64) {
        let (low, overflow) = self.low.overflowing_add(u128::from(a) * u128::from(b));
        self.low = low;
        self.overflows += u64::from(overflow);
    }

    #[inline(always)]
    fn reduce(self) -> Felt {
        // 2^128 ≡ −2^32 (mod p).
        let low = Felt::new(reduce128(self.low));
        low - Felt::new(self.overflows) * Felt::new(1 << 32)
    }
}

/// Σ a_i·b_i of base-field elements (at most 2^30 products a SIMD lane: [`ProductSum`]),
/// on the process's CPU path.
///
/// # Panics
/// If the slices differ in length.
pub fn dot_base(a: &[Felt], b: &[Felt]) -> Felt {
    dot_base_on(Kernels::active(), a, b)
}

/// [`dot_base`] on the path `kernels` names: the same sum on every path.
///
/// # Panics
/// If the slices differ in length.
pub fn dot_base_on(kernels: Kernels, a: &[Felt], b: &[Felt]) -> Felt {
    assert_eq!(a.len(), b.len(), "dot product of unequal lengths");
    packed::run(kernels, LaneDot(a, b)).unwrap_or_else(|| scalar_dot(a, b))
}

/// Σ a_i·b_i, one product at a time into one wide sum.
fn scalar_dot(a: &[Felt], b: &[Felt]) -> Felt {
    let mut acc = Wide::default();
    for (x, y) in a.iter().zip(b) {
        acc.add_product(x.as_u64(), y.as_u64());
    }
    acc.reduce()
}

/// [`dot_base`] a register of products at a time, the rest one at a time.
struct LaneDot<'a>(&'a [Felt], &'a [Felt]);

impl Kernel for LaneDot<'_> {
    type Output = Felt;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> Felt {
        let Self(a, b) = self;
        let whole = a.len() - a.len() % P::LANES;
        let mut sum = ProductSum::<P>::zero(token);
        let (a_registers, b_registers) = (
            a[..whole].chunks_exact(P::LANES),
            b[..whole].chunks_exact(P::LANES),
        );
        for (x, y) in a_registers.zip(b_registers) {
            sum.add(Halves::of(P::load(token, x)), Halves::of(P::load(token, y)));
        }
        let lanes = sum.sum().as_ref().iter().fold(Felt::ZERO, |s, &v| s + v);
        lanes + scalar_dot(&a[whole..], &b[whole..])
    }
}

/// Σ coeffs_i·values_i for extension coefficients and base-field values: three base-field
/// dot products, one per coordinate.
///
/// # Panics
/// If the slices differ in length.
pub fn dot_ext_base(coeffs: &[Ext3], values: &[Felt]) -> Ext3 {
    assert_eq!(coeffs.len(), values.len(), "dot product of unequal lengths");
    let mut acc = [Wide::default(); 3];
    for (c, v) in coeffs.iter().zip(values) {
        let v = v.as_u64();
        for (a, ci) in acc.iter_mut().zip(c.coeffs()) {
            a.add_product(ci.as_u64(), v);
        }
    }
    Ext3::new(acc.map(Wide::reduce))
}

/// The dot products with `coeffs` of the rows of a table block (`width` runs of
/// [`BLOCK_ROWS`] values, column after column): one per row, each column's run read once,
/// with one reduction per result.
///
/// # Panics
/// If `coeffs` is not one per column or `block` not `width` runs.
pub fn dot_block_rows(coeffs: &[Ext3], block: &[Felt]) -> [Ext3; BLOCK_ROWS] {
    assert_eq!(
        coeffs.len() * BLOCK_ROWS,
        block.len(),
        "one coefficient per column"
    );
    let mut acc = [ExtBaseSum::default(); BLOCK_ROWS];
    for (&c, run) in coeffs.iter().zip(block.chunks_exact(BLOCK_ROWS)) {
        for (a, &v) in acc.iter_mut().zip(run) {
            a.add(c, v);
        }
    }
    acc.map(ExtBaseSum::sum)
}

/// A running Σ coeff·value of extension coefficients and base-field values, reduced once.
#[derive(Clone, Copy, Default)]
pub struct ExtBaseSum([Wide; 3]);

impl ExtBaseSum {
    /// Adds `coeff·value`.
    #[inline(always)]
    pub fn add(&mut self, coeff: Ext3, value: Felt) {
        let v = value.as_u64();
        for (a, c) in self.0.iter_mut().zip(coeff.coeffs()) {
            a.add_product(c.as_u64(), v);
        }
    }

    /// The sum.
    pub fn sum(self) -> Ext3 {
        Ext3::new(self.0.map(Wide::reduce))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equals_term_by_term_sums(values in proptest::collection::vec(any::<[u64; 4]>(), 0..80)) {
            let b: Vec<Felt> = values.iter().map(|v| Felt::new(v[1])).collect();
            let c: Vec<Ext3> = values
                .iter()
                .map(|v| Ext3::new([Felt::new(v[2]), Felt::new(v[3]), Felt::new(v[0] ^ v[3])]))
                .collect();
            let naive = c.iter().zip(&b).fold(Ext3::ZERO, |s, (&x, &y)| s + x.scale(y));
            prop_assert_eq!(dot_ext_base(&c, &b), naive);
            let a: Vec<Felt> = values.iter().map(|v| Felt::new(v[0])).collect();
            let naive = a.iter().zip(&b).fold(Felt::ZERO, |s, (&x, &y)| s + x * y);
            for kernels in Kernels::supported() {
                prop_assert_eq!(dot_base_on(kernels, &a, &b), naive, "{} path", kernels.path());
            }
        }
    }

    #[test]
    fn block_dot_products_match_per_row_dot_products() {
        let columns: Vec<Vec<Felt>> = (0..5u64)
            .map(|c| {
                (0..40u64)
                    .map(|r| Felt::new(Felt::MODULUS - 1 - r * 977 - c))
                    .collect()
            })
            .collect();
        let m = crate::RowBlocks::from_columns(&columns);
        let coeffs: Vec<Ext3> = (0..5u64)
            .map(|c| {
                Ext3::new([
                    Felt::new(c + 1),
                    Felt::new(Felt::MODULUS - 2),
                    Felt::new(c << 50),
                ])
            })
            .collect();
        for b in 0..5 {
            let got = dot_block_rows(&coeffs, m.block(b));
            for (k, got) in got.iter().enumerate() {
                let r = b * BLOCK_ROWS + k;
                assert_eq!(*got, dot_ext_base(&coeffs, &m.row(r)), "row {r}");
            }
        }
    }

    #[test]
    fn many_maximal_terms_overflow_correctly() {
        let max = Felt::new(Felt::MODULUS - 1);
        let values = vec![max; 1000];
        let coeffs = vec![Ext3::new([max; 3]); 1000];
        let expected = values.iter().fold(Felt::ZERO, |s, &x| s + x * x);
        assert_eq!(dot_ext_base(&coeffs, &values), Ext3::new([expected; 3]));
    }
}
