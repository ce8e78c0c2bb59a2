//! The odeon-bench runner (being written).

fn main() {}
