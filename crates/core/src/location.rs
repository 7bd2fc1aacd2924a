//! Where event logs are: a local path or an object-store URL, parsed once from the
//! configuration (`event_log.dirs`) or a command's `--event-log`, and read by
//! `crate::sources::eventlog::objfs`.

use std::fmt;
use std::path::PathBuf;

use url::Url;

/// An event-log location: the text it was given as (what `check-config` prints and logs name)
/// and where it points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    text: String,
    place: Place,
}

impl Location {
    /// A local folder or file.
    pub fn local(path: impl Into<PathBuf>) -> Location {
        let path = path.into();
        Location {
            text: path.display().to_string(),
            place: Place::Local(path),
        }
    }
    /// Where it points.
    pub fn place(&self) -> &Place {
        &self.place
    }
    /// The text it was given as.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Where an event-log location points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A local path (a plain path or `file://`).
    Local(PathBuf),
    /// An object store: its URL, and the key prefix inside the bucket or container.
    Object {
        /// The URL as given (without query or fragment).
        url: Url,
        /// `s3`, `gs` or `azure`.
        kind: StoreKind,
        /// The key prefix, without leading or trailing `/`.
        prefix: String,
    },
}

/// The kinds of object store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// Amazon S3 and S3-compatible stores.
    S3,
    /// Google Cloud Storage.
    Gcs,
    /// Azure Blob Storage and ADLS Gen2.
    Azure,
}

/// Parse an event-log location: a plain path, `file://`, or an object-store URL.
pub fn parse_location(s: &str) -> Result<Location, String> {
    if s.is_empty() {
        return Err("empty location".into());
    }
    let at = |place| {
        Ok(Location {
            text: s.to_string(),
            place,
        })
    };
    let Some((scheme, _)) = s.split_once("://") else {
        return at(Place::Local(PathBuf::from(s)));
    };
    let url = Url::parse(s).map_err(|e| format!("{s:?} is not a valid URL ({e})"))?;
    let kind = match scheme.to_ascii_lowercase().as_str() {
        "file" => return at(Place::Local(PathBuf::from(url.path()))),
        "s3" | "s3a" => StoreKind::S3,
        "gs" => StoreKind::Gcs,
        "az" | "abfs" | "abfss" => StoreKind::Azure,
        other => {
            return Err(format!(
                "unsupported scheme {other:?} (use a path, file://, s3://, s3a://, gs://, az://, \
                    abfs:// or abfss://)"
            ))
        }
    };
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{s:?} names no bucket or container"));
    }
    let mut url = url;
    url.set_query(None);
    url.set_fragment(None);
    let prefix = url.path().trim_matches('/').to_string();
    at(Place::Object { url, kind, prefix })
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `check-config` prints a location as it reads.
impl serde::Serialize for Location {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(
            *parse_location("/var/spark-events").unwrap().place(),
            Place::Local("/var/spark-events".into())
        );
        assert_eq!(
            *parse_location("file:///var/spark-events").unwrap().place(),
            Place::Local("/var/spark-events".into())
        );
        for (s, kind, prefix) in [
            ("s3://bucket/spark-events/", StoreKind::S3, "spark-events"),
            ("s3a://bucket/a/b", StoreKind::S3, "a/b"),
            ("gs://bucket", StoreKind::Gcs, ""),
            ("az://container/logs", StoreKind::Azure, "logs"),
            (
                "abfss://container@account.dfs.core.windows.net/spark/events",
                StoreKind::Azure,
                "spark/events",
            ),
        ] {
            match parse_location(s).unwrap().place().clone() {
                Place::Object {
                    kind: k, prefix: p, ..
                } => assert_eq!((k, p.as_str()), (kind, prefix), "{s}"),
                l => panic!("{s}: {l:?}"),
            }
        }
        assert!(parse_location("hdfs://nn/spark-events")
            .unwrap_err()
            .contains("unsupported scheme"));
        assert!(parse_location("s3:///nobucket").is_err());
        assert!(parse_location("").is_err());
        // Printed (check-config, logs) as given.
        for s in [
            "file:///var/spark-events",
            "s3a://bucket/a/b/",
            "/var/spark-events",
        ] {
            assert_eq!(parse_location(s).unwrap().to_string(), s);
        }
    }
}
