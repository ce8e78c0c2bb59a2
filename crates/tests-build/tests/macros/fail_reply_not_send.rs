// The reply crosses threads too: an `Rc` reply does not compile.
use std::rc::Rc;

use odeon::Message;

#[derive(Message)]
#[message(reply = Rc<u64>)]
struct Get;

fn main() {}
