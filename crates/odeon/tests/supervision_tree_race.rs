//! A stop always wins over a restart, whenever it lands: a subtree whose child fails
//! over and over (panics and `cx.fail`, with and without backoff) is stopped, killed or
//! shut down at varying moments, and afterwards nothing in it runs or restarts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use odeon::{
    Actor, Context, Handler, Message, Restart, Strategy, SupervisorSpec, System, TellError,
};

const HANG_GUARD: Duration = Duration::from_secs(10);

/// Fails as soon as it starts: by panicking or with `cx.fail`, in turn.
struct Looper {
    started: Arc<AtomicUsize>,
}

impl Actor for Looper {
    fn started(&mut self, cx: &mut Context<Self>) {
        self.started.fetch_add(1, Ordering::SeqCst);
        let _ = cx.notify(Fail);
    }
}

struct Fail;
impl Message for Fail {
    type Reply = ();
}
impl Handler<Fail> for Looper {
    fn handle(&mut self, _: Fail, cx: &mut Context<Self>) {
        if self.started.load(Ordering::SeqCst) % 2 == 0 {
            cx.fail("even start");
        } else {
            panic!("odd start");
        }
    }
}

#[test]
fn a_failing_subtree_stopped_at_any_moment_stops_entirely_and_never_restarts_afterwards() {
    // The loopers' panics are expected; keep the output readable.
    std::panic::set_hook(Box::new(|_| {}));
    for round in 0..120u64 {
        let system = System::builder().workers(2).build();
        let started = Arc::new(AtomicUsize::new(0));
        let mut spec = SupervisorSpec::new(Strategy::OneForAll)
            .max_restarts(usize::MAX, Duration::from_secs(60));
        if round % 3 == 0 {
            spec = spec.backoff(Duration::from_micros(50), Duration::from_micros(200));
        }
        let restart = if round % 2 == 0 {
            Restart::Permanent
        } else {
            Restart::Transient
        };
        let counter = started.clone();
        let (root, (sub, looper)) =
            system.supervise(SupervisorSpec::new(Strategy::OneForOne), move |c| {
                let counter = counter.clone();
                c.supervise(spec, move |c| {
                    let counter = counter.clone();
                    c.spawn_with_restart(restart, move || Looper {
                        started: counter.clone(),
                    })
                })
            });
        std::thread::sleep(Duration::from_micros((round % 7) * 100));
        match round % 4 {
            0 => root.stop(),
            1 => sub.stop(),
            2 => sub.kill(),
            _ => {
                assert!(system.shutdown(), "round {round}: shutdown timed out");
                continue;
            }
        }
        assert!(
            system.wait_quiescent(Some(HANG_GUARD)),
            "round {round}: something kept running after the stop"
        );
        assert!(!sub.is_alive(), "round {round}: the sub-supervisor");
        assert!(!looper.is_alive(), "round {round}: the failing child");
        assert!(matches!(looper.tell(Fail), Err(TellError::Stopped(_))));
        let after = started.load(Ordering::SeqCst);
        assert!(after >= 1);
        assert!(system.shutdown());
        assert_eq!(started.load(Ordering::SeqCst), after, "round {round}");
    }
    let _ = std::panic::take_hook();
}
