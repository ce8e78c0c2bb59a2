// A message holding an `Rc` would let two actors share a non-atomic count.
use std::rc::Rc;

struct Shared(Rc<Vec<u8>>);

impl odeon::Message for Shared {
    type Reply = ();
}

fn main() {}
