//! Memory the allocator gives back.
//!
//! A fleet reads thousands of logs, each through decoder buffers of 128 KiB to 512 KiB (zstd's
//! window, the decode buffer) that are freed when the log is finished. glibc serves such blocks
//! from its heap by default, and the small, long-lived model data allocated between them keeps
//! the freed ranges from ever going back to the system: measured over 1,000 applications, 101 MiB
//! resident after the cold start against 38 MiB when blocks of 64 KiB and more are mapped on their
//! own (BENCHMARKS.md, "1,000 applications"). So the exporter asks for that at start.
//!
//! Fixing that threshold also fixes glibc's trim threshold at 128 KiB, and each reader
//! thread's heap then grew page by page (`mprotect`) and gave back its top as soon as it freed
//! it: 4,464 `mprotect` calls and 14,000 page faults in the 1,000-application cold start. So
//! each heap grows by [`TOP_PAD`] more than it needs: address space, not memory, until it is
//! written (the same cold start: 10,000 page faults instead of 14,000, about 5 % less CPU; the
//! fleet bench's peak RSS 81 MiB instead of 74).

/// Blocks of at least this size are mapped on their own and unmapped when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 64 * 1024;

/// What a heap grows by beyond what an allocation needs.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TOP_PAD: libc::c_int = 16 * 1024 * 1024;

/// Tune the allocator (see the module docs); a no-op where it is not glibc.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a glibc malloc parameter; it is called once at start, before
    // any other thread exists, with a documented parameter and a valid value.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
    }
}
