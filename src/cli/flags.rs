//! The command-line flags of the configuration keys (Prometheus exporter style,
//! `--web.listen-address`), built from the key declarations with clap's builder API (clap's
//! derive needs literal attributes), and the overrides they give. Every flag is global: it may
//! come before or after the command.

use clap::{Arg, ArgAction, ArgMatches};

use crate::config::key::Flag;
use crate::config::{docs, keys, OverrideValue};

/// One argument per key with a flag; its help is the key's first sentence and its default.
pub fn args() -> Vec<Arg> {
    keys()
        .filter_map(|k| {
            let long = k.flag.long()?;
            let help = format!("{} [default: {}]", k.help(), docs::default_plain(k));
            let a = Arg::new(k.name).long(long).global(true).help(help);
            Some(match k.flag {
                Flag::Switch(_) => a.action(ArgAction::SetTrue),
                Flag::Repeat(_) => a.action(ArgAction::Append).value_name("VALUE"),
                Flag::Value(_) | Flag::None => a.action(ArgAction::Set).value_name("VALUE"),
            })
        })
        .collect()
}

/// The keys the flags in `m` set (the innermost command's matches: globals given anywhere
/// are there), as configuration overrides. A repeatable flag's empty value means "none".
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
