//! The command line: the commands (`run`, `check-config`, `dump`, `diagnose`) and their own
//! arguments, derived here, plus the configuration keys' flags, which come from the key
//! declarations (`flags.rs`).

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::Overrides;

pub mod flags;

/// Exit code for invalid configuration or flags (EX_USAGE).
pub const EXIT_CONFIG: i32 = 64;

/// Prometheus and OTLP exporter for Apache Spark applications.
#[derive(Debug, Parser)]
#[command(name = "spark-exporter", version, about)]
pub struct Cli {
    /// What to do (default: run the exporter).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Configuration file (YAML or TOML).
    #[arg(long = "config.file", global = true)]
    pub config_file: Option<PathBuf>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the exporter (the default).
    Run,
    /// Print the effective configuration, or list every invalid field and exit 64.
    CheckConfig,
    /// Poll once / read event logs to the end, print the exposition and exit
    /// (non-zero if a target failed).
    Dump {
        /// Event-log files or folders to read to the end: paths, file://, s3://, s3a://, gs://,
        /// az://, abfs:// or abfss:// URLs; repeatable.
        #[arg(long = "event-log", num_args = 1..)]
        event_log: Vec<String>,
        /// Print OpenMetrics instead of the classic text format.
        #[arg(long)]
        openmetrics: bool,
    },
    /// Diagnose one application the way the Spark UI teaches (bottleneck stages, skew, spill,
    /// GC, lost executors, joins and plan changes, cached data, locality and scheduler delay,
    /// streaming batches against their trigger, idle cores), most costly finding first. Reads
    /// `--event-log` paths, else the `--spark.url` driver or History Server. Exit 0 with a
    /// report, 1 when the application cannot be read or found, 3 when a finding of a
    /// `--fail-on` kind was made, 64 for bad flags or configuration.
    Diagnose {
        /// Event-log files or folders (paths, file://, s3://, s3a://, gs://, az://, abfs://,
        /// abfss://); repeatable. Without it, `--spark.url` is read.
        #[arg(long = "event-log", num_args = 1..)]
        event_log: Vec<String>,
        /// The application to diagnose (required for a History Server or several logs'
        /// worth of applications if only one is wanted).
        #[arg(long = "app-id")]
        app_id: Option<String>,
        /// Output: text or json (the versioned schema in schemas/) [default: text].
        #[arg(long, default_value = "text")]
        format: String,
        /// A History Server that serves these event logs: findings link to its pages.
        #[arg(long = "ui-url")]
        ui_url: Option<String>,
        /// Exit 3 when any finding is of one of these kinds (comma-separated, e.g.
        /// `join_strategy,plan_change`): a CI gate.
        #[arg(long = "fail-on", value_delimiter = ',')]
        fail_on: Vec<String>,
    },
}

impl Cli {
    /// The command line: the commands and `--config.file` (derived), plus one flag per
    /// configuration key that has one (`flags.rs`, from the key declarations).
    pub fn build() -> clap::Command {
        <Cli as CommandFactory>::command().args(flags::args())
    }

    /// Parse `args` (the program name first): the command, and the flags that were given as
    /// configuration overrides (flags beat env vars, files and defaults).
    pub fn parse_from<I, T>(args: I) -> Result<(Cli, Overrides), clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let m = Self::build().try_get_matches_from(args)?;
        let cli = Cli::from_arg_matches(&m)?;
        // Global flags are propagated to the innermost command's matches.
        let inner = m.subcommand().map_or(&m, |(_, sub)| sub);
        let over = Overrides {
            config_file: cli.config_file.clone(),
            values: flags::overrides(inner),
        };
        Ok((cli, over))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, OverrideValue};

    fn values(args: &[&str]) -> Vec<(String, String)> {
        let (_, o) = Cli::parse_from(std::iter::once("spark-exporter").chain(args.iter().copied()))
            .expect("parses");
        o.values
            .into_iter()
            .map(|(k, v)| match v {
                OverrideValue::One(s) => (k, s),
                OverrideValue::Many(l) => (k, l.join("|")),
            })
            .collect()
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::build().debug_assert();
    }

    #[test]
    fn every_flag_sets_its_key_before_or_after_the_command() {
        for k in config::keys() {
            let Some(long) = k.flag.long() else { continue };
            let flag = format!("--{long}");
            let (args, want): (Vec<&str>, &str) = match k.flag {
                config::key::Flag::Switch(_) => (vec![flag.as_str()], "true"),
                _ => (vec![flag.as_str(), "x"], "x"),
            };
            let before = values(&[&args[..], &["dump"]].concat());
            let after = values(&[&["dump"], &args[..]].concat());
            for got in [before, after] {
                assert_eq!(got, vec![(k.name.to_string(), want.to_string())], "{flag}");
            }
        }
    }

    #[test]
    fn repeated_flags_are_one_list_and_an_empty_one_is_none() {
        assert_eq!(
            values(&["--spark.url", "http://a:1", "--spark.url=http://b:2"]),
            vec![("spark.urls".into(), "http://a:1|http://b:2".into())]
        );
        assert_eq!(
            values(&["--spark.url="]),
            vec![("spark.urls".into(), String::new())]
        );
        assert!(values(&[]).is_empty());
    }
}
