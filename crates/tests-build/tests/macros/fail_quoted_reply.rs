// serde's habit of quoting: the error gives the unquoted spelling.
use odeon::Message;

#[derive(Message)]
#[message(reply = "u64")]
struct Add(u64);

fn main() {}
