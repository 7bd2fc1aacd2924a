//! Why OTLP push cannot start: invalid settings (from [`super::resolve`]) or an exporter that
//! cannot be built (from [`super::transport`]). Its own file so that those two can use it without
//! importing the module root, which imports them.

/// OTLP errors.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// Invalid settings (config or `OTEL_*` variables), every one listed.
    #[error("invalid OTLP settings:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Config(Vec<String>),
    /// The exporter could not be built.
    #[error("cannot build the OTLP exporter: {0}")]
    Build(String),
}
