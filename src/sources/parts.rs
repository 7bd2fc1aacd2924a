//! Each source's part of the checkpoint: what a restart need not read again (a finished log
//! read to its end, a completed application a REST target listed), kept by the source's name.
//!
//! A source knows its part's shape (`eventlog/positions.rs`, `rest/positions.rs`); the
//! checkpoint writes the parts as one JSON object keyed by name, on the line after its header,
//! and hands each back at start ([`Parts::loaded`]). A source publishes its part as it reads
//! ([`Parts::publish`]); a part not published by this process is written as it was loaded.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// A source's part as it stands: written as JSON at each checkpoint (not at each publish).
pub trait Part: Send + Sync + std::fmt::Debug {
    /// The part as JSON.
    fn to_json(&self) -> Value;
}

/// Every source's part, loaded and published; shared by the sources and the checkpoint.
#[derive(Debug, Default)]
pub struct Parts {
    kept: bool,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    loaded: BTreeMap<String, Value>,
    published: BTreeMap<String, Arc<dyn Part>>,
}

impl Parts {
    /// The parts of an exporter that keeps checkpoints (`kept`) or not (nothing is published).
    pub fn new(kept: bool) -> Arc<Parts> {
        Arc::new(Parts {
            kept,
            inner: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether checkpoints are kept.
    pub fn kept(&self) -> bool {
        self.kept
    }

    /// The parts a checkpoint held (before any source runs).
    pub fn set_loaded(&self, loaded: BTreeMap<String, Value>) {
        self.lock().loaded = loaded;
    }

    /// Source `name`'s loaded part.
    pub fn loaded(&self, name: &str) -> Option<Value> {
        self.lock().loaded.get(name).cloned()
    }

    /// Every loaded part, by source name.
    pub fn all_loaded(&self) -> BTreeMap<String, Value> {
        self.lock().loaded.clone()
    }

    /// Source `name`'s part now (replacing what it published before).
    pub fn publish(&self, name: &str, part: Arc<dyn Part>) {
        if self.kept {
            self.lock().published.insert(name.to_string(), part);
        }
    }

    /// The parts to write: each source's published part, else the one loaded.
    pub fn to_write(&self) -> BTreeMap<String, Value> {
        let (mut out, published) = {
            let g = self.lock();
            (g.loaded.clone(), g.published.clone())
        };
        for (name, part) in published {
            out.insert(name, part.to_json());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fixed(u32);
    impl Part for Fixed {
        fn to_json(&self) -> Value {
            Value::from(self.0)
        }
    }

    #[test]
    fn a_published_part_replaces_the_loaded_one_and_the_others_stay() {
        let p = Parts::new(true);
        p.set_loaded([("a".into(), Value::from(1)), ("b".into(), Value::from(2))].into());
        p.publish("a", Arc::new(Fixed(10)));
        let out = p.to_write();
        assert_eq!(out["a"], Value::from(10));
        assert_eq!(out["b"], Value::from(2));
        let off = Parts::new(false);
        off.publish("a", Arc::new(Fixed(10)));
        assert!(off.to_write().is_empty(), "not kept: nothing published");
    }
}
