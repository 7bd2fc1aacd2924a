//! The suites that start a real Spark driver or History Server (a JVM each). They need
//! `SPARK_E2E_PYTHON` (a Python with pyspark), and fail without it when `SPARK_E2E_REQUIRED=1`.

mod diagnose_history;
mod e2e_core;
mod e2e_executor_lost;
mod eventlog_live;
mod faults_spark_ui;
mod history_server;
mod otlp_live;
