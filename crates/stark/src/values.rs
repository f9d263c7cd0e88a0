//! A section's items as the layout's tables hand them over: borrowed from a proof to be
//! encoded, or read from bytes to be stored.

use std::borrow::Cow;

use ballast_field::{Ext3, Felt};
use ballast_merkle::Digest;

/// A section's items, borrowed from a proof or read from bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Values<'a> {
    /// Integers ([`Item::U8`] … [`Item::U64`]).
    Ints(Cow<'a, [u64]>),
    /// Opaque bytes ([`Item::Byte`]).
    Bytes(Cow<'a, [u8]>),
    /// Base-field elements.
    Felts(Cow<'a, [Felt]>),
    /// Extension-field elements.
    Exts(Cow<'a, [Ext3]>),
    /// Digests.
    Digests(Cow<'a, [Digest]>),
}

impl<'a> Values<'a> {
    pub(crate) fn int(value: impl Into<u64>) -> Self {
        Values::Ints(Cow::Owned(vec![value.into()]))
    }

    pub(crate) fn size(value: usize) -> Self {
        Values::int(value as u64)
    }

    pub(crate) fn positions(values: &[usize]) -> Self {
        Values::Ints(values.iter().map(|&v| v as u64).collect())
    }

    pub(crate) fn bytes(values: &'a [u8]) -> Self {
        Values::Bytes(Cow::Borrowed(values))
    }

    pub(crate) fn felts(values: &'a [Felt]) -> Self {
        Values::Felts(Cow::Borrowed(values))
    }

    pub(crate) fn exts(values: &'a [Ext3]) -> Self {
        Values::Exts(Cow::Borrowed(values))
    }

    pub(crate) fn digests(values: &'a [Digest]) -> Self {
        Values::Digests(Cow::Borrowed(values))
    }

    pub(crate) fn digest(value: &'a Digest) -> Self {
        Values::digests(std::slice::from_ref(value))
    }

    /// How many items.
    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Ints(v) => v.len(),
            Values::Bytes(v) => v.len(),
            Values::Felts(v) => v.len(),
            Values::Exts(v) => v.len(),
            Values::Digests(v) => v.len(),
        }
    }

    pub(crate) fn into_ints(self) -> Vec<u64> {
        match self {
            Values::Ints(v) => v.into_owned(),
            other => panic!("{other:?} are not integers"),
        }
    }

    pub(crate) fn into_int(self) -> u64 {
        self.into_ints()[0]
    }

    pub(crate) fn into_size(self) -> usize {
        usize::try_from(self.into_int()).expect("a u32 or smaller fits in usize")
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self {
            Values::Bytes(v) => v.into_owned(),
            other => panic!("{other:?} are not bytes"),
        }
    }

    pub(crate) fn into_felts(self) -> Vec<Felt> {
        match self {
            Values::Felts(v) => v.into_owned(),
            other => panic!("{other:?} are not base-field elements"),
        }
    }

    pub(crate) fn into_exts(self) -> Vec<Ext3> {
        match self {
            Values::Exts(v) => v.into_owned(),
            other => panic!("{other:?} are not extension-field elements"),
        }
    }

    pub(crate) fn into_digests(self) -> Vec<Digest> {
        match self {
            Values::Digests(v) => v.into_owned(),
            other => panic!("{other:?} are not digests"),
        }
    }

    pub(crate) fn into_digest(self) -> Digest {
        self.into_digests()[0]
    }
}
