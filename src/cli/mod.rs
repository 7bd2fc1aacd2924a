//! The command line: the commands (`run`, `check-config`, `dump`, `diagnose`) and their own
//! arguments, derived here, plus the configuration keys' flags, which come from the key
//! declarations (`flags.rs`).

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::key::Uses;
use crate::config::{self, Overrides};

mod flags;

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
// Parsed once per process: the size of `Diagnose`'s flags costs nothing worth boxing them for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the exporter (the default).
    Run,
    /// Print the effective configuration (YAML that --config.file reads back; secrets
    /// redacted), or list every invalid field and exit 64.
    CheckConfig {
        /// Output: yaml or json.
        #[arg(long, default_value = "yaml", value_parser = ["yaml", "json"])]
        format: String,
    },
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
        /// Output: text, json (the versioned schema in schemas/) or html (a self-contained page
        /// with its charts: one application's findings and what to change, or with --review the
        /// fleet's).
        #[arg(long, default_value = "text")]
        format: String,
        /// A History Server that serves these event logs: findings link to its pages.
        #[arg(long = "ui-url")]
        ui_url: Option<String>,
        /// The what-if's answer for a deadline: the executor count with the fewest core-seconds
        /// whose predicted time is within it (`20m`, `1h 30m`).
        #[arg(long = "target-duration", value_name = "DURATION")]
        target_duration: Option<String>,
        /// Exit 3 when any finding is of one of these kinds (comma-separated): a CI gate.
        #[arg(long = "fail-on", value_delimiter = ',')]
        fail_on: Vec<String>,
        /// Review every application of the --event-log folders or prefixes (or every one the
        /// --spark.url History Server lists), one at a time: application names and job groups
        /// ranked by what their findings cost, per kind, and the worst runs.
        #[arg(long, help_heading = "Review")]
        review: bool,
        /// With --review: only applications that ended since then (and those still running):
        /// a duration back from now (`7d`, `36h`) or a time (`2026-12-01T00:00:00Z`).
        #[arg(long, value_name = "DURATION|TIME", help_heading = "Review")]
        since: Option<String>,
        /// With --review: only applications whose name matches this regex.
        #[arg(long = "app-name", value_name = "REGEX", help_heading = "Review")]
        app_name: Option<String>,
        /// With --review: only the findings of job groups matching this regex (the
        /// application-wide findings, which have no job group, are left out).
        #[arg(long = "job-group", value_name = "REGEX", help_heading = "Review")]
        job_group: Option<String>,
        /// With --review: how many of the costliest runs to list.
        #[arg(long, value_name = "N", default_value_t = 10, help_heading = "Review")]
        top: usize,
        /// Compare the run with a baseline: `previous` (the median of the name's previous runs
        /// in the --event-log locations), a log, folder or prefix (its one run, or the median of
        /// the name's previous runs there), or an application id in the --event-log locations;
        /// with --spark.url (a History Server) and the run's --app-id, its applications.
        /// What changed, ranked by share of the task-time difference; the settings apart.
        #[arg(long, value_name = "BASELINE", help_heading = "Compare")]
        compare: Option<String>,
        /// With --compare over many runs: the median of at most this many, the latest.
        #[arg(
            long = "baseline-runs",
            value_name = "N",
            default_value_t = 7,
            help_heading = "Compare"
        )]
        baseline_runs: usize,
        /// With --compare: compare runs of two different applications anyway.
        #[arg(long, help_heading = "Compare")]
        force: bool,
    },
}

/// Examples at the end of `spark-exporter --help` (and `run --help`).
const RUN_EXAMPLES: &str = "Examples:
  spark-exporter                                        # the driver in this pod (localhost:4040), /metrics on :9809
  spark-exporter --event-log.dir /var/log/spark-events  # the driver's REST API and its event logs (exact final counts)
  spark-exporter --spark.url= --event-log.dir s3://bucket/spark-events --shard.count 4   # a fleet shard
  spark-exporter --config.file exporter.yaml

Each command has its own flags: spark-exporter <command> --help";

/// Examples at the end of `dump --help`.
const DUMP_EXAMPLES: &str = "Examples:
  spark-exporter dump --event-log /var/log/spark-events/eventlog_v2_app-20261202-0001
  spark-exporter dump --spark.url http://driver:4040 --openmetrics";

/// Examples at the end of `diagnose --help`.
const DIAGNOSE_EXAMPLES: &str = "Examples:
  spark-exporter diagnose --event-log /var/log/spark-events/eventlog_v2_app-20261202-0001
  spark-exporter diagnose --spark.url http://history:18080 --app-id app-20261202-0001 --format json
  spark-exporter diagnose --event-log app.zstd --fail-on join_strategy,plan_change   # a CI gate
  spark-exporter diagnose --review --event-log s3://bucket/spark-events --since 7d   # the weekly review
  spark-exporter diagnose --review --spark.url http://history:18080 --app-name '^etl-' --format json
  spark-exporter --config.file prices.yaml diagnose --review --event-log /var/log/spark-events --format html > review.html";

/// Examples at the end of `check-config --help`.
const CHECK_EXAMPLES: &str = "Examples:
  spark-exporter --config.file exporter.yaml check-config
  SPARK_EXPORTER_MODEL__SUMMARY_LEVEL=app spark-exporter check-config --shard.count 2 --shard.index 1";

impl Cli {
    /// The command line: the commands and `--config.file` (derived), plus, for each command,
    /// one flag per configuration key it uses (`flags.rs`, from the key declarations), under
    /// its section's heading, and examples.
    pub fn build() -> clap::Command {
        // The sources' keys are flags too.
        crate::sources::declare_config();
        let kinds: Vec<&'static str> = crate::diagnose::report::Kind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect();
        <Cli as CommandFactory>::command()
            .args(flags::args(Some(Uses::RUN)))
            .after_help(RUN_EXAMPLES)
            .mut_subcommand("run", |c| {
                c.args(flags::args(Some(Uses::RUN)))
                    .after_help(RUN_EXAMPLES)
            })
            .mut_subcommand("check-config", |c| {
                c.args(flags::args(None)).after_help(CHECK_EXAMPLES)
            })
            .mut_subcommand("dump", |c| {
                c.args(flags::args(Some(Uses::DUMP)))
                    .after_help(DUMP_EXAMPLES)
            })
            .mut_subcommand("diagnose", |c| {
                c.args(flags::args(Some(Uses::DIAGNOSE)))
                    .after_help(DIAGNOSE_EXAMPLES)
                    // Listed, not a parser's possible values: `diagnose` names every wrong
                    // flag at once (`main.rs`), a parser would stop at this one.
                    .mut_arg("fail_on", |a| {
                        a.help(format!(
                            "Exit 3 when any finding is of one of these kinds (comma-separated): \
                             a CI gate. Kinds: {}",
                            kinds.join(", ")
                        ))
                    })
            })
    }

    /// Parse `args` (the program name first): the command, and the flags that were given as
    /// configuration overrides (flags beat env vars, files and defaults). A flag may come before
    /// the command only if the command uses it too.
    pub fn parse_from<I, T>(args: I) -> Result<(Cli, Overrides), clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cmd = Self::build();
        let m = cmd.try_get_matches_from_mut(args)?;
        let cli = Cli::from_arg_matches(&m)?;
        // Before the command: the top level's (the exporter's) flags.
        let mut values = flags::overrides(&m);
        if let Some((name, sub)) = m.subcommand() {
            let uses = flags::uses_of(name);
            for (key, _) in &values {
                let Some(k) = config::keys().find(|k| k.name == key) else {
                    continue;
                };
                if !flags::takes(k, uses) {
                    let long = k.flag.long().unwrap_or(k.name);
                    return Err(cmd.error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!("--{long} is not a flag of `{name}` (see `{name} --help`)"),
                    ));
                }
            }
            values.extend(flags::overrides(sub));
        }
        let over = Overrides {
            config_file: cli.config_file.clone(),
            values,
        };
        Ok((cli, over))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{self, OverrideValue};

    fn values(args: &[&str]) -> Vec<(String, String)> {
        try_values(args).expect("parses")
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::build().debug_assert();
    }

    /// The overrides `args` give, or clap's message.
    fn try_values(args: &[&str]) -> Result<Vec<(String, String)>, String> {
        let (_, o) = Cli::parse_from(std::iter::once("spark-exporter").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        Ok(o.values
            .into_iter()
            .map(|(k, v)| match v {
                OverrideValue::One(s) => (k, s),
                OverrideValue::Many(l) => (k, l.join("|")),
            })
            .collect())
    }

    #[test]
    fn every_flag_sets_its_key_after_each_command_that_uses_it_and_before_it_too() {
        for k in config::keys() {
            let Some(long) = k.flag.long() else { continue };
            let flag = format!("--{long}");
            let (args, want): (Vec<&str>, &str) = match k.flag {
                config::key::Flag::Switch(_) => (vec![flag.as_str()], "true"),
                _ => (vec![flag.as_str(), "x"], "x"),
            };
            let want = vec![(k.name.to_string(), want.to_string())];
            for command in ["run", "dump", "diagnose", "check-config"] {
                let uses = flags::uses_of(command);
                let after = try_values(&[&[command], &args[..]].concat());
                let before = try_values(&[&args[..], &[command]].concat());
                if flags::takes(k, uses) {
                    assert_eq!(after.as_ref(), Ok(&want), "{command} {flag}");
                    if k.uses.includes(Uses::RUN) {
                        assert_eq!(before.as_ref(), Ok(&want), "{flag} {command}");
                    }
                } else {
                    assert!(after.is_err(), "{command} {flag} is refused");
                    let e = before.expect_err("a run flag before a command not using it");
                    assert!(
                        e.contains(&format!("{flag} is not a flag of `{command}`")),
                        "{e}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_run_flag_for_event_logs_names_the_one_dump_and_diagnose_take() {
        for command in ["dump", "diagnose"] {
            let e = try_values(&[command, "--event-log.dir", "/tmp"]).unwrap_err();
            assert!(e.contains("--event-log"), "{e}");
        }
        let mut cmd = Cli::build();
        let help = cmd
            .find_subcommand_mut("diagnose")
            .expect("diagnose")
            .render_help()
            .to_string();
        assert!(
            help.contains("join_strategy, plan_change"),
            "the kinds: {help}"
        );
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
