//! Support code of the integration tests, in one module of their one binary (`tests/it/main.rs`
//! declares it; a suite says `use crate::support;` and uses its part):
//!
//! - [`proc`]: [`proc::Guard`], the one child-process guard (killed, with its process group, on
//!   drop; output to a log file or captured line by line), and waiting and signal helpers;
//! - [`files`]: artefact folders under `target/tmp/`, log tails, free ports;
//! - [`command`]: one-shot runs of the exporter binary (`dump`, `check-config`);
//! - [`diagnosis`]: the diagnosis fixture (ids, event logs, REST answers, their replay);
//! - [`eventlog`]: Spark's event logs read by the tests themselves; [`committed_logs`]: every
//!   committed one;
//! - [`http`]: a minimal HTTP/1.0 client (timings are the test's own, not a connection pool's);
//! - [`exposition`]: the exposition-text parser and series views;
//! - [`groups`]: the `job_group` of a job under the default rule, from Spark's own fields;
//! - [`spark`]: the PySpark interpreter of the Spark tests (or a loud skip);
//! - [`faults`]: a running exporter with a `/metrics` watcher (`faults_*.rs`);
//! - [`live`]: exporters for the live event-log tests (`eventlog_live.rs`, `eventlog_restart.rs`);
//! - [`otlp`]: a real OTLP receiver and the comparison with `/metrics` (`otlp_*.rs`);
//! - [`rest`]: a fake Spark REST server and a recording sink (`rest_*.rs`).
//!
//! `sparkwork.py` beside this file is the Python side: what the PySpark workloads share.
//!
//! Files specific to one suite stay beside the tests (`tests/e2e/`, `tests/faults/logs.rs`).

// Not every part is used by the suites of every build (the JVM ones are skipped by filter).
#![allow(dead_code)]

pub mod command;
pub mod committed_logs;
pub mod diagnosis;
pub mod eventlog;
pub mod exposition;
pub mod faults;
pub mod files;
pub mod groups;
pub mod http;
pub mod live;
pub mod otlp;
pub mod proc;
pub mod rest;
pub mod spark;

/// The exporter under test.
pub const EXPORTER: &str = env!("CARGO_BIN_EXE_spark-exporter");
