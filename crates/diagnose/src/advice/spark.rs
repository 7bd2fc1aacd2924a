//! What Spark does with the settings advice names: each one's default (as Spark 3.3 to 4.3 ship
//! it, read off a real 4.1.1 session), whether it is a SQL session setting (settable per job
//! group with `spark.conf.set`) or the application's, and how Spark reads a size.

/// A setting advice may name.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    /// The property.
    pub key: &'static str,
    /// Spark's default (3.3 to 4.3), as Spark prints it; `None`: unset by default (the
    /// setting falls back to another, or is off).
    pub default: Option<&'static str>,
    /// A SQL session setting: a job group can set it for its own queries.
    pub session: bool,
}

/// Every setting advice names, with its default.
pub const KNOWN: &[Known] = &[
    sql("spark.sql.autoBroadcastJoinThreshold", Some("10MB")),
    sql("spark.sql.adaptive.enabled", Some("true")),
    sql("spark.sql.adaptive.autoBroadcastJoinThreshold", None),
    sql("spark.sql.shuffle.partitions", Some("200")),
    sql(
        "spark.sql.adaptive.advisoryPartitionSizeInBytes",
        Some("64MB"),
    ),
    sql(
        "spark.sql.adaptive.coalescePartitions.enabled",
        Some("true"),
    ),
    sql("spark.sql.adaptive.skewJoin.enabled", Some("true")),
    sql(
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
        Some("5.0"),
    ),
    sql(
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
        Some("256MB"),
    ),
    sql(
        "spark.sql.windowExec.buffer.spill.threshold",
        Some("2147483647"),
    ),
    sql(
        "spark.sql.windowExec.buffer.in.memory.threshold",
        Some("4096"),
    ),
    sql(
        "spark.sql.sortMergeJoinExec.buffer.spill.threshold",
        Some("2147483647"),
    ),
    sql(
        "spark.sql.sortMergeJoinExec.buffer.in.memory.threshold",
        Some("2147483632"),
    ),
    sql(
        "spark.sql.cartesianProductExec.buffer.spill.threshold",
        Some("2147483647"),
    ),
    sql(
        "spark.sql.cartesianProductExec.buffer.in.memory.threshold",
        Some("4096"),
    ),
    sql(
        "spark.sql.sessionWindow.buffer.spill.threshold",
        Some("2147483647"),
    ),
    sql(
        "spark.sql.sessionWindow.buffer.in.memory.threshold",
        Some("4096"),
    ),
    sql("spark.sql.files.maxPartitionBytes", Some("128MB")),
    app("spark.default.parallelism", None),
    app("spark.locality.wait", Some("3s")),
    app("spark.executor.instances", None),
    app("spark.executor.memory", Some("1g")),
    app("spark.memory.fraction", Some("0.6")),
    app("spark.executor.memoryOverhead", None),
    app("spark.dynamicAllocation.enabled", Some("false")),
    // True in 4.1.1 (read off a real session); older releases may ship false, so advice
    // suggests it only where a run set it false.
    app(
        "spark.dynamicAllocation.shuffleTracking.enabled",
        Some("true"),
    ),
    app("spark.dynamicAllocation.minExecutors", Some("0")),
    app("spark.dynamicAllocation.maxExecutors", None),
    app("spark.dynamicAllocation.executorIdleTimeout", Some("60s")),
    app("spark.eventLog.logStageExecutorMetrics", Some("false")),
    app("spark.executor.processTreeMetrics.enabled", Some("false")),
];

const fn sql(key: &'static str, default: Option<&'static str>) -> Known {
    Known {
        key,
        default,
        session: true,
    }
}

const fn app(key: &'static str, default: Option<&'static str>) -> Known {
    Known {
        key,
        default,
        session: false,
    }
}

/// The declaration of `key`, if advice knows it.
pub fn known(key: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.key == key)
}

/// A size as Spark reads a bytes setting (`JavaUtils.byteStringAsBytes`): a number with an
/// optional `b`, `k`/`kb`, `m`/`mb`, `g`/`gb`, `t`/`tb` suffix (any case; binary multiples); a
/// bare number is bytes. `-1` (off, for the broadcast thresholds) reads as -1. `None`: Spark
/// would reject it.
pub fn bytes(v: &str) -> Option<i64> {
    let t = v.trim().to_ascii_lowercase();
    if t == "-1" {
        return Some(-1);
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().ok()?;
    let mult: i64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A memory size as Spark reads `spark.executor.memory` and `spark.executor.memoryOverhead`
/// (`JavaUtils.byteStringAsMb`): the suffixes of [`bytes`], but a bare number is MiB. In bytes;
/// `None`: Spark would reject it.
pub fn mebibytes(v: &str) -> Option<i64> {
    let t = v.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i64>().ok()?.checked_mul(1 << 20);
    }
    bytes(t).filter(|b| *b >= 0)
}

/// `n` bytes, rounded up to whole `step` MiB, as a memory setting Spark reads back exactly:
/// `<n>m`, or `<n>g` when whole GiB.
pub fn memory(n: u64, step: u64) -> String {
    let step = step.max(1);
    let mib = n.div_ceil(1 << 20).div_ceil(step) * step;
    if mib.is_multiple_of(1024) {
        format!("{}g", mib / 1024)
    } else {
        format!("{mib}m")
    }
}

/// `n` bytes as a value Spark reads back exactly: whole MiB as `<n>MB` (Spark's own binary
/// `MB`), whole KiB as `<n>KB`, else bytes.
pub fn size(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}MB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{}KB", n >> 10)
    } else {
        format!("{n}b")
    }
}

/// The smallest power-of-two number of MiB at least `n` bytes (at least 1 MiB).
pub fn round_up_mib(n: u64) -> u64 {
    let mib = n.div_ceil(1 << 20).max(1);
    mib.next_power_of_two() << 20
}

/// A boolean as Spark reads one (`true`/`false`, any case, trimmed); `None`: Spark would reject
/// it.
pub fn boolean(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_spark_reads_them_and_print_back() {
        assert_eq!(bytes("10MB"), Some(10 << 20));
        assert_eq!(bytes("10485760b"), Some(10 << 20));
        assert_eq!(bytes("64k"), Some(64 << 10));
        assert_eq!(bytes("-1"), Some(-1));
        assert_eq!(bytes("1048576"), Some(1 << 20));
        assert_eq!(bytes("ten"), None);
        assert_eq!(bytes("10 parsecs"), None);
        assert_eq!(size(32 << 20), "32MB");
        assert_eq!(size(64 << 10), "64KB");
        assert_eq!(size(1000), "1000b");
        for n in [1u64, 1 << 20, 3 << 20, 10 << 20] {
            assert_eq!(bytes(&size(round_up_mib(n))), Some(round_up_mib(n) as i64));
        }
        assert_eq!(round_up_mib(526), 1 << 20);
        assert_eq!(round_up_mib(5 << 20), 8 << 20);
    }

    #[test]
    fn memory_sizes_read_as_spark_reads_them() {
        assert_eq!(mebibytes("512m"), Some(512 << 20));
        assert_eq!(mebibytes("512"), Some(512 << 20));
        assert_eq!(mebibytes("1g"), Some(1 << 30));
        assert_eq!(mebibytes("2G"), Some(2 << 30));
        assert_eq!(mebibytes("-1"), None);
        assert_eq!(mebibytes("lots"), None);
        assert_eq!(memory(600 << 20, 128), "640m");
        assert_eq!(memory(1000 << 20, 128), "1g");
        assert_eq!(memory(1, 64), "64m");
        for n in [300u64 << 20, 700 << 20, 3 << 30] {
            let m = memory(n, 64);
            assert!(mebibytes(&m).unwrap() as u64 >= n, "{m}");
        }
    }

    #[test]
    fn every_default_reads_as_spark_reads_it() {
        for k in KNOWN {
            let Some(d) = k.default else { continue };
            let ok = bytes(d).is_some()
                || boolean(d).is_some()
                || d.parse::<f64>().is_ok()
                || d.ends_with('s')
                || d.ends_with('g');
            assert!(ok, "{}: {d}", k.key);
        }
    }
}
