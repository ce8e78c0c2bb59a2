// Telling an `Rc` inside a generic message: the message is only a `Message` when what
// it carries is `Send`, so the `tell` does not compile.
use std::rc::Rc;

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
    let shared = Rc::new(5u32);
    let _ = sink.tell(Carry(shared.clone()));
}
