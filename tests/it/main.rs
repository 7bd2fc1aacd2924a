//! The integration tests, one binary (compiling the shared support code once, linking once):
//! one module per suite, the suites that start a real Spark driver or History Server (a JVM
//! each) under [`jvm`]. `scripts/test.sh` runs the JVM suites one at a time beside the others
//! (`cargo test --test it jvm::<suite>::`), as one JVM beside the waiting tests is what two
//! cores hold; `cargo test --test it <suite>::` runs one suite.

#[path = "../support/mod.rs"]
mod support;

mod advice;
mod cardinality_bomb;
mod checkpoints;
mod collectors;
mod compare;
mod connect;
mod contract;
mod diagnose;
mod diagnose_registry;
mod diagnose_review;
mod diagnosis_cost_cache;
mod diagnosis_metrics;
mod diagnosis_sql;
mod diagnosis_tasks;
mod eventlog_engine;
mod eventlog_fixtures;
mod eventlog_restart;
mod eventlog_tailer;
mod faults_eventlog;
mod fuzz_regressions;
mod golden;
mod import_graph;
mod jvm;
mod metric_catalogue;
mod mistakes;
mod model_state;
mod money;
mod otlp_export;
mod proptest_parsers;
mod rest_auth;
mod rest_cost_cache;
mod rest_faults;
mod rest_history;
mod rest_poller;
mod rest_sql_plans;
mod server_probes;
mod shards;
mod streaming;
mod tpch;
mod version_matrix;
mod web_security;
mod web_tls;
mod whatif;
