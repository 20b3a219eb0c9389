//! Writing an export: to a new temporary file beside the target (created exclusively, 0600,
//! never through a symlink), renamed over the target when complete, so a reader never sees half
//! a page and nothing is written anywhere else.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::store::safe_file;
use crate::store::{ErrorKind, StoreError, StoreResult};

/// Writes what `write` produces to `target`, replacing a regular file there; returns the bytes
/// written. A symlink, directory or other non-regular file at `target` is refused, not
/// followed or replaced.
pub(crate) fn write_replacing(
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> StoreResult<()>,
) -> StoreResult<u64> {
    check_target(target)?;
    let temporary = safe_file::temporary_beside(target)
        .map_err(|e| StoreError::io(target, "cannot create the export", e))?;
    let mut counted = Counted {
        inner: BufWriter::with_capacity(1 << 20, temporary.as_file()),
        bytes: 0,
    };
    write(&mut counted)?;
    counted
        .flush()
        .map_err(|e| StoreError::io(target, "cannot write the export", e))?;
    let bytes = counted.bytes;
    drop(counted);
    safe_file::replace_with(temporary, target, false)
        .map_err(|e| StoreError::io(target, "cannot write the export", e))?;
    Ok(bytes)
}

/// Whether `target` may be written: absent, or a regular file (not a symlink to one).
pub(crate) fn check_target(target: &Path) -> StoreResult<()> {
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::io(target, "cannot write the export", e)),
        Ok(meta) if meta.file_type().is_symlink() => Err(StoreError::in_file(
            ErrorKind::InvalidArgument,
            target,
            format!(
                "{}: is a symbolic link; an export is never written through one",
                target.display()
            ),
        )),
        Ok(meta) if !meta.is_file() => Err(StoreError::in_file(
            ErrorKind::InvalidArgument,
            target,
            format!("{}: is not a regular file", target.display()),
        )),
        Ok(_) => Ok(()),
    }
}

/// An I/O error while writing the export, as a store error naming the file.
pub(crate) fn write_error(error: io::Error) -> StoreError {
    StoreError::new(ErrorKind::Io, format!("cannot write the export: {error}"))
}

struct Counted<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
