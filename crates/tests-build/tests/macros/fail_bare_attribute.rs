// `#[message]` and `#[message = ...]` carry no reply type; both are reported at once.
use odeon::Message;

#[derive(Message)]
#[message]
struct Add(u64);

#[derive(Message)]
#[message = "u64"]
struct Sub(u64);

fn main() {}
