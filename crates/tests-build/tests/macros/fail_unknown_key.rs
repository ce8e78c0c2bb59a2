// A key other than `reply` (here a guess at the name) is named in the error.
use odeon::Message;

#[derive(Message)]
#[message(response = u64)]
struct Add(u64);

fn main() {}
