//! The real `kernels/*.cu`, built for the host with a C++ compiler and the shim in
//! `kernels/emu/`, driven by the crate's own backend ([`KernelBackend`]) and compared with
//! the CPU backend: whole proofs of both workloads, byte for byte, at several shapes,
//! blowups from 2 to 16 and 64, several segments, parts and bundles; what the backend
//! counts; and the emulator's own checks (races in shared memory, words no kernel wrote,
//! writes outside a buffer).
//!
//! Every kernel the device runs runs here. Threads of a block that cooperate are fibers that
//! meet at `__syncthreads()` and warp shuffles, and shared memory is checked word by word
//! (`kernels/emu/shim.h`). Buffers carry guard words on both sides, checked after every
//! launch, and start out poisoned, so that a word a kernel fails to write cannot pass for a
//! correct 0.
//!
//! Without a C++ compiler on PATH every test prints "skipping: no C++ compiler …" and passes,
//! unless `BALLAST_REQUIRE_CXX=1` (which CI sets), which turns the skip into a failure.

mod common;

use std::cell::UnsafeCell;
use std::ffi::{CString, c_char, c_int, c_uint};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Once, OnceLock};
use std::time::{Duration, Instant};

use ballast_cuda::{Arg, CudaError, Grid, Kernel, KernelBackend, Launcher, Queue};
use ballast_field::Felt;
use ballast_merkle::MerkleHash;
use ballast_transcript::{Transcript, WorkState};

/// `ballast_emu_launch(kernel, grid, block, shared_words, args, num_args, error, error_len)`
/// in `kernels/emu/launch.cpp`.
type LaunchFn = unsafe extern "C" fn(
    *const c_char,
    c_uint,
    c_uint,
    c_uint,
    *const u64,
    c_uint,
    *mut c_char,
    c_uint,
) -> c_int;

/// `ballast_emu_gl_{add,sub,mul}(a, b)`: the kernels' field operations.
type FieldFn = unsafe extern "C" fn(u64, u64) -> u64;

/// Guard words on each side of every buffer.
const GUARD: usize = 16;
const GUARD_WORD: u64 = 0xdead_beef_0bad_f00d;

/// What a new buffer holds until a kernel writes it: 0xA5 bytes. A zero-filled buffer would
/// hide a skipped write wherever the expected word is 0; this word is no value the
/// comparisons with the CPU expect.
const POISON_WORD: u64 = 0xa5a5_a5a5_a5a5_a5a5;

/// Host memory standing in for a device buffer: guard words, the data, guard words.
struct EmuBuffer {
    words: UnsafeCell<Vec<u64>>,
}

// SAFETY: the emulator runs one launch at a time per backend, each on the calling thread;
// a buffer is never touched by two threads at once.
unsafe impl Sync for EmuBuffer {}

impl EmuBuffer {
    fn new(len: usize) -> Self {
        let mut words = vec![GUARD_WORD; GUARD];
        words.extend(std::iter::repeat_n(POISON_WORD, len));
        words.extend(std::iter::repeat_n(GUARD_WORD, GUARD));
        Self {
            words: UnsafeCell::new(words),
        }
    }

    fn len(&self) -> usize {
        // SAFETY: no kernel is running; launches are synchronous.
        unsafe { (*self.words.get()).len() - 2 * GUARD }
    }

    /// The address of data word `offset`, as a kernel receives it.
    fn address(&self, offset: usize) -> u64 {
        // SAFETY: a raw pointer into the Vec, which is never resized after construction; no
        // Rust reference to its contents is alive while a kernel runs.
        unsafe { (*self.words.get()).as_mut_ptr().add(GUARD + offset) as u64 }
    }

    /// Copies `words` in from data word `offset` (the range is checked by the caller).
    fn write(&self, offset: usize, words: &[u64]) {
        // SAFETY: no kernel is running (launches are synchronous) and no other reference to
        // the contents is alive during the copy.
        let data = unsafe { &mut *self.words.get() };
        data[GUARD + offset..GUARD + offset + words.len()].copy_from_slice(words);
    }

    /// Copies data words from `offset` out into `out` (the range is checked by the caller).
    fn read(&self, offset: usize, out: &mut [u64]) {
        // SAFETY: as in `write`.
        let data = unsafe { &*self.words.get() };
        out.copy_from_slice(&data[GUARD + offset..GUARD + offset + out.len()]);
    }

    fn guards_intact(&self) -> bool {
        // SAFETY: no kernel is running.
        let words = unsafe { &*self.words.get() };
        let (head, rest) = words.split_at(GUARD);
        let tail = &rest[rest.len() - GUARD..];
        head.iter().chain(tail).all(|&w| w == GUARD_WORD)
    }
}

/// The kernels built for the host.
#[derive(Clone)]
struct Emulator {
    /// Keeps the library mapped while `launch` may be called.
    _library: Arc<libloading::Library>,
    launch: LaunchFn,
    /// add, sub, mul.
    field: [FieldFn; 3],
}

fn range(buffer: &EmuBuffer, offset: usize, len: usize) -> Result<(), CudaError> {
    if offset + len > buffer.len() {
        return Err(CudaError::Input(format!(
            "words {offset}..{} of a buffer of {}",
            offset + len,
            buffer.len()
        )));
    }
    Ok(())
}

impl Launcher for Emulator {
    type Buffer = EmuBuffer;
    type Mark = Instant;
    type Ticket = ();
    const NAME: &'static str = "emulated";

    fn alloc(&self, len: usize) -> Result<EmuBuffer, CudaError> {
        Ok(EmuBuffer::new(len))
    }

    fn buffer_len(buffer: &EmuBuffer) -> usize {
        buffer.len()
    }

    fn upload(&self, words: &[u64], buffer: &EmuBuffer, offset: usize) -> Result<(), CudaError> {
        range(buffer, offset, words.len())?;
        buffer.write(offset, words);
        Ok(())
    }

    fn upload_ahead(&self, words: &[u64], buffer: &EmuBuffer) -> Result<(), CudaError> {
        // Every call is done when it returns: the copy needs no ordering.
        self.upload(words, buffer, 0)
    }

    fn signal(&self, _: Queue) -> Result<(), CudaError> {
        Ok(())
    }

    fn wait_for(&self, _: Queue, (): &()) -> Result<(), CudaError> {
        Ok(())
    }

    fn download(
        &self,
        buffer: &EmuBuffer,
        offset: usize,
        out: &mut [u64],
    ) -> Result<(), CudaError> {
        range(buffer, offset, out.len())?;
        buffer.read(offset, out);
        Ok(())
    }

    fn launch(
        &self,
        kernel: Kernel,
        grid: Grid,
        args: &[Arg<'_, EmuBuffer>],
    ) -> Result<(), CudaError> {
        let words: Vec<u64> = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(b) => b.address(0),
                Arg::At(b, offset) => b.address(*offset),
                Arg::Word(w) => *w,
            })
            .collect();
        let name = CString::new(kernel.name()).expect("kernel names have no NUL");
        let mut error = vec![0 as c_char; 512];
        // SAFETY: the library was built from kernels/emu/launch.cpp, whose entry point has
        // this signature; `words` and `error` outlive the call, and every buffer address
        // points into a live EmuBuffer. Out-of-bounds writes would hit the guard words,
        // checked below.
        let status = unsafe {
            (self.launch)(
                name.as_ptr(),
                grid.blocks,
                grid.threads,
                grid.shared_words,
                words.as_ptr(),
                words.len() as c_uint,
                error.as_mut_ptr(),
                error.len() as c_uint,
            )
        };
        let fail = |message: String| {
            Err(CudaError::Driver {
                during: "emulating a kernel",
                message,
            })
        };
        match status {
            0 => {}
            1 => return fail(format!("no kernel {}", kernel.name())),
            2 => return fail(format!("{} takes another argument count", kernel.name())),
            _ => {
                // SAFETY: launch.cpp wrote a NUL-terminated message into `error`.
                let message = unsafe { std::ffi::CStr::from_ptr(error.as_ptr()) };
                return fail(format!("{}: {}", kernel.name(), message.to_string_lossy()));
            }
        }
        for arg in args {
            if let Arg::Buffer(b) | Arg::At(b, _) = arg {
                assert!(
                    b.guards_intact(),
                    "{} wrote outside a buffer",
                    kernel.name()
                );
            }
        }
        Ok(())
    }

    fn mark(&self) -> Result<Instant, CudaError> {
        Ok(Instant::now())
    }

    fn elapsed(&self, from: &Instant, to: &Instant) -> Result<Duration, CudaError> {
        Ok(to.duration_since(*from))
    }

    fn grind_batch(&self) -> u64 {
        1 << 10
    }
}

/// A C++ compiler on PATH: `$CXX`, `c++` or `g++`.
fn compiler() -> Option<String> {
    let candidates = std::env::var("CXX")
        .ok()
        .into_iter()
        .chain(["c++".to_string(), "g++".to_string()]);
    candidates.into_iter().find(|cxx| {
        Command::new(cxx)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Builds `kernels/emu/launch.cpp` from the kernel sources in `kernels` into `library`.
fn build(cxx: &str, kernels: &Path, library: &Path) {
    let out = Command::new(cxx)
        .args(["-std=c++17", "-O2", "-shared", "-fPIC"])
        .args(["-Wall", "-Wextra", "-Wno-unknown-pragmas"])
        .arg("-o")
        .arg(library)
        .arg(kernels.join("emu/launch.cpp"))
        .output()
        .expect("the compiler runs");
    assert!(
        out.status.success(),
        "{cxx} could not build the kernels:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "{cxx} warns:\n{warnings}");
}

/// Loads a library built by [`build`].
fn load(library: &Path) -> Emulator {
    // SAFETY: loading runs no initialisers beyond the C++ runtime's.
    let library = unsafe { libloading::Library::new(library) }.expect("the library loads");
    // SAFETY: the symbol is launch.cpp's extern "C" entry point with this signature, and
    // `Emulator` keeps the library loaded as long as the pointer is used.
    let launch = *unsafe { library.get::<LaunchFn>(b"ballast_emu_launch\0") }
        .expect("the entry point exists");
    let field = [
        &b"ballast_emu_gl_add\0"[..],
        b"ballast_emu_gl_sub\0",
        b"ballast_emu_gl_mul\0",
    ]
    // SAFETY: launch.cpp's extern "C" field operations, all with this signature.
    .map(|name| *unsafe { library.get::<FieldFn>(name) }.expect("the entry point exists"));
    Emulator {
        _library: Arc::new(library),
        launch,
        field,
    }
}

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

/// Builds and loads the emulated kernels once per test process; `None` (after saying so)
/// without a compiler.
///
/// # Panics
/// Without a compiler when `BALLAST_REQUIRE_CXX=1`.
fn emulator() -> Option<&'static Emulator> {
    static EMULATOR: OnceLock<Option<Emulator>> = OnceLock::new();
    let emulator = EMULATOR.get_or_init(|| {
        let cxx = compiler()?;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let library = dir.path().join("libballast_emu.so");
        build(&cxx, &kernels_dir(), &library);
        // The file may go once it is mapped.
        Some(load(&library))
    });
    if emulator.is_none() {
        assert!(
            std::env::var_os("BALLAST_REQUIRE_CXX").is_none_or(|v| v != "1"),
            "BALLAST_REQUIRE_CXX=1 but no C++ compiler ($CXX, c++ or g++) on PATH"
        );
        // Written to the stream itself, not through `eprintln!`, which the test harness
        // captures: a skip must be visible.
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "skipping: no C++ compiler ($CXX, c++ or g++) on PATH"
            );
        });
    }
    emulator.as_ref()
}

#[test]
fn field_operations_match_felt_on_edge_values() {
    let Some(emu) = emulator() else { return };
    let p = Felt::MODULUS;
    let mut values = vec![
        0,
        1,
        2,
        3,
        (1 << 32) - 1,
        1 << 32,
        (1 << 32) + 1,
        1 << 63,
        p - 2,
        p - 1,
    ];
    let mut state = 3u64;
    values.extend((0..40).map(|_| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        state % p
    }));
    let mut pairs: Vec<(u64, u64)> = values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| (a, b)))
        .collect();
    // Sums of exactly p, and products whose reduction ends in [p, 2^64) before the last
    // subtraction (r·2 times 1/2).
    pairs.extend(values.iter().map(|&a| (a, (p - a) % p)));
    pairs.extend((1..100).map(|r| (2 * r, p.div_ceil(2))));
    let [add, sub, mul] = emu.field;
    for (a, b) in pairs {
        let (fa, fb) = (Felt::new(a), Felt::new(b));
        // SAFETY: plain functions of two integers.
        let got = unsafe { [add(a, b), sub(a, b), mul(a, b)] };
        let expected = [fa + fb, fa - fb, fa * fb].map(Felt::as_u64);
        assert_eq!(got, expected, "add, sub, mul of {a:#x} and {b:#x}");
    }
}

#[test]
fn fibonacci_proofs_are_byte_identical_to_the_cpu_backend() {
    let Some(emu) = emulator() else { return };
    let backend = KernelBackend::new(emu.clone());
    for case in common::fibonacci_cases() {
        common::check_proof(&backend, &case);
    }
}

#[test]
fn keccak_chain_proofs_are_byte_identical_to_the_cpu_backend() {
    let Some(emu) = emulator() else { return };
    let backend = KernelBackend::new(emu.clone());
    for case in common::keccak_cases() {
        common::check_proof(&backend, &case);
    }
}

#[test]
fn transforms_of_several_passes_give_the_same_proofs() {
    // Tiles of 2^2 words: every transform of the shapes above runs in several passes, and
    // the quotient's inverse transform in more.
    let Some(emu) = emulator() else { return };
    let backend = KernelBackend::with_tile(emu.clone(), 2);
    for case in common::fibonacci_cases() {
        common::check_proof(&backend, &case);
    }
    common::check_proof(&backend, &common::keccak_cases()[1]);
}

#[test]
fn poseidon2_proofs_are_byte_identical_to_the_cpu_backend() {
    let Some(emu) = emulator() else { return };
    let backend = KernelBackend::new(emu.clone());
    let (fibonacci, keccak) = common::poseidon2_cases();
    for case in &fibonacci {
        common::check_proof(&backend, case);
    }
    common::check_proof(&backend, &keccak);
    common::check_parts(&backend, &fibonacci[0], 3);
}

#[test]
fn poseidon2_chain_proofs_are_byte_identical_to_the_cpu_backend() {
    let Some(emu) = emulator() else { return };
    let backend = KernelBackend::new(emu.clone());
    for case in common::poseidon2_chain_cases() {
        common::check_proof(&backend, &case);
    }
}

#[test]
fn poseidon2_grinding_finds_the_cpus_nonce_from_every_cell() {
    // The nonce's low half lands in each of the 8 rate cells in turn (the last one permutes
    // before its high half); nonces above 2^32, so that both halves count.
    let Some(emu) = emulator() else { return };
    let constants = ballast_cuda::poseidon2_constants();
    let rc = emu.alloc(constants.len()).unwrap();
    emu.upload(&constants, &rc, 0).unwrap();
    let (state, found) = (emu.alloc(13).unwrap(), emu.alloc(1).unwrap());
    let (start, count, bits) = (0xdead_beef_0000_0000u64, 1024, 6);
    let mut t = Transcript::new(MerkleHash::Poseidon2, b"grind");
    let mut seen = [false; 8];
    for _ in 0..8 {
        let WorkState::Poseidon2 { cells, next } = t.work_state() else {
            panic!("a Poseidon2 transcript");
        };
        seen[next] = true;
        let mut words: Vec<u64> = cells.iter().map(|c| c.as_u64()).collect();
        words.push(next as u64);
        emu.upload(&words, &state, 0).unwrap();
        emu.upload(&[u64::MAX], &found, 0).unwrap();
        emu.launch(
            Kernel::GrindPoseidon2,
            Grid::items(count).unwrap(),
            &[
                Arg::Buffer(&state),
                Arg::Buffer(&rc),
                Arg::Word(start),
                Arg::Word(count),
                Arg::Word(u64::from(bits)),
                Arg::Buffer(&found),
            ],
        )
        .unwrap();
        let mut got = [0];
        emu.download(&found, 0, &mut got).unwrap();
        let expected = (start..start + count).find(|&n| t.check_pow(bits, n));
        assert_eq!(Some(got[0]), expected, "low half in cell {next}");
        // Three elements (kind, empty label, no element): the next cell moves by 3.
        t.absorb_felts("", &[]);
    }
    assert_eq!(seen, [true; 8]);
}

#[test]
fn parts_proven_on_the_device_bundle_into_the_cpu_proof() {
    let Some(emu) = emulator() else { return };
    let backend = KernelBackend::new(emu.clone());
    common::check_parts(&backend, &common::fibonacci_cases()[0], 3);
    common::check_parts(&backend, &common::keccak_cases()[0], 2);
}

#[test]
fn later_segments_allocate_nothing_and_transfers_stay_within_bounds() {
    let Some(emu) = emulator() else { return };
    common::check_counters(&KernelBackend::new(emu.clone()));
}

#[test]
fn a_missing_barrier_fails_the_launch() {
    // The transform pass with its first barrier (after the tile is loaded) removed: the
    // first stage reads words other threads wrote since the last barrier.
    let Some(_) = emulator() else { return };
    let cxx = compiler().expect("a compiler, since the emulator was built");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("kernels");
    std::fs::create_dir_all(copy.join("emu")).unwrap();
    for entry in std::fs::read_dir(kernels_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, copy.join(path.file_name().unwrap())).unwrap();
        }
    }
    for name in ["launch.cpp", "shim.h"] {
        std::fs::copy(
            kernels_dir().join("emu").join(name),
            copy.join("emu").join(name),
        )
        .unwrap();
    }
    let ntt = std::fs::read_to_string(copy.join("ntt.cu")).unwrap();
    let barrier = "        tile[e] = value;\n    }\n    __syncthreads();\n";
    assert!(
        ntt.contains(barrier),
        "ntt.cu's load loop ends with a barrier"
    );
    std::fs::write(
        copy.join("ntt.cu"),
        ntt.replace(barrier, "        tile[e] = value;\n    }\n"),
    )
    .unwrap();
    let library = dir.path().join("libbroken.so");
    build(&cxx, &copy, &library);
    let broken = KernelBackend::new(load(&library));
    let case = &common::fibonacci_cases()[1];
    let result = ballast_stark::prove_statement(
        &case.workload,
        &case.params,
        &broken,
        &mut ballast_stark::PhaseTimes::default(),
        &mut |_| {},
    );
    // Thread 0 runs first up to the next barrier, so it reads words the threads after it
    // have not loaded yet; run in another order, it would read words they wrote since the
    // last barrier. Either is caught.
    let err = result.expect_err("a race fails the proof").to_string();
    assert!(
        err.contains("ntt_pass")
            && (err.contains("no thread of the block wrote")
                || err.contains("since the last barrier")),
        "{err}"
    );
}

/// The default statement (4 segments of 2^14 rows, 128 bits provable) on the emulated
/// device: byte-identical to the CPU's proof, and what the backend counted per segment.
/// Minutes of emulation: run by hand (`--ignored`), its figures are in docs/gpu.md.
#[test]
#[ignore = "minutes of emulation; docs/gpu.md quotes its output"]
fn default_statement_transfers() {
    let Some(emu) = emulator() else { return };
    // cli prove's embedded statement: seed Keccak-256("ballast"), 4 segments of 2^14 rows.
    use sha3::Digest as _;
    let mut workload = ballast_workloads::KeccakChain {
        seed: sha3::Keccak256::digest("ballast").into(),
        steps: 1,
        log_rows: 14,
    };
    workload.steps = 4 * workload.steps_per_segment();
    let params = ballast_stark::StarkParams::for_security(
        &ballast_stark::Workload::air(&workload, 0),
        128,
        ballast_stark::Regime::Jbr,
    )
    .unwrap();
    let backend = KernelBackend::new(emu.clone());
    let started = Instant::now();
    let proof = ballast_stark::prove_statement(
        &workload,
        &params,
        &backend,
        &mut ballast_stark::PhaseTimes::default(),
        &mut |_| {},
    )
    .unwrap();
    let emulated = started.elapsed();
    let cpu = ballast_stark::prove_statement(
        &workload,
        &params,
        &ballast_stark::CpuBackend::new(),
        &mut ballast_stark::PhaseTimes::default(),
        &mut |_| {},
    )
    .unwrap();
    let bytes = proof.to_bytes();
    assert!(
        bytes == cpu.to_bytes(),
        "the emulated proof differs from the CPU's"
    );
    let c = ballast_stark::Backend::counters(&backend).unwrap();
    let segments = ballast_stark::Workload::segments(&workload) as u64;
    println!(
        "default statement on the emulated device ({:.0} s): {} segments, proof {} bytes; \
         device peak {} bytes; up {} bytes ({} a segment); down {} bytes ({} a segment)",
        emulated.as_secs_f64(),
        segments,
        bytes.len(),
        c.device_peak_bytes,
        c.pcie_up_bytes,
        c.pcie_up_bytes / segments,
        c.pcie_down_bytes,
        c.pcie_down_bytes / segments
    );
}
