//! The heap counters of `install!`'s allocator against a known allocation pattern.

ballast_allocator::install!();

use ballast_allocator::{heap_live, heap_peak, reset_heap_peak};

const MIB: usize = 1 << 20;

#[test]
fn the_peak_is_the_most_bytes_live_at_once() {
    // The only test in this binary: nothing else allocates while it measures, beyond the
    // harness's few bytes.
    reset_heap_peak();
    let base = heap_live();
    let first = vec![1u8; 48 * MIB];
    assert!(heap_live() - base >= 48 * MIB);
    drop(first);
    let mut second: Vec<u64> = Vec::with_capacity(MIB); // 8 MiB
    second.extend(0..MIB as u64);
    second.reserve_exact(2 * MIB); // grows in place or moves: 24 MiB live after
    let peak = heap_peak() - base;
    assert!(
        (48 * MIB..48 * MIB + MIB).contains(&peak),
        "peak {peak} bytes above the start, not 48 MiB"
    );
    let live = heap_live() - base;
    assert!(
        (24 * MIB..24 * MIB + MIB).contains(&live),
        "{live} bytes live, not 24 MiB"
    );
    drop(second);
    assert!(heap_live() - base < MIB, "freed bytes are no longer live");
    // A new peak starts from what is live.
    reset_heap_peak();
    let third = vec![0u8; 4 * MIB];
    assert!((4 * MIB..5 * MIB).contains(&(heap_peak() - base)));
    drop(third);
}
