// A generic derived message is a message only for arguments that are `Send + 'static`:
// telling one that carries an `Rc` fails where it is told.
use std::rc::Rc;

use odeon::{Actor, Context, Handler, Message, System};

#[derive(Message)]
#[message(reply = T)]
struct Echo<T>(T);

struct Echoer;
impl Actor for Echoer {}
impl<T: Send + 'static> Handler<Echo<T>> for Echoer {
    fn handle(&mut self, msg: Echo<T>, _cx: &mut Context<Self>) -> T {
        msg.0
    }
}

fn main() {
    let system = System::new();
    let echoer = system.spawn(Echoer);
    let _ = echoer.tell(Echo(Rc::new(5_u32)));
}
