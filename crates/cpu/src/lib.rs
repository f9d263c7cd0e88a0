#![doc = include_str!("../README.md")]

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// Asks the CPU to bring the cache line holding `values[index]` into its caches, for reads
/// far apart that the hardware prefetchers would not foresee. A hint: an index past the end
/// reads nothing and cannot fault.
#[inline(always)]
pub fn prefetch<T>(values: &[T], index: usize) {
    // `wrapping_add` keeps the address computation defined past the end.
    prefetch_at(values.as_ptr().wrapping_add(index));
}

/// [`prefetch`] of the line at `at`, any address.
#[inline(always)]
pub fn prefetch_at<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// The environment variable that forces a path.
pub const ENV: &str = "BALLAST_CPU";

/// The environment variable naming the paths a test run must not skip (comma-separated,
/// e.g. `avx2,avx512`): CI sets it from the host's CPU flags, so that a path the machine has
/// is never skipped without failing.
pub const REQUIRE_ENV: &str = "BALLAST_REQUIRE_CPU_PATHS";

/// Whether a test may run `path` on this CPU. When it may not, says so on the process's
/// standard error — written to the stream itself, past the test harness's capture, so a skip
/// is seen — and returns false.
///
/// # Panics
/// When [`REQUIRE_ENV`] names the path (or is malformed): the run requires it.
pub fn testable(path: CpuPath) -> bool {
    let required = std::env::var(REQUIRE_ENV).unwrap_or_default();
    match skip_or_fail(path, path.is_supported(), &required) {
        Ok(None) => true,
        Ok(Some(skip)) => {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{skip}");
            false
        }
        Err(failure) => panic!("{failure}"),
    }
}

/// [`testable`]'s verdict: `Ok(None)` to run the path, `Ok(Some(message))` to skip it,
/// `Err(message)` when `required` (the value of [`REQUIRE_ENV`]) forbids the skip or is
/// malformed.
fn skip_or_fail(path: CpuPath, supported: bool, required: &str) -> Result<Option<String>, String> {
    let required_paths = required
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|name| {
            name.parse::<CpuPath>().map_err(|_| {
                format!("{REQUIRE_ENV}: {name:?} is not a CPU path (scalar, avx2, avx512)")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if supported {
        return Ok(None);
    }
    if required_paths.contains(&path) {
        return Err(format!(
            "{REQUIRE_ENV}={required} requires the {path} path, which this CPU does not support"
        ));
    }
    Ok(Some(format!(
        "skipping the {path} path: this CPU does not support {}",
        path.requirement()
    )))
}

/// A family of CPU kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuPath {
    /// Portable Rust, one element at a time.
    Scalar,
    /// AVX2: 4 × 64-bit lanes.
    Avx2,
    /// AVX-512F: 8 × 64-bit lanes.
    Avx512,
}

/// Why `BALLAST_CPU` cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuPathError {
    /// Not one of the path names.
    #[error("{ENV}={0:?} is not a CPU path (scalar, avx2, avx512)")]
    Unknown(String),
    /// A path this CPU lacks the instructions for.
    #[error("{ENV}={path}: this CPU does not support {needs}", path = .0, needs = .0.requirement())]
    Unsupported(CpuPath),
}

impl CpuPath {
    /// Every path, slowest first.
    pub const ALL: [Self; 3] = [Self::Scalar, Self::Avx2, Self::Avx512];

    /// The name `BALLAST_CPU` and the reports use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Scalar => "scalar",
            Self::Avx2 => "avx2",
            Self::Avx512 => "avx512",
        }
    }

    /// The instruction set the path needs.
    fn requirement(self) -> &'static str {
        match self {
            Self::Scalar => "nothing",
            Self::Avx2 => "AVX2",
            Self::Avx512 => "AVX-512F",
        }
    }

    /// True when this CPU can run the path.
    pub fn is_supported(self) -> bool {
        match self {
            Self::Scalar => true,
            Self::Avx2 => Avx2::detect().is_some(),
            Self::Avx512 => Avx512::detect().is_some(),
        }
    }

    /// The path taken when `BALLAST_CPU` is unset: the widest the CPU has (AVX-512, else
    /// AVX2, else scalar).
    pub fn best() -> Self {
        [Self::Avx512, Self::Avx2, Self::Scalar]
            .into_iter()
            .find(|p| p.is_supported())
            .unwrap_or(Self::Scalar)
    }

    /// The path `BALLAST_CPU` names, or the best one when it is unset.
    ///
    /// # Errors
    /// If the variable names no path, is not UTF-8, or names a path this CPU lacks.
    pub fn from_env() -> Result<Self, CpuPathError> {
        match std::env::var_os(ENV) {
            None => Ok(Self::best()),
            Some(value) => {
                let value = value
                    .into_string()
                    .map_err(|raw| CpuPathError::Unknown(raw.to_string_lossy().into_owned()))?;
                let path: Self = value.parse()?;
                if path.is_supported() {
                    Ok(path)
                } else {
                    Err(CpuPathError::Unsupported(path))
                }
            }
        }
    }
}

impl FromStr for CpuPath {
    type Err = CpuPathError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| CpuPathError::Unknown(s.to_owned()))
    }
}

impl fmt::Display for CpuPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

static SELECTED: OnceLock<Result<CpuPath, CpuPathError>> = OnceLock::new();

/// The process's path, read from `BALLAST_CPU` (or detected) once. Binaries call this first,
/// so a bad value is reported before any work starts.
///
/// # Errors
/// As [`CpuPath::from_env`].
pub fn select() -> Result<CpuPath, CpuPathError> {
    SELECTED.get_or_init(CpuPath::from_env).clone()
}

/// The process's path, for the kernels' dispatch.
///
/// # Panics
/// If `BALLAST_CPU` is invalid; binaries report that through [`select`] before proving.
pub fn active() -> CpuPath {
    select().unwrap_or_else(|err| panic!("{err}"))
}

/// Proof that this CPU runs AVX2: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

impl Avx2 {
    /// The token, when the CPU supports AVX2.
    pub fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Self(()));
        }
        None
    }
}

/// Proof that this CPU runs AVX-512F: only [`Avx512::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

impl Avx512 {
    /// The token, when the CPU supports AVX-512F.
    pub fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            return Some(Self(()));
        }
        None
    }
}

/// The kernels a path runs with: the token that licenses them, or none for scalar.
#[derive(Clone, Copy, Debug)]
pub enum Kernels {
    /// Portable code.
    Scalar,
    /// AVX2 kernels.
    Avx2(Avx2),
    /// AVX-512 kernels.
    Avx512(Avx512),
}

impl Kernels {
    /// The kernels of `path`, or `None` where this CPU cannot run it.
    pub fn of(path: CpuPath) -> Option<Self> {
        match path {
            CpuPath::Scalar => Some(Self::Scalar),
            CpuPath::Avx2 => Avx2::detect().map(Self::Avx2),
            CpuPath::Avx512 => Avx512::detect().map(Self::Avx512),
        }
    }

    /// The kernels of the process's [`active`] path.
    pub fn active() -> Self {
        Self::of(active()).expect("the selected path is supported")
    }

    /// Every path this CPU supports, for tests that compare them; a skipped one is said
    /// ([`testable`]).
    pub fn supported() -> Vec<Self> {
        CpuPath::ALL
            .into_iter()
            .filter(|&path| testable(path))
            .filter_map(Self::of)
            .collect()
    }

    /// The path these kernels belong to.
    pub fn path(self) -> CpuPath {
        match self {
            Self::Scalar => CpuPath::Scalar,
            Self::Avx2(_) => CpuPath::Avx2,
            Self::Avx512(_) => CpuPath::Avx512,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_required_path_is_never_skipped() {
        assert_eq!(skip_or_fail(CpuPath::Avx512, true, "avx512"), Ok(None));
        let skip = skip_or_fail(CpuPath::Avx512, false, "avx2").unwrap();
        assert_eq!(
            skip.as_deref(),
            Some("skipping the avx512 path: this CPU does not support AVX-512F")
        );
        assert_eq!(
            skip_or_fail(CpuPath::Avx512, false, "avx2, avx512"),
            Err(format!(
                "{REQUIRE_ENV}=avx2, avx512 requires the avx512 path, which this CPU does not support"
            ))
        );
        assert!(skip_or_fail(CpuPath::Avx2, true, "avx3").is_err());
    }

    #[test]
    fn names_round_trip() {
        for path in CpuPath::ALL {
            assert_eq!(path.name().parse::<CpuPath>(), Ok(path));
        }
        assert_eq!(
            "AVX2".parse::<CpuPath>(),
            Err(CpuPathError::Unknown("AVX2".into()))
        );
        assert_eq!(
            CpuPathError::Unknown("sse".into()).to_string(),
            "BALLAST_CPU=\"sse\" is not a CPU path (scalar, avx2, avx512)"
        );
    }

    #[test]
    fn tokens_agree_with_support() {
        for path in CpuPath::ALL {
            assert_eq!(Kernels::of(path).is_some(), path.is_supported(), "{path}");
        }
        assert!(CpuPath::best().is_supported());
        assert_eq!(
            Kernels::of(CpuPath::Scalar).map(Kernels::path),
            Some(CpuPath::Scalar)
        );
    }
}
