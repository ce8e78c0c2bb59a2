//! Rate-limited warnings for what strangers can make happen at will (refused
//! handshakes, rejected gossip datagrams, accept errors): at most one line per
//! interval, saying how many were suppressed since the last one. The exact counts live
//! in counters ([`ListenerStats`](crate::transport::ListenerStats),
//! [`GossipStats`](crate::membership::GossipStats)); the log only has to say that it is
//! happening, without letting a flood of bad input fill the disk.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Lets one event in per interval through to the log.
#[derive(Debug)]
pub(crate) struct LogThrottle {
    interval: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last: Option<Instant>,
    suppressed: u64,
}

impl LogThrottle {
    pub(crate) fn new(interval: Duration) -> Self {
        Self {
            interval,
            state: Mutex::new(State::default()),
        }
    }

    /// `Some(suppressed)` when this event may be logged, with the number of events
    /// kept out of the log since the last one that was; `None` when it must not be.
    pub(crate) fn admit(&self) -> Option<u64> {
        let now = Instant::now();
        let mut s = self.state.lock();
        match s.last {
            Some(last) if now.duration_since(last) < self.interval => {
                s.suppressed += 1;
                None
            }
            _ => {
                s.last = Some(now);
                Some(std::mem::take(&mut s.suppressed))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_per_interval_is_admitted_with_the_count_it_hid() {
        let t = LogThrottle::new(Duration::from_secs(3600));
        assert_eq!(t.admit(), Some(0));
        for _ in 0..99 {
            assert_eq!(t.admit(), None);
        }
        let t = LogThrottle::new(Duration::ZERO);
        assert_eq!(t.admit(), Some(0));
        assert_eq!(t.admit(), Some(0));
    }

    #[test]
    fn the_next_admitted_event_reports_what_was_suppressed() {
        let interval = Duration::from_millis(20);
        for _ in 0..100 {
            let start = Instant::now();
            let t = LogThrottle::new(interval);
            assert_eq!(t.admit(), Some(0));
            let (second, third) = (t.admit(), t.admit());
            if start.elapsed() >= interval {
                // Descheduled past the interval (a loaded machine): the later events
                // may rightly have been admitted. Try again.
                continue;
            }
            assert_eq!((second, third), (None, None));
            std::thread::sleep(interval * 2);
            assert_eq!(t.admit(), Some(2));
            return;
        }
        panic!("three events never fit in one interval in 100 tries");
    }
}
