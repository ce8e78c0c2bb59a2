//! Timers at their edges: `send_after` and `send_interval` take any `Duration`; one too
//! far out to reach ("never", `Duration::MAX`) arms a timer that does not fire, and
//! the handler that arms it does not panic.

use std::time::Duration;

use odeon::testkit::Sim;
use odeon::{Actor, Context, Handler, Message, StopReason, System, TimerHandle};

const HANG_GUARD: Duration = Duration::from_secs(20);

struct Sleeper {
    ticks: u32,
}
impl Actor for Sleeper {}
#[derive(Clone)]
struct Tick;
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Sleeper {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {
        self.ticks += 1;
    }
}
struct ArmForever;
impl Message for ArmForever {
    type Reply = (TimerHandle, TimerHandle);
}
impl Handler<ArmForever> for Sleeper {
    fn handle(&mut self, _: ArmForever, cx: &mut Context<Self>) -> (TimerHandle, TimerHandle) {
        (
            cx.send_after(Duration::MAX, Tick),
            cx.send_interval(Duration::MAX, Tick),
        )
    }
}
struct Ticks;
impl Message for Ticks {
    type Reply = u32;
}
impl Handler<Ticks> for Sleeper {
    fn handle(&mut self, _: Ticks, _: &mut Context<Self>) -> u32 {
        self.ticks
    }
}

#[test]
fn timers_of_the_largest_duration_arm_without_panicking_and_never_fire() {
    let system = System::builder().workers(2).build();
    let s = system.spawn(Sleeper { ticks: 0 });
    let (once, every) = system
        .block_on(s.ask(ArmForever).timeout(HANG_GUARD))
        .expect("the handler returns instead of panicking");
    assert!(s.is_alive());
    assert!(!once.is_finished() && !every.is_finished());
    assert_eq!(system.block_on(s.ask(Ticks)), Ok(0));
    once.cancel();
    every.cancel();
    assert!(system.wait_quiescent(Some(HANG_GUARD)));
    assert_eq!(system.block_on(s.ask(Ticks)), Ok(0));
    s.stop();
    assert_eq!(system.block_on(s.wait_stopped()), StopReason::Normal);
    system.shutdown();
}

#[test]
fn on_a_sim_timers_of_the_largest_duration_never_fire_either() {
    let sim = Sim::new(1);
    let s = sim.spawn(Sleeper { ticks: 0 });
    let (once, every) = sim.block_on(s.ask(ArmForever)).expect("answered");
    sim.run_for(Duration::from_secs(3600));
    assert_eq!(sim.block_on(s.ask(Ticks)), Ok(0));
    once.cancel();
    every.cancel();
    sim.run_until_idle();
    assert!(s.is_alive());
}
