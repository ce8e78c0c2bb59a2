//! Guarantee 2 (isolation without copies): a message is `Send + 'static`, so a message
//! that holds an `Rc`, a `RefCell` borrow, a `&mut` or any other non-`'static`
//! reference does not compile. Each `tests/isolation/fail_*.rs` must fail for that reason
//! (the `.stderr` files pin the `Send` / `'static` diagnostics); `pass_*.rs` shows that
//! an ordinary owned message compiles and runs.

#[test]
fn messages_that_share_or_borrow_state_do_not_compile_and_owned_ones_do() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/isolation/fail_*.rs");
    t.pass("tests/isolation/pass_*.rs");
}
