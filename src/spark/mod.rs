//! Spark REST API client, types and poller.
