// Telling a borrow of a local inside a generic message: messages are `'static`, so the
// borrow would have to outlive the function.
use odeon::{Actor, Context, Handler, Message, System};

struct Carry<T>(T);

impl<T: Send + 'static> Message for Carry<T> {
    type Reply = ();
}

struct Sink;
impl Actor for Sink {}

impl<T: Send + 'static> Handler<Carry<T>> for Sink {
    fn handle(&mut self, _msg: Carry<T>, _cx: &mut Context<Self>) {}
}

fn main() {
    let system = System::new();
    let sink = system.spawn(Sink);
    let mut local = vec![1u8, 2, 3];
    let _ = sink.tell(Carry(&mut local));
}
