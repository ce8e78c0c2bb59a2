// `reply` alone says nothing about the type.
use odeon::Message;

#[derive(Message)]
#[message(reply)]
struct Add(u64);

fn main() {}
