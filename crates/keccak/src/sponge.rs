//! The Keccak-256 sponge over register lanes: message k of a group in lane k.
//!
//! The bytes absorbed are `prefix ‖ message ‖ padding` (Keccak's original pad10*1:
//! 0x01 after the message, 0x80 in the rate's last byte): each lane's block is copied
//! with its prefix and padding, then read as little-endian words.

use ballast_field::packed::{Kernel, PackedField, Words};

use crate::Digest;

/// Bytes absorbed per permutation: 1600 − 2·256 bits of capacity.
const RATE: usize = 136;
const RATE_WORDS: usize = RATE / 8;

/// Keccak-f\[1600\]'s 24 round constants, ι's.
pub const ROUND_CONSTANTS: [u64; 24] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808a,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808b,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008a,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000a,
    0x0000_0000_8000_808b,
    0x8000_0000_0000_008b,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800a,
    0x8000_0000_8000_000a,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];

/// Block `block` of the padded message `prefix ‖ message ‖ 0x01 ‖ 0 … 0 ‖ 0x80` of `total`
/// bytes (the last two bytes of padding one byte where they meet).
#[inline]
fn padded_block(prefix: u8, message: &[u8], block: usize, total: usize) -> [u8; RATE] {
    let mut bytes = [0u8; RATE];
    let start = block * RATE;
    let here = start..start + RATE;
    // Byte p of the padded message is message[p − 1] for 1 ≤ p ≤ len.
    let (first, end) = (start.max(1), here.end.min(message.len() + 1));
    if first < end {
        bytes[first - start..end - start].copy_from_slice(&message[first - 1..end - 1]);
    }
    if start == 0 {
        bytes[0] = prefix;
    }
    if here.contains(&(message.len() + 1)) {
        bytes[message.len() + 1 - start] = 0x01;
    }
    if here.contains(&(total - 1)) {
        bytes[total - 1 - start] |= 0x80;
    }
    bytes
}

/// Keccak-f\[1600\] on every lane, its steps written out with constant lane indices and
/// rotations (ρ's offsets r[x + 5y]: 0 1 62 28 27, 36 44 6 55 20, 3 10 43 25 39, 41 45 15 21
/// 8, 18 2 61 56 14).
#[inline(always)]
fn permute<W: Words>(token: W::Token, a: &mut [W; 25]) {
    for rc in ROUND_CONSTANTS {
        // θ
        let c0 = a[0].xor3(a[5], a[10]).xor3(a[15], a[20]);
        let c1 = a[1].xor3(a[6], a[11]).xor3(a[16], a[21]);
        let c2 = a[2].xor3(a[7], a[12]).xor3(a[17], a[22]);
        let c3 = a[3].xor3(a[8], a[13]).xor3(a[18], a[23]);
        let c4 = a[4].xor3(a[9], a[14]).xor3(a[19], a[24]);
        let d0 = c4.xor(c1.rotate_left::<1>());
        let d1 = c0.xor(c2.rotate_left::<1>());
        let d2 = c1.xor(c3.rotate_left::<1>());
        let d3 = c2.xor(c4.rotate_left::<1>());
        let d4 = c3.xor(c0.rotate_left::<1>());
        // ρ and π: lane x + 5y moves to y + 5·((2x + 3y) mod 5), rotated.
        let b = [
            a[0].xor(d0),
            a[6].xor(d1).rotate_left::<44>(),
            a[12].xor(d2).rotate_left::<43>(),
            a[18].xor(d3).rotate_left::<21>(),
            a[24].xor(d4).rotate_left::<14>(),
            a[3].xor(d3).rotate_left::<28>(),
            a[9].xor(d4).rotate_left::<20>(),
            a[10].xor(d0).rotate_left::<3>(),
            a[16].xor(d1).rotate_left::<45>(),
            a[22].xor(d2).rotate_left::<61>(),
            a[1].xor(d1).rotate_left::<1>(),
            a[7].xor(d2).rotate_left::<6>(),
            a[13].xor(d3).rotate_left::<25>(),
            a[19].xor(d4).rotate_left::<8>(),
            a[20].xor(d0).rotate_left::<18>(),
            a[4].xor(d4).rotate_left::<27>(),
            a[5].xor(d0).rotate_left::<36>(),
            a[11].xor(d1).rotate_left::<10>(),
            a[17].xor(d2).rotate_left::<15>(),
            a[23].xor(d3).rotate_left::<56>(),
            a[2].xor(d2).rotate_left::<62>(),
            a[8].xor(d3).rotate_left::<55>(),
            a[14].xor(d4).rotate_left::<39>(),
            a[15].xor(d0).rotate_left::<41>(),
            a[21].xor(d1).rotate_left::<2>(),
        ];
        // χ: row by row, lane x takes b[x] ^ (!b[x + 1] & b[x + 2]).
        for row in (0..25).step_by(5) {
            for x in 0..5 {
                a[row + x] = b[row + x].xor_andnot(b[row + (x + 1) % 5], b[row + (x + 2) % 5]);
            }
        }
        // ι
        a[0] = a[0].xor(W::splat(token, rc));
    }
}

/// Messages hashed a register group at a time (a [`Kernel`]): Keccak-256 of
/// `prefix ‖ message` for each of `out.len()` messages of `len` bytes in `data`, in whole
/// groups of the lane count and, for a remainder of more than half a group, one group whose
/// spare lanes repeat the last message; returns how many it hashed (the rest is the
/// caller's).
pub(crate) struct HashMany<'a> {
    pub(crate) prefix: u8,
    pub(crate) data: &'a [u8],
    pub(crate) len: usize,
    pub(crate) out: &'a mut [Digest],
}

impl Kernel for HashMany<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self {
            prefix,
            data,
            len,
            out,
        } = self;
        let count = P::LANES;
        let blocks = (len + 1) / RATE + 1;
        let total = blocks * RATE;
        let n = out.len();
        // A remainder of more than half a group is hashed as a group whose spare lanes
        // repeat its last message; a smaller one is the caller's, a message at a time.
        let groups = n / count + usize::from(n % count > count / 2);
        for (g, digests) in out.chunks_mut(count).take(groups).enumerate() {
            let message = |k: usize| {
                let m = (g * count + k).min(n - 1);
                &data[m * len..(m + 1) * len]
            };
            let mut state = [P::Words::splat(token, 0); 25];
            for block in 0..blocks {
                let bytes = P::array(|k| padded_block(prefix, message(k), block, total));
                for (w, lane) in state[..RATE_WORDS].iter_mut().enumerate() {
                    let words = P::array(|k| {
                        let word = bytes.as_ref()[k][8 * w..8 * w + 8].try_into();
                        u64::from_le_bytes(word.expect("8 bytes"))
                    });
                    *lane = lane.xor(P::Words::load(token, words.as_ref()));
                }
                permute(token, &mut state);
            }
            squeeze::<P>(&state, digests);
        }
        n.min(groups * count)
    }
}

/// Keccak-256 of `prefix ‖ row` for the eight rows of a block (a [`Kernel`]): `block` holds
/// `width` runs of eight words, run c being column c of rows 0..8, so word c of every row
/// loads as one register (two on four lanes).
pub(crate) struct HashRows<'a> {
    pub(crate) prefix: u8,
    pub(crate) block: &'a [u64],
    pub(crate) width: usize,
    pub(crate) out: &'a mut [Digest; 8],
}

impl Kernel for HashRows<'_> {
    type Output = ();

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) {
        let Self {
            prefix,
            block,
            width,
            out,
        } = self;
        let count = P::LANES;
        let len = 8 * width;
        let blocks = (len + 1) / RATE + 1;
        let last = blocks * RATE_WORDS - 1;
        for (half, digests) in out.chunks_exact_mut(count).enumerate() {
            // x_c for the group's rows, the padding's 0x01 after the last, zeros beyond; the
            // runs are read in order, 16 ahead prefetched.
            let x = |c: usize| -> P::Words {
                if c < width {
                    ballast_cpu::prefetch(block, 8 * (c + 16));
                    P::Words::load(token, &block[8 * c + count * half..])
                } else if c == width {
                    P::Words::splat(token, 0x01)
                } else {
                    P::Words::splat(token, 0)
                }
            };
            let mut state = [P::Words::splat(token, 0); 25];
            // The prefix byte shifts every element one byte: message word w is the top byte
            // of x_(w−1) and the low seven of x_w.
            let mut previous = P::Words::splat(token, u64::from(prefix) << 56);
            for b in 0..blocks {
                for (w, lane) in state[..RATE_WORDS].iter_mut().enumerate() {
                    let at = b * RATE_WORDS + w;
                    let current = x(at);
                    let mut word = previous.shr::<56>().xor(current.shl::<8>());
                    if at == last {
                        word = word.xor(P::Words::splat(token, 0x80 << 56));
                    }
                    previous = current;
                    *lane = lane.xor(word);
                }
                permute(token, &mut state);
            }
            squeeze::<P>(&state, digests);
        }
    }
}

/// The digests of a register group: the first four lanes of the state, lane k's in
/// `digests[k]`.
#[inline(always)]
fn squeeze<P: PackedField>(state: &[P::Words; 25], digests: &mut [Digest]) {
    for (w, lane) in state[..4].iter().enumerate() {
        let mut words = P::array(|_| 0u64);
        lane.store(words.as_mut());
        for (digest, word) in digests.iter_mut().zip(words.as_ref()) {
            digest[8 * w..8 * w + 8].copy_from_slice(&word.to_le_bytes());
        }
    }
}
