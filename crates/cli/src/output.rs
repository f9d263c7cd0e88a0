//! Writing results: files atomically, stdout without panicking on a closed pipe.

use std::ffi::CString;
use std::fs::OpenOptions;
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
/// never a partial one, whatever happens to this process. A `path` that is a stream
/// ([`is_stream`]: `/dev/null`, `/dev/stdout`, a named pipe) is written in place: a
/// rename would replace the device or pipe with a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_stream(path) {
        return (OpenOptions::new().write(true).open(path))
            .and_then(|mut stream| stream.write_all(bytes))
            .with_context(|| format!("cannot write {}", path.display()));
    }
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
    if is_stream(path) {
        // Not opened here: a named pipe's writer waits for its reader.
        let c_path = CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: `c_path` is a NUL-terminated path that outlives the call.
        if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } != 0 {
            let error = io::Error::last_os_error();
            return Err(error).with_context(|| format!("cannot write {}", path.display()));
        }
        return Ok(());
    }
    temp_file_beside(path).map(drop)
}

/// Whether `path` is something other than a file or a directory (a device, a named pipe, a
/// socket), after links: what is written in place, not replaced.
fn is_stream(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
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
    fn a_named_pipe_is_written_in_place_not_replaced() {
        use std::io::Read as _;
        use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c_path` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // Its reader first (without waiting for a writer), so the writer does not wait.
        let mut reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .unwrap();
        check_writable(&path).unwrap();
        write_atomic(&path, b"proof").unwrap();
        assert!(std::fs::metadata(&path).unwrap().file_type().is_fifo());
        let mut read = Vec::new();
        reader.read_to_end(&mut read).unwrap();
        assert_eq!(read, b"proof");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
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
