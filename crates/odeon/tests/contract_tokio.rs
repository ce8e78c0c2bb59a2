//! odeon on the application's tokio runtime (`SystemBuilder::io_handle`): streams fed
//! to actors run as tasks there, so a stream that is always ready must not keep a
//! current-thread runtime to itself (README: "A `System` may be created, used, dropped
//! and shut down inside `#[tokio::main]` ... (either flavour)").

use std::sync::mpsc;
use std::time::Duration;

use futures_util::stream;
use odeon::{Actor, Context, Handler, Message, StreamHandle, System};

const HANG_GUARD: Duration = Duration::from_secs(30);

struct Flooded;
impl Actor for Flooded {}
struct Tick;
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Flooded {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {}
}
struct Open;
impl Message for Open {
    type Reply = StreamHandle;
}
impl Handler<Open> for Flooded {
    fn handle(&mut self, _: Open, cx: &mut Context<Self>) -> StreamHandle {
        cx.add_stream(stream::repeat_with(|| Tick))
    }
}

/// Runs `body` on a current-thread runtime on a thread of its own, and fails (rather
/// than hangs) if it does not finish: a runtime whose only thread is monopolised never
/// fires its own timeouts.
fn on_current_thread_runtime(body: impl AsyncFnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(body());
        let _ = done.send(());
    });
    finished
        .recv_timeout(HANG_GUARD)
        .expect("the application's runtime kept running its own tasks");
}

#[test]
fn an_always_ready_stream_leaves_a_lent_current_thread_runtime_free() {
    on_current_thread_runtime(async || {
        let system = System::builder()
            .workers(2)
            .io_handle(tokio::runtime::Handle::current())
            .build();
        let a = system.spawn(Flooded);
        let endless = a.ask(Open).await.expect("answered");
        // The application's own timer still fires while the stream runs beside it.
        tokio::time::sleep(Duration::from_millis(20)).await;
        tokio::task::yield_now().await;
        endless.cancel();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(endless.is_finished(), "cancelled on this runtime");
        assert!(system.shutdown_async().await);
    });
}
