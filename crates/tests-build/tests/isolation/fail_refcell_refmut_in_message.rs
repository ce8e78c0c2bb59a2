// A message holding a live `RefCell` borrow (`RefMut`) would share the cell's borrow
// flag, which is not thread-safe.
use std::cell::RefMut;

struct Borrowed(RefMut<'static, Vec<u8>>);

impl odeon::Message for Borrowed {
    type Reply = ();
}

fn main() {}
