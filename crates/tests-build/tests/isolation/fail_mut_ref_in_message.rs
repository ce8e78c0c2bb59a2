// A message holding a `&mut` would give the receiver access to the sender's state.
struct Poke<'a>(&'a mut u64);

impl<'a> odeon::Message for Poke<'a> {
    type Reply = ();
}

fn main() {}
