//! The `lifecycle`, `checkpoint` and `shard` sections: their keys.

use std::time::Duration;

use crate::config::key::{Key, Uses};
use crate::config::parse;
use crate::config::settings::Settings;

/// After reading: without `shard.index`, a sharded exporter takes the ordinal of its
/// StatefulSet pod from `HOSTNAME` (`fleet-3` is shard 3); an index must be below the count.
pub(crate) fn check_shard(s: &mut Settings, index_given: bool, errors: &mut Vec<String>) {
    let count = s.shard.count;
    if index_given {
        if s.shard.index >= count {
            errors.push(format!(
                "shard.index: {} is not below shard.count ({count})",
                s.shard.index
            ));
            s.shard.index = 0;
        }
        return;
    }
    if count <= 1 {
        return;
    }
    let host = std::env::var("HOSTNAME").unwrap_or_default();
    match crate::shard::statefulset_ordinal(&host) {
        Some(i) if i < count => s.shard.index = i,
        _ => errors.push(format!(
            "shard.index: not set, and HOSTNAME ({host:?}) is no StatefulSet pod name with an \
             ordinal below shard.count ({count})"
        )),
    }
}

/// The `lifecycle` and `shard` keys.
pub(crate) const KEYS: &[Key] = &[
    Key::one("lifecycle.grace_period", |s, v| {
        let d = parse::positive(v)?;
        if d > Duration::from_secs(3600) {
            return Err("must be at most 1h".into());
        }
        s.lifecycle.grace_period = d;
        Ok(())
    })
    .flag("lifecycle.grace-period")
    .brief("Longest drain, from SIGTERM (or the application's end) to exit.")
    .uses(Uses::RUN)
    .doc(
        "Longest drain, from SIGTERM (or the application's end) to exit (see [The \
         application's end](internals.md#the-applications-end)). Keep it below the pod's \
         `terminationGracePeriodSeconds` (the shipped templates set 40). At most `1h`.",
    ),
    Key::one("checkpoint.path", |s, v| {
        s.checkpoint.path = (!v.trim().is_empty()).then(|| std::path::PathBuf::from(v.trim()));
        Ok(())
    })
    .flag("checkpoint.path")
    .brief("File the model's state is kept in across restarts (none: every start reads every log \
        again).")
    .uses(Uses::RUN)
    .default("none")
    .doc(
        "A file the model's state is written to every `checkpoint.interval` and at the end of \
         the drain, and read back at start: every application kept (summarised ones with their \
         counted ids and each series' `_created`), those already retired or excluded (never \
         served again), the names' runs, and the read position of every log read to its end. \
         A restart does not read those logs again while unchanged; the others (still being \
         written, changed, new) are read from their start, which counts nothing twice (the \
         model's calls are idempotent), so no counter goes back and no run that ended while the \
         exporter was down is lost. A checkpoint written under \
         another configuration of the model (labels, buckets, summary level, aggregation, \
         shard), damaged or of an unknown version is refused with a log line \
         (`spark_exporter_checkpoint_loads_total`) and the exporter starts empty. A local path \
         (its folder must exist: a volume in Kubernetes; written to a temporary file, fsync, \
         rename) or an object-store URL as `event_log.dirs` takes (`s3://`, `gs://`, `az://`, \
         ...: one PUT, with the environment's credentials). With `shard.count` above 1 each shard writes \
         `<path>.<index>-of-<count>`; when the shard count changes, each new shard loads its \
         part of every previous shard's checkpoint, so in a folder all shards share (a \
         ReadWriteMany volume) a reshard loses nothing; with a volume per shard, applications \
         and names that move to another shard start there from zero.",
    ),
    Key::one("checkpoint.interval", |s, v| {
        s.checkpoint.interval = parse::positive(v)?;
        Ok(())
    })
    .flag("checkpoint.interval")
    .uses(Uses::RUN)
    .doc("How often the checkpoint is written (and once more at the end of the drain)."),
    Key::one("lifecycle.drain_scrapes", |s, v| {
        s.lifecycle.drain_scrapes = parse::whole(v)?;
        Ok(())
    })
    .flag("lifecycle.drain-scrapes")
    .uses(Uses::RUN)
    .doc(
        "Scrapes of `/metrics` showing the final state that end the drain early; `2` for an HA \
         pair of Prometheus servers, `0` to end it as soon as the final state is reached (and \
         exported, with OTLP).",
    ),
    Key::one("lifecycle.exit_when_app_ends", |s, v| {
        s.lifecycle.exit_when_app_ends = parse::boolean(v)?;
        Ok(())
    })
    .switch("lifecycle.exit-when-app-ends")
    .brief("Exit by itself once the application has ended and the drain is done (a classic \
        sidecar).")
    .uses(Uses::RUN)
    .doc(
        "Exit 0 by itself once the followed application has ended and the drain is done: for a \
         classic sidecar container, which nothing else stops. Never for a native sidecar (it \
         would be restarted) or a History Server.",
    ),
    Key::one("lifecycle.rest_unreachable_after", |s, v| {
        s.lifecycle.rest_unreachable_after = parse::positive(v)?;
        Ok(())
    })
    .flag("lifecycle.rest-unreachable-after")
    .brief("How long REST must be unreachable, after a success, for the application to count as \
        ended.")
    .uses(Uses::RUN)
    .doc(
        "With `exit_when_app_ends`: how long every REST target must be unreachable, after \
         answering once, for the application to count as ended (a driver that died without \
         writing its end).",
    ),
    Key::one("shard.count", |s, v| {
        s.shard.count = parse::count(v)?;
        Ok(())
    })
    .flag("shard.count")
    .brief("Exporters sharing one event-log store or History Server (XXH32 of the id, or name, mod \
        count).")
    .doc(
        "Exporters sharing one event-log store or History Server. Each exports the \
         applications whose id hashes to its index: `XXH32(app_id) mod count` \
         (`XXH32(app_name)` with `model.aggregate_by: app_name`, so all runs of a name stay on \
         one shard), stable across versions and machines, so the union of all shards is every \
         application exactly once (`tests/it/shards.rs`). Prometheus aggregates; there is no \
         coordinator.",
    ),
    Key::one("shard.index", |s, v| {
        s.shard.index = parse::whole(v)?;
        Ok(())
    })
    .flag("shard.index")
    .brief("This exporter's shard, below shard.count (unset: the StatefulSet pod's ordinal).")
    .default("the StatefulSet pod's ordinal")
    .doc(
        "This exporter's shard, below `shard.count`; when unset and `shard.count` > 1 it is \
         read from `HOSTNAME` (`spark-exporter-fleet-2` is shard 2), else the configuration is \
         refused (exit 64).",
    ),
];
