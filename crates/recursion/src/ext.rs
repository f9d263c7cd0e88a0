//! Extension arithmetic over any algebra, for constraints: an element as its 3 base
//! coordinates, multiplied by [`Ext3::mul_over`].

use ballast_field::{Algebra, Ext3};

/// An extension element's coordinates over an algebra.
pub(crate) type Ext<E> = [E; 3];

/// The element whose coordinates start at `row[at]`.
pub(crate) fn ext<E: Copy>(row: &[E], at: usize) -> Ext<E> {
    [row[at], row[at + 1], row[at + 2]]
}

pub(crate) fn add<E: Algebra>(a: Ext<E>, b: Ext<E>) -> Ext<E> {
    std::array::from_fn(|i| a[i] + b[i])
}

pub(crate) fn sub<E: Algebra>(a: Ext<E>, b: Ext<E>) -> Ext<E> {
    std::array::from_fn(|i| a[i] - b[i])
}

pub(crate) fn scale<E: Algebra>(a: Ext<E>, s: E) -> Ext<E> {
    a.map(|c| c * s)
}

/// a^exponent by square-and-multiply.
pub(crate) fn pow<E: Algebra>(a: Ext<E>, exponent: u64, one: Ext<E>) -> Ext<E> {
    let mut result = one;
    for bit in (0..u64::BITS - exponent.leading_zeros()).rev() {
        result = Ext3::mul_over(result, result);
        if exponent >> bit & 1 == 1 {
            result = Ext3::mul_over(result, a);
        }
    }
    result
}
