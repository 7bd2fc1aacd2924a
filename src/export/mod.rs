//! Exposition of the model: Prometheus (scrape time).
