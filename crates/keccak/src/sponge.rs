//! The Keccak-256 sponge over register lanes: message k of a group in lane k.
//!
//! The bytes absorbed are `prefix ‖ message ‖ padding` (Keccak's original pad10*1:
//! 0x01 after the message, 0x80 in the rate's last byte), read as little-endian words
//! straight from the messages; only the words that hold the prefix or the padding are
//! assembled byte by byte.

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

/// The padded message's word at byte offset `at` (a multiple of 8); `total` is the padded
/// length.
#[inline]
fn word(prefix: u8, message: &[u8], at: usize, total: usize) -> u64 {
    let len = message.len();
    if at >= 1 && at + 8 <= len + 1 {
        return u64::from_le_bytes(message[at - 1..at + 7].try_into().expect("8 bytes"));
    }
    let mut bytes = [0u8; 8];
    for (j, byte) in bytes.iter_mut().enumerate() {
        let p = at + j;
        *byte = match p {
            0 => prefix,
            p if p <= len => message[p - 1],
            p if p == len + 1 => 0x01,
            _ => 0,
        };
        if p == total - 1 {
            *byte |= 0x80;
        }
    }
    u64::from_le_bytes(bytes)
}

/// One sponge for both instruction sets; `$lanes` supplies the register operations.
macro_rules! sponge {
    ($isa:ident, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        pub(crate) mod $isa {
            use super::{RATE, RATE_WORDS, ROUND_CONSTANTS, word};
            use crate::Digest;
            use crate::lanes::$isa::Lanes;

            /// Keccak-f\[1600\] on every lane, its steps written out with constant lane indices
            /// and rotations (ρ's offsets r[x + 5y]: 0 1 62 28 27, 36 44 6 55 20, 3 10 43 25
            /// 39, 41 45 15 21 8, 18 2 61 56 14).
            #[inline]
            #[target_feature(enable = $feature)]
            fn permute(a: &mut [Lanes; 25]) {
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
                    // χ
                    a[0] = b[0].chi(b[1], b[2]);
                    a[1] = b[1].chi(b[2], b[3]);
                    a[2] = b[2].chi(b[3], b[4]);
                    a[3] = b[3].chi(b[4], b[0]);
                    a[4] = b[4].chi(b[0], b[1]);
                    a[5] = b[5].chi(b[6], b[7]);
                    a[6] = b[6].chi(b[7], b[8]);
                    a[7] = b[7].chi(b[8], b[9]);
                    a[8] = b[8].chi(b[9], b[5]);
                    a[9] = b[9].chi(b[5], b[6]);
                    a[10] = b[10].chi(b[11], b[12]);
                    a[11] = b[11].chi(b[12], b[13]);
                    a[12] = b[12].chi(b[13], b[14]);
                    a[13] = b[13].chi(b[14], b[10]);
                    a[14] = b[14].chi(b[10], b[11]);
                    a[15] = b[15].chi(b[16], b[17]);
                    a[16] = b[16].chi(b[17], b[18]);
                    a[17] = b[17].chi(b[18], b[19]);
                    a[18] = b[18].chi(b[19], b[15]);
                    a[19] = b[19].chi(b[15], b[16]);
                    a[20] = b[20].chi(b[21], b[22]);
                    a[21] = b[21].chi(b[22], b[23]);
                    a[22] = b[22].chi(b[23], b[24]);
                    a[23] = b[23].chi(b[24], b[20]);
                    a[24] = b[24].chi(b[20], b[21]);
                    // ι
                    a[0] = a[0].xor(Lanes::splat(rc));
                }
            }

            /// Hashes the messages in whole groups of `Lanes::COUNT`; returns how many it
            /// hashed (the rest is the caller's).
            #[target_feature(enable = $feature)]
            pub(crate) fn hash_many(
                prefix: u8,
                data: &[u8],
                len: usize,
                out: &mut [Digest],
            ) -> usize {
                const COUNT: usize = Lanes::COUNT;
                let blocks = (len + 1) / RATE + 1;
                let total = blocks * RATE;
                let groups = out.len() / COUNT;
                for (g, digests) in out.chunks_exact_mut(COUNT).enumerate() {
                    let messages = &data[g * COUNT * len..(g + 1) * COUNT * len];
                    let mut state = [Lanes::zero(); 25];
                    for block in 0..blocks {
                        for w in 0..RATE_WORDS {
                            let at = block * RATE + 8 * w;
                            let mut words = [0u64; COUNT];
                            for (k, slot) in words.iter_mut().enumerate() {
                                *slot = word(prefix, &messages[k * len..(k + 1) * len], at, total);
                            }
                            state[w] = state[w].xor(Lanes::from_array(words));
                        }
                        permute(&mut state);
                    }
                    for w in 0..4 {
                        for (digest, lane) in digests.iter_mut().zip(state[w].to_array()) {
                            digest[8 * w..8 * w + 8].copy_from_slice(&lane.to_le_bytes());
                        }
                    }
                }
                groups * COUNT
            }

            /// Keccak-256 of `prefix ‖ row` for the eight rows of a block: `block` holds
            /// `width` runs of eight words, run c being column c of rows 0..8, so word c of
            /// every row loads as one register (two on four lanes).
            #[target_feature(enable = $feature)]
            pub(crate) fn hash_rows(
                prefix: u8,
                block: &[u64],
                width: usize,
                out: &mut [Digest; 8],
            ) {
                const COUNT: usize = Lanes::COUNT;
                let len = 8 * width;
                let blocks = (len + 1) / RATE + 1;
                let last = blocks * RATE_WORDS - 1;
                for half in 0..8 / COUNT {
                    // x_c for the group's rows, the padding's 0x01 after the last, zeros beyond;
                    // the runs are read in order, 16 ahead prefetched.
                    let x = |c: usize| -> Lanes {
                        if c < width {
                            ballast_cpu::prefetch(block, 8 * (c + 16));
                            Lanes::load(&block[8 * c + COUNT * half..])
                        } else if c == width {
                            Lanes::splat(0x01)
                        } else {
                            Lanes::zero()
                        }
                    };
                    let mut state = [Lanes::zero(); 25];
                    // The prefix byte shifts every element one byte: message word w is the top
                    // byte of x_(w−1) and the low seven of x_w.
                    let mut previous = Lanes::splat(u64::from(prefix) << 56);
                    for b in 0..blocks {
                        for w in 0..RATE_WORDS {
                            let at = b * RATE_WORDS + w;
                            let current = x(at);
                            let mut word = previous.shr::<56>().xor(current.shl::<8>());
                            if at == last {
                                word = word.xor(Lanes::splat(0x80 << 56));
                            }
                            previous = current;
                            state[w] = state[w].xor(word);
                        }
                        permute(&mut state);
                    }
                    for w in 0..4 {
                        let lanes = state[w].to_array();
                        for (k, lane) in lanes.iter().enumerate() {
                            out[COUNT * half + k][8 * w..8 * w + 8]
                                .copy_from_slice(&lane.to_le_bytes());
                        }
                    }
                }
            }
        }
    };
}

sponge!(avx2, "avx2");
sponge!(avx512, "avx512f");
