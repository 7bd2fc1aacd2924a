//! Memory the allocator gives back.
//!
//! A fleet reads thousands of logs, each through decoder buffers of 128 KiB to 512 KiB (zstd's
//! window, the decode buffer) that are freed when the log is finished. glibc serves such blocks
//! from its heap by default, and the small, long-lived model data allocated between them keeps
//! the freed ranges from ever going back to the system: measured over 1,000 applications, 101 MiB
//! resident after the cold start against 38 MiB when blocks of 64 KiB and more are mapped on their
//! own (BENCHMARKS.md, "1,000 applications"). So the exporter asks for that at start.

/// Blocks of at least this size are mapped on their own and unmapped when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 64 * 1024;

/// Tune the allocator (see the module docs); a no-op where it is not glibc.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a glibc malloc parameter; it is called once at start, before
    // any other thread exists, with a documented parameter and a valid value.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
