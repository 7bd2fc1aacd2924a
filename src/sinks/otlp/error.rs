//! Why OTLP push cannot start: invalid settings (from [`super::resolve`]) or an exporter that
//! cannot be built (from [`super::transport`]). Its own file so that those two can use it without
//! importing the module root, which imports them.

/// OTLP errors.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// The exporter could not be built.
    #[error("cannot build the OTLP exporter: {0}")]
    Build(String),
}
