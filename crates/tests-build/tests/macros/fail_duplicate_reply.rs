// Two reply types, even in two attributes: the second is pointed at.
use odeon::Message;

#[derive(Message)]
#[message(reply = u64)]
#[message(reply = u32)]
struct Add(u64);

fn main() {}
