//! The command-line flags of the configuration keys (Prometheus exporter style,
//! `--web.listen-address`), built from the key declarations with clap's builder API (clap's
//! derive needs literal attributes), and the overrides they give. Each command takes the flags
//! of the keys it uses (`Key::uses`; `check-config` takes every one), grouped under their
//! section's heading in `--help`.

use clap::{Arg, ArgAction, ArgMatches};

use crate::config::key::{Flag, Key, Uses};
use crate::config::{docs, keys, OverrideValue};

/// The commands, as the keys' `uses` name them; `None`: every key (`check-config`).
pub fn uses_of(command: &str) -> Option<Uses> {
    match command {
        "run" => Some(Uses::RUN),
        "dump" => Some(Uses::DUMP),
        "diagnose" => Some(Uses::DIAGNOSE),
        _ => None,
    }
}

/// Whether `k` is a flag of the command `uses` stands for (`None`: every command).
pub fn takes(k: &Key, uses: Option<Uses>) -> bool {
    k.flag.long().is_some() && uses.is_none_or(|u| k.uses.includes(u))
}

/// The `--help` heading of a key's section.
fn heading(name: &str) -> &'static str {
    match name.split('.').next().unwrap_or("") {
        "web" => "Web server",
        "log" => "Logging",
        "spark" => "Spark REST API",
        "event_log" => "Event logs",
        "model" => "Model",
        "labels" => "Labels",
        "histograms" => "Histograms",
        "lifecycle" => "Lifecycle",
        "shard" => "Shards",
        "otlp" => "OTLP push",
        "streaming" => "Structured Streaming",
        "diagnose" => "Diagnosis",
        _ => "Configuration",
    }
}

/// One argument per key with a flag that the command `uses` stands for uses; its help is the
/// key's first sentence and its default.
pub fn args(uses: Option<Uses>) -> Vec<Arg> {
    keys()
        .filter(|k| takes(k, uses))
        .filter_map(|k| {
            let long = k.flag.long()?;
            let help = format!("{} [default: {}]", k.help(), docs::default_plain(k));
            let a = Arg::new(k.name)
                .long(long)
                .help(help)
                .help_heading(heading(k.name));
            Some(match k.flag {
                Flag::Switch(_) => a.action(ArgAction::SetTrue),
                Flag::Repeat(_) => a.action(ArgAction::Append).value_name("VALUE"),
                Flag::Value(_) | Flag::None => a.action(ArgAction::Set).value_name("VALUE"),
            })
        })
        .collect()
}

/// The keys the flags in `m` set, as configuration overrides. A repeatable flag's empty value
/// means "none".
pub fn overrides(m: &ArgMatches) -> Vec<(String, OverrideValue)> {
    let mut v = vec![];
    for k in keys() {
        match k.flag {
            Flag::None => {}
            Flag::Switch(_) => {
                if m.try_get_one::<bool>(k.name).ok().flatten() == Some(&true) {
                    v.push((k.name.to_string(), OverrideValue::One("true".into())));
                }
            }
            Flag::Value(_) => {
                if let Some(x) = m.try_get_one::<String>(k.name).ok().flatten() {
                    v.push((k.name.to_string(), OverrideValue::One(x.clone())));
                }
            }
            Flag::Repeat(_) => {
                if let Some(xs) = m.try_get_many::<String>(k.name).ok().flatten() {
                    let xs = xs.filter(|x| !x.is_empty()).cloned().collect();
                    v.push((k.name.to_string(), OverrideValue::Many(xs)));
                }
            }
        }
    }
    v
}
