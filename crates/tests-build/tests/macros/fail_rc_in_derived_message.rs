// Guarantee 2 holds for derived messages: one holding an `Rc` is not `Send`.
use std::rc::Rc;

use odeon::Message;

#[derive(Message)]
struct Shared(Rc<Vec<u8>>);

fn main() {}
