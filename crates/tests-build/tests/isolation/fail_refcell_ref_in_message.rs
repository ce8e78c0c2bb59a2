// A message holding a shared `RefCell` borrow (`Ref`) is just as unsafe to move.
use std::cell::Ref;

struct Peek(Ref<'static, u64>);

impl odeon::Message for Peek {
    type Reply = ();
}

fn main() {}
