//! Writing results: files atomically, stdout without panicking on a closed pipe.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// Writes `bytes` to `path` through a temporary file in the same directory, renamed into
/// place only once complete and synced: readers see the old file or the whole new one,
/// never a partial one, whatever happens to this process.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = temp_file_beside(path)?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot move the new file into place at {}", path.display()))?;
    Ok(())
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
    tempfile::Builder::new()
        .prefix(".ballast-")
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
