//! The real `kernels/*.cu`, built for the host with a C++ compiler and the shim in
//! `kernels/emu/`, driven by the crate's own launch sequences and compared with the CPU
//! code: LDE columns, row trees, FRI layer trees, the backend calls and whole proofs.
//!
//! This checks the kernels' logic on machines without a GPU. Each emulated launch runs every
//! thread of the grid in turn, which is faithful because no kernel shares data between the
//! threads of a launch. Buffers carry guard words on both sides, checked after every launch,
//! and buffers the kernels are meant to fill ([`Launcher::alloc_uninit`]) start out poisoned,
//! so that a word a kernel fails to write cannot pass for a correct 0.
//!
//! Without a C++ compiler on PATH every test prints "skipping: no C++ compiler …" and passes,
//! unless `BALLAST_REQUIRE_CXX=1` (which CI sets), which turns the skip into a failure.

mod common;

use std::cell::UnsafeCell;
use std::ffi::{CString, c_char, c_int, c_uint};
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once, OnceLock};

use ballast_cuda::{Arg, ColumnForm, CudaError, Kernel, KernelBackend, Launcher, grid};
use ballast_field::{Felt, RowBlocks};
use ballast_stark::{Backend, CpuBackend, PhaseTimes};

/// `ballast_emu_launch(kernel, grid, block, args, num_args)` in `kernels/emu/launch.cpp`.
type LaunchFn = unsafe extern "C" fn(*const c_char, c_uint, c_uint, *const u64, c_uint) -> c_int;

/// `ballast_emu_gl_{add,sub,mul}(a, b)`: the kernels' field operations.
type FieldFn = unsafe extern "C" fn(u64, u64) -> u64;

/// Guard words on each side of every buffer.
const GUARD: usize = 16;
const GUARD_WORD: u64 = 0xdead_beef_0bad_f00d;

/// What an [`Launcher::alloc_uninit`] buffer holds until a kernel writes it: 0xA5 bytes.
/// A zero-filled buffer would hide a skipped write wherever the expected word is 0 (zero
/// columns, edge values); this word is no value the comparisons with the CPU expect.
const POISON_WORD: u64 = 0xa5a5_a5a5_a5a5_a5a5;

/// Host memory standing in for a device buffer: guard words, the data, guard words.
struct EmuBuffer {
    words: UnsafeCell<Vec<u64>>,
}

impl EmuBuffer {
    fn new(data: &[u64]) -> Self {
        let mut words = vec![GUARD_WORD; GUARD];
        words.extend_from_slice(data);
        words.extend(std::iter::repeat_n(GUARD_WORD, GUARD));
        Self {
            words: UnsafeCell::new(words),
        }
    }

    /// The address of the data, as a kernel receives it.
    fn address(&self) -> u64 {
        // SAFETY: a raw pointer into the Vec, which is never resized after construction;
        // no Rust reference to its contents is alive while a kernel runs.
        unsafe { (*self.words.get()).as_mut_ptr().add(GUARD) as u64 }
    }

    fn snapshot(&self) -> Vec<u64> {
        // SAFETY: no kernel is running; launches are synchronous.
        unsafe { (*self.words.get()).clone() }
    }

    fn guards_intact(&self) -> bool {
        let words = self.snapshot();
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

impl Launcher for Emulator {
    type Buffer = EmuBuffer;
    const NAME: &'static str = "emulated";

    fn upload(&self, words: &[u64]) -> Result<EmuBuffer, CudaError> {
        Ok(EmuBuffer::new(words))
    }

    fn alloc(&self, len: usize) -> Result<EmuBuffer, CudaError> {
        Ok(EmuBuffer::new(&vec![0; len]))
    }

    fn alloc_uninit(&self, len: usize) -> Result<EmuBuffer, CudaError> {
        Ok(EmuBuffer::new(&vec![POISON_WORD; len]))
    }

    fn download(&self, buffer: &EmuBuffer, len: usize) -> Result<Vec<u64>, CudaError> {
        Ok(buffer.snapshot()[GUARD..GUARD + len].to_vec())
    }

    fn launch(
        &self,
        kernel: Kernel,
        threads: u64,
        args: &[Arg<'_, EmuBuffer>],
    ) -> Result<(), CudaError> {
        let (blocks, block) = grid(threads)?;
        let words: Vec<u64> = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(b) => b.address(),
                Arg::Word(w) => *w,
            })
            .collect();
        let name = CString::new(kernel.name()).expect("kernel names have no NUL");
        // SAFETY: the library was built from kernels/emu/launch.cpp, whose entry point has
        // this signature; `words` outlives the call, and every buffer address points at a
        // live EmuBuffer. Out-of-bounds writes would hit the guard words, checked below.
        let status = unsafe {
            (self.launch)(
                name.as_ptr(),
                blocks,
                block,
                words.as_ptr(),
                words.len() as c_uint,
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
            _ => return fail(format!("{} takes another argument count", kernel.name())),
        }
        for arg in args {
            if let Arg::Buffer(b) = arg {
                assert!(
                    b.guards_intact(),
                    "{} wrote outside a buffer",
                    kernel.name()
                );
            }
        }
        Ok(())
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

/// Builds and loads the emulated kernels once per test process; `None` (after saying so)
/// without a compiler.
///
/// # Panics
/// Without a compiler when `BALLAST_REQUIRE_CXX=1`.
fn emulator() -> Option<&'static Emulator> {
    static EMULATOR: OnceLock<Option<Emulator>> = OnceLock::new();
    let emulator = EMULATOR.get_or_init(|| {
        let cxx = compiler()?;
        let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let library = dir.path().join("libballast_emu.so");
        let out = Command::new(&cxx)
            .args(["-std=c++17", "-O2", "-shared", "-fPIC"])
            .args(["-Wall", "-Wextra", "-Wno-unknown-pragmas"])
            .arg("-o")
            .arg(&library)
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
        // SAFETY: loading runs no initialisers beyond the C++ runtime's. The file may go
        // once it is mapped.
        let library = unsafe { libloading::Library::new(&library) }.expect("the library loads");
        // SAFETY: the symbol is launch.cpp's extern "C" entry point with this signature,
        // and `Emulator` keeps the library loaded as long as the pointer is used.
        let launch = *unsafe { library.get::<LaunchFn>(b"ballast_emu_launch\0") }
            .expect("the entry point exists");
        let field = [
            &b"ballast_emu_gl_add\0"[..],
            b"ballast_emu_gl_sub\0",
            b"ballast_emu_gl_mul\0",
        ]
        // SAFETY: launch.cpp's extern "C" field operations, all with this signature.
        .map(|name| *unsafe { library.get::<FieldFn>(name) }.expect("the entry point exists"));
        Some(Emulator {
            _library: Arc::new(library),
            launch,
            field,
        })
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
    values.extend(common::sample(40, 3).iter().map(|f| f.as_u64()));
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
fn lde_columns_match_the_cpu_plan() {
    if let Some(emu) = emulator() {
        common::check_lde(emu);
    }
}

#[test]
fn row_trees_match_commit_rows() {
    if let Some(emu) = emulator() {
        common::check_row_trees(emu);
    }
}

#[test]
fn fri_layer_trees_match_commit_layer() {
    if let Some(emu) = emulator() {
        common::check_fri_layers(emu);
    }
}

#[test]
fn backend_calls_match_the_cpu_backend() {
    if let Some(emu) = emulator() {
        common::check_backend(&KernelBackend::new(emu.clone()));
    }
}

#[test]
fn proofs_are_byte_identical_to_the_cpu_backend() {
    if let Some(emu) = emulator() {
        common::check_proofs(&KernelBackend::new(emu.clone()));
    }
}

/// An [`Emulator`] that counts its uploads, to see whether the backend re-uploads its tables.
struct CountingUploads {
    emulator: Emulator,
    uploads: Arc<AtomicUsize>,
}

impl Launcher for CountingUploads {
    type Buffer = EmuBuffer;
    const NAME: &'static str = Emulator::NAME;

    fn upload(&self, words: &[u64]) -> Result<EmuBuffer, CudaError> {
        self.uploads.fetch_add(1, Ordering::Relaxed);
        self.emulator.upload(words)
    }

    fn alloc(&self, len: usize) -> Result<EmuBuffer, CudaError> {
        self.emulator.alloc(len)
    }

    fn alloc_uninit(&self, len: usize) -> Result<EmuBuffer, CudaError> {
        self.emulator.alloc_uninit(len)
    }

    fn download(&self, buffer: &EmuBuffer, len: usize) -> Result<Vec<u64>, CudaError> {
        self.emulator.download(buffer, len)
    }

    fn launch(
        &self,
        kernel: Kernel,
        threads: u64,
        args: &[Arg<'_, EmuBuffer>],
    ) -> Result<(), CudaError> {
        self.emulator.launch(kernel, threads, args)
    }
}

#[test]
fn heights_that_are_not_powers_of_two_are_refused_and_keep_the_cached_tables() {
    let Some(emu) = emulator() else { return };
    let uploads = Arc::new(AtomicUsize::new(0));
    let backend = KernelBackend::new(CountingUploads {
        emulator: emu.clone(),
        uploads: Arc::clone(&uploads),
    });
    let good = common::matrix(2, 4, 1);
    backend
        .extend_and_commit(
            &mut good.clone(),
            ColumnForm::Evaluations,
            1,
            &mut PhaseTimes::default(),
        )
        .unwrap();
    for height in [0, 3, 12] {
        let bad = RowBlocks::zeroed(2, height, height);
        let before = uploads.load(Ordering::Relaxed);
        for form in [ColumnForm::Evaluations, ColumnForm::Raw] {
            let result =
                backend.extend_and_commit(&mut bad.clone(), form, 1, &mut PhaseTimes::default());
            let err = result.expect_err("a height that is not a power of two");
            assert_eq!(err.backend, "emulated");
            assert_eq!(
                err.message,
                format!(
                    "invalid input: a matrix of height {height} to extend, need a power of two \
                     (at least 1)"
                )
            );
        }
        assert_eq!(
            uploads.load(Ordering::Relaxed),
            before,
            "height {height}: nothing may be uploaded"
        );
    }
    // The tables of the good shape survived: committing it again uploads only the matrix.
    let before = uploads.load(Ordering::Relaxed);
    let mut got = good.clone();
    let got_tree = backend
        .extend_and_commit(
            &mut got,
            ColumnForm::Evaluations,
            1,
            &mut PhaseTimes::default(),
        )
        .unwrap();
    assert_eq!(
        uploads.load(Ordering::Relaxed) - before,
        1,
        "only the matrix"
    );
    let mut expected = good.clone();
    let expected_tree = CpuBackend::new()
        .extend_and_commit(
            &mut expected,
            ColumnForm::Evaluations,
            1,
            &mut PhaseTimes::default(),
        )
        .unwrap();
    assert!(got == expected && got_tree.root() == expected_tree.root());
}
