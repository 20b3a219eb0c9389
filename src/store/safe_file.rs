//! The one way this program opens, creates and replaces files.
//!
//! Every file it makes (a new session, a temporary, a backup, a cache) is created exclusively
//! (`O_EXCL`, which never follows a symlink at the final name, plus `O_NOFOLLOW`) with mode
//! 0600, so a symlink or file planted at that name is never written through or replaced.
//! Temporaries get unpredictable names. Every file it reads as a session or a cache is opened
//! without blocking and must be a regular file: a FIFO, device or directory is refused by name
//! before a byte is read, and reads stop at the size the file had when it was opened.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How a regular file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    /// Read and append.
    Append,
}

/// Opens an existing regular file without blocking. A session file that is a symlink to a
/// regular file is followed (real `~/.pi` setups have them) unless `follow_symlink` is false.
/// Anything but a regular file is refused with an error naming what it is.
pub(crate) fn open_regular(path: &Path, access: Access, follow_symlink: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    if access == Access::Append {
        options.append(true);
    }
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow_symlink {
        flags |= libc::O_NOFOLLOW;
    }
    let file = options.custom_flags(flags).open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(not_regular(&kind));
    }
    Ok(file)
}

/// The refusal of a file that is not a regular file, as `InvalidInput`: "is a directory",
/// "is a FIFO, not a regular file", ...
fn not_regular(kind: &std::fs::FileType) -> io::Error {
    use std::os::unix::fs::FileTypeExt;
    let what = if kind.is_dir() {
        return io::Error::new(io::ErrorKind::InvalidInput, "is a directory");
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {what}, not a regular file"),
    )
}

/// Whether an error from [`open_regular`] is its refusal of a non-regular file.
pub(crate) fn is_not_regular(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::InvalidInput
}

/// Reads all of a regular file, but never more than the size it had when opened (a file that
/// grows while it is read, or a device behind a symlink, cannot grow memory).
pub(crate) fn read_regular(path: &Path, follow_symlink: bool) -> io::Result<Vec<u8>> {
    let file = open_regular(path, Access::Read, follow_symlink)?;
    let len = file.metadata()?.len();
    read_prefix(&file, len)
}

/// The first `len` bytes of `file` (fewer if it is shorter now).
pub(crate) fn read_prefix(file: &File, len: u64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(len).map_err(|_| io::Error::other("file too large"))?;
    let mut buffer = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        match file.read_at(&mut buffer[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buffer.truncate(filled);
    Ok(buffer)
}

/// Creates `path`, which must not exist (not even as a dangling symlink), mode 0600, open for
/// reading and appending.
pub(crate) fn create_exclusive(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// A new temporary file beside `target` (same directory, so it can be renamed over it), with
/// an unpredictable name, created exclusively, mode 0600. Removed when dropped unless
/// [`replace_with`] renames it.
pub(crate) fn temporary_beside(target: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = parent_dir(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)
}

/// Renames `temporary` over `target` (replacing a symlink at `target` itself, never its
/// target), after syncing the temporary's bytes; syncs the directory when `durable`.
pub(crate) fn replace_with(
    temporary: tempfile::NamedTempFile,
    target: &Path,
    durable: bool,
) -> io::Result<()> {
    temporary.as_file().sync_all()?;
    temporary.persist(target).map_err(|e| e.error)?;
    if durable {
        sync_dir_of(target)?;
    }
    Ok(())
}

/// Copies the first `len` bytes of `source` to a new file at `wanted`, or, when something
/// already has that name, at `wanted.1`, `wanted.2`, ...: an existing backup is never
/// replaced. Returns where the copy went; the copy is synced.
pub(crate) fn keep_copy(source: &File, len: u64, wanted: &Path) -> io::Result<PathBuf> {
    let mut candidate = wanted.to_path_buf();
    for n in 1..=1000u32 {
        match create_exclusive(&candidate) {
            Ok(mut out) => {
                let written = (|| {
                    copy_prefix(source, len, &mut out)?;
                    out.sync_all()
                })();
                if let Err(e) = written {
                    let _ = std::fs::remove_file(&candidate);
                    return Err(e);
                }
                return Ok(candidate);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let mut name = wanted.as_os_str().to_os_string();
                name.push(format!(".{n}"));
                candidate = PathBuf::from(name);
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{}: too many backups already", wanted.display()),
    ))
}

fn copy_prefix(source: &File, len: u64, out: &mut File) -> io::Result<()> {
    let mut buffer = vec![0u8; 1 << 20];
    let mut position = 0u64;
    while position < len {
        let want = buffer.len().min((len - position) as usize);
        let n = source.read_at(&mut buffer[..want], position)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was copied",
            ));
        }
        out.write_all(&buffer[..n])?;
        position += n as u64;
    }
    Ok(())
}

/// Syncs the directory holding `path`, so that a create or rename in it survives a crash.
pub(crate) fn sync_dir_of(path: &Path) -> io::Result<()> {
    sync_dir(parent_dir(path))
}

/// Syncs a directory (after creating or renaming entries in it, or after creating it).
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_never_follow_or_replace() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_exclusive(&link).is_err());
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(create_exclusive(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        // A backup beside a planted symlink goes to a new name.
        let source = File::open(&victim).unwrap();
        let kept = keep_copy(&source, 4, &link).unwrap();
        assert_eq!(kept, dir.path().join("link.1"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn only_regular_files_are_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo, Access::Read, true).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read_regular(&zero, true).is_err());
        assert!(open_regular(dir.path(), Access::Read, true).is_err());
    }
}
