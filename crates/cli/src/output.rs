//! Writing results: files atomically, stdout without panicking on a closed pipe.

use std::ffi::CString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

use anyhow::{Context, Result};

/// The temporary file [`write_atomic`] is filling, if any, for the interrupt handler to
/// remove. Each path is leaked on purpose: the handler may still be reading it.
static PENDING: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Makes SIGINT and SIGTERM end the process at once, with status 128 + the signal, after
/// removing the temporary file [`write_atomic`] may be filling: an interrupted `cli` leaves
/// neither a partial output nor a temporary file. (Outputs are only ever written through
/// [`write_atomic`], so no other file can be half-written.)
pub fn remove_temporaries_on_interrupt() {
    extern "C" fn on_signal(signal: libc::c_int) {
        let path = PENDING.load(Ordering::SeqCst);
        // SAFETY: unlink and _exit are async-signal-safe; `path` is null or a leaked,
        // NUL-terminated path that is never freed.
        unsafe {
            if !path.is_null() {
                libc::unlink(path);
            }
            libc::_exit(128 + signal);
        }
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only calls async-signal-safe functions.
        unsafe {
            libc::signal(signal, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory, renamed into
/// place only once complete and synced: readers see the old file or the whole new one,
/// never a partial one, whatever happens to this process.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = temp_file_beside(path)?;
    if let Ok(c_path) = CString::new(tmp.path().as_os_str().as_bytes()) {
        PENDING.store(c_path.into_raw(), Ordering::SeqCst);
    }
    let written = tmp
        .write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
        .and_then(|()| {
            tmp.persist(path).map_err(|e| e.error).with_context(|| {
                format!("cannot move the new file into place at {}", path.display())
            })
        });
    PENDING.store(std::ptr::null_mut(), Ordering::SeqCst);
    written.map(drop)
}

/// Fails now, not after minutes of proving, if `path` cannot be written.
pub fn check_writable(path: &Path) -> Result<()> {
    let names_a_directory = path.file_name().is_none() || path.to_string_lossy().ends_with('/');
    if path.is_dir() || names_a_directory {
        anyhow::bail!("{} is a directory, not a file name", path.display());
    }
    temp_file_beside(path).map(drop)
}

fn temp_file_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Created as any new file is (0666 less the umask), not tempfile's 0600: the mode
    // survives the rename, and a proof is meant to be read by others.
    tempfile::Builder::new()
        .prefix(".ballast-")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))
}

/// Prints to stdout; a closed pipe (`cli … | head`) is not an error.
pub fn print(text: &str) -> Result<()> {
    match io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_whole_files_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn written_files_get_the_umask_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        write_atomic(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // SAFETY: umask only swaps the process's mask; read it and put it back.
        let umask = unsafe {
            let old = libc::umask(0o022);
            libc::umask(old);
            old
        };
        assert_eq!(mode, 0o666 & !umask, "mode {mode:o}, umask {umask:o}");
    }

    #[test]
    fn unwritable_destinations_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_writable(&dir.path().join("missing/out.bin")).is_err());
        assert!(check_writable(dir.path()).is_err());
        let trailing = format!("{}/later/", dir.path().display());
        assert!(
            check_writable(Path::new(&trailing)).is_err(),
            "a trailing / names a directory"
        );
        assert!(check_writable(&dir.path().join("ok.bin")).is_ok());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
