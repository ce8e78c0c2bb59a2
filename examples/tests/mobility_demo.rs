//! `cargo run --example mobility`, run by `cargo test`: the same code with fewer
//! messages. It fails if any message is lost, repeated or reordered across the ten
//! moves, or if the counter does not end up where it was sent.

#[path = "../mobility/counter.rs"]
#[allow(dead_code)]
mod counter;
#[path = "../mobility/demo.rs"]
mod demo;

#[test]
fn ten_moves_a_b_with_senders_on_both_nodes_lose_repeat_and_reorder_nothing() {
    let s = demo::run(10, 300).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.arrivals,
        ["b", "a", "b", "a", "b", "a", "b", "a", "b", "a"]
    );
    assert!(s.sent.iter().all(|&n| n >= 300), "{s:?}");
    assert_eq!(s.counted, s.sent[0] + s.sent[1]);
    assert_eq!(s.moved, [5, 5]);
}
