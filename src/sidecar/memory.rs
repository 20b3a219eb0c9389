//! Giving freed memory back to the system.
//!
//! glibc's allocator keeps freed pages of its heaps for reuse; after a large session closes,
//! the server would otherwise keep its peak size for the rest of its life. `malloc_trim`
//! returns the free pages at the top of every arena and unused whole pages inside them.

/// Returns freed heap memory to the system where the allocator supports it (glibc).
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}
