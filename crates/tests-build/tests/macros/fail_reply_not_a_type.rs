// A value where a type belongs.
use odeon::Message;

#[derive(Message)]
#[message(reply = 42)]
struct Add(u64);

fn main() {}
