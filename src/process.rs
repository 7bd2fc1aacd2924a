//! The exporter process's own resources, as the Prometheus client libraries export them
//! (`process_cpu_seconds_total`, `process_resident_memory_bytes`, ...): read from Linux's
//! `/proc/self` at each export. Elsewhere, or when `/proc` cannot be read, every value is
//! `None` and the families have no sample.

use std::sync::OnceLock;

/// One reading of the process's resources.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// User and system CPU time, seconds.
    pub cpu_seconds: Option<f64>,
    /// Resident set size, bytes.
    pub resident_bytes: Option<u64>,
    /// Virtual memory size, bytes.
    pub virtual_bytes: Option<u64>,
    /// Open file descriptors.
    pub open_fds: Option<u64>,
    /// The soft limit on open file descriptors.
    pub max_fds: Option<u64>,
    /// Start of the process, seconds since the epoch.
    pub start_time_seconds: Option<f64>,
    /// Threads.
    pub threads: Option<u64>,
}

/// Clock ticks per second and the page size (`sysconf`), read once.
fn units() -> (f64, u64) {
    static UNITS: OnceLock<(f64, u64)> = OnceLock::new();
    *UNITS.get_or_init(|| {
        // SAFETY: sysconf takes a constant name and reads no memory of ours.
        let (tick, page) = unsafe {
            (
                libc::sysconf(libc::_SC_CLK_TCK),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        (
            if tick > 0 { tick as f64 } else { 100.0 },
            u64::try_from(page).ok().filter(|p| *p > 0).unwrap_or(4096),
        )
    })
}

/// Seconds since the epoch at which the machine booted (`btime` of `/proc/stat`), read once.
fn boot_time() -> Option<f64> {
    static BOOT: OnceLock<Option<f64>> = OnceLock::new();
    *BOOT.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        stat.lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|v| v.trim().parse().ok())
    })
}

/// Read the process's resources now.
pub fn read() -> Stats {
    let mut s = Stats::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        parse_stat(&stat, units(), boot_time(), &mut s);
    }
    s.open_fds = std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64);
    s.max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| parse_max_fds(&l));
    s
}

/// The fields of `/proc/self/stat` (proc(5)): after the command in parentheses, which may hold
/// spaces, field 14 utime, 15 stime, 20 num_threads, 22 starttime (ticks after boot), 23 vsize
/// (bytes), 24 rss (pages).
fn parse_stat(stat: &str, (tick, page): (f64, u64), boot: Option<f64>, s: &mut Stats) {
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return;
    };
    // Field 3 (state) is the first after the command.
    let f: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    if let (Some(u), Some(st)) = (field(14), field(15)) {
        s.cpu_seconds = Some((u + st) as f64 / tick);
    }
    s.threads = field(20);
    s.start_time_seconds = field(22).zip(boot).map(|(t, b)| b + t as f64 / tick);
    s.virtual_bytes = field(23);
    s.resident_bytes = field(24).map(|p| p * page);
}

/// The soft limit of "Max open files" in `/proc/self/limits`.
fn parse_max_fds(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_a_command_with_spaces() {
        // A real line of a process called "a b) c", fields 3 to 24 and more.
        let line = "4242 (a b) c) S 1 4242 4242 0 -1 4194560 2911 0 0 0 150 50 0 0 20 0 7 0 \
                    12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
        let mut s = Stats::default();
        parse_stat(line, (100.0, 4096), Some(1_000.0), &mut s);
        assert_eq!(s.cpu_seconds, Some(2.0));
        assert_eq!(s.threads, Some(7));
        assert_eq!(s.start_time_seconds, Some(1_123.45));
        assert_eq!(s.virtual_bytes, Some(104_857_600));
        assert_eq!(s.resident_bytes, Some(2560 * 4096));
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n";
        assert_eq!(parse_max_fds(limits), Some(1024));
    }

    #[test]
    fn this_process_is_read_as_proc_says() {
        if !std::path::Path::new("/proc/self/stat").exists() {
            return;
        }
        let kb = |status: &str, k: &str| -> u64 {
            let l = status.lines().find(|l| l.starts_with(k)).unwrap();
            l.split_whitespace().nth(1).unwrap().parse().unwrap()
        };
        // RSS moves between reads (a young process grows fast): between /proc's before and
        // after, within a page or two. VmRSS is in kB.
        let rss_now = || {
            kb(
                &std::fs::read_to_string("/proc/self/status").unwrap(),
                "VmRSS:",
            ) * 1024
        };
        let before = rss_now();
        let s = read();
        let after = rss_now();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kb = |k: &str| kb(&status, k);
        // Other tests of this binary run in threads of this process and move its RSS, so this
        // only bounds it loosely (tests/it/server_probes.rs checks a running exporter closely).
        let rss = s.resident_bytes.unwrap();
        assert!(
            rss * 2 >= before.min(after) && rss <= before.max(after) * 2,
            "{rss} outside {before}..{after}"
        );
        let (vsz, want) = (
            s.virtual_bytes.unwrap() as f64,
            (kb("VmSize:") * 1024) as f64,
        );
        assert!((vsz - want).abs() <= 0.5 * want, "{vsz} vs {want}");
        assert!(s.open_fds.unwrap() >= 3);
        assert!(s.max_fds.unwrap() > 0);
        let now = crate::clock::system_now_ms() as f64 / 1000.0;
        let start = s.start_time_seconds.unwrap();
        assert!(
            start <= now + 1.0 && start > now - 86_400.0 * 365.0,
            "{start}"
        );
        assert!(s.cpu_seconds.unwrap() >= 0.0);
    }
}
