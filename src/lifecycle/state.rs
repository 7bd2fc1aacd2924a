//! The phase of the exporter's life, shared by the drain (which moves it on) and the server
//! (which answers the probes by it and counts the scrapes of the final state).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use tokio::sync::watch;

/// Where the exporter is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Following the application.
    Running,
    /// Told to end: the sources make their last reads.
    Draining,
    /// The last reads are done; the final state is served until the drain ends.
    Final,
}

/// The shared phase and the count of scrapes that showed the final state.
#[derive(Debug)]
pub struct Lifecycle {
    phase: AtomicU8,
    /// [`crate::model::Model::generation`] when the final state was reached.
    final_generation: AtomicU64,
    /// Scrapes answered with a body rendered from the final state.
    scrapes: watch::Sender<usize>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            phase: AtomicU8::new(0),
            final_generation: AtomicU64::new(u64::MAX),
            scrapes: watch::Sender::new(0),
        }
    }
}

impl Lifecycle {
    /// The current phase.
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Running,
            1 => Phase::Draining,
            _ => Phase::Final,
        }
    }

    /// True from the start of the drain on.
    pub fn draining(&self) -> bool {
        self.phase() != Phase::Running
    }

    /// The drain has started.
    pub fn begin_drain(&self) {
        let _ = self
            .phase
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The sources are done: the model at `generation` is the final state.
    pub fn reach_final(&self, generation: u64) {
        self.final_generation.store(generation, Ordering::Release);
        self.phase.store(2, Ordering::Release);
    }

    /// A scrape was answered with a body rendered when the model was at `generation`; it counts
    /// if that body shows the final state.
    pub fn scrape_served(&self, generation: u64) {
        if self.phase() == Phase::Final
            && generation >= self.final_generation.load(Ordering::Acquire)
        {
            self.scrapes.send_modify(|n| *n += 1);
        }
    }

    /// Scrapes that showed the final state so far.
    pub fn final_scrapes(&self) -> usize {
        *self.scrapes.borrow()
    }

    /// Wait until `n` scrapes have shown the final state.
    pub async fn scrapes_reached(&self, n: usize) {
        let mut rx = self.scrapes.subscribe();
        // The sender lives in `self`, so the wait can only end by reaching `n`.
        let _ = rx.wait_for(|c| *c >= n).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_scrapes_of_the_final_state_count() {
        let l = Lifecycle::default();
        assert_eq!(l.phase(), Phase::Running);
        l.scrape_served(100);
        l.begin_drain();
        assert!(l.draining());
        l.scrape_served(100);
        assert_eq!(l.final_scrapes(), 0, "scrapes while draining do not count");
        l.reach_final(7);
        l.scrape_served(6);
        assert_eq!(
            l.final_scrapes(),
            0,
            "a body rendered before the final state"
        );
        l.scrape_served(7);
        l.scrape_served(9);
        assert_eq!(l.final_scrapes(), 2);
        tokio::time::timeout(std::time::Duration::from_secs(1), l.scrapes_reached(2))
            .await
            .expect("two scrapes reached");
        l.begin_drain();
        assert_eq!(
            l.phase(),
            Phase::Final,
            "a later drain request does not go back"
        );
    }
}
