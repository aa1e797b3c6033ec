//! How far a decode has got: the bytes decoded so far, added to by the decoding threads as
//! each stretch of the input finishes, and sent to whoever listens (the Python layer's
//! progress bar, called on the thread that started the decode).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;

/// Bytes of the input decoded so far.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    /// Each new total is sent here (None: nobody listens).
    events: Option<Sender<u64>>,
}

impl Progress {
    /// A counter that sends each new total to `events`.
    pub fn new(events: Option<Sender<u64>>) -> Self {
        Progress {
            done: AtomicU64::new(0),
            events,
        }
    }

    /// Count `bytes` more as decoded.
    pub fn add(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let total = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if let Some(events) = &self.events {
            let _ = events.send(total); // a listener that has gone needs no more
        }
    }

    /// The bytes counted so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_sent_as_they_grow() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let progress = Progress::new(Some(sender));
        progress.add(3);
        progress.add(0);
        progress.add(4);
        drop(progress);
        assert_eq!(receiver.iter().collect::<Vec<_>>(), vec![3, 7]);
    }
}
