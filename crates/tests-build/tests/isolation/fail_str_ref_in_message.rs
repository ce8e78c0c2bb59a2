// A message holding a non-'static `&str` would outlive the sender's buffer.
struct Say<'a>(&'a str);

impl<'a> odeon::Message for Say<'a> {
    type Reply = ();
}

fn main() {}
