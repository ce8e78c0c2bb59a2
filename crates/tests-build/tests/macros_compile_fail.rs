//! `#[derive(Message)]`: an attribute the derive does not understand is a compile error
//! that says what it expected (the `.stderr` files pin the wording and where it points),
//! and a derived message is held to `Send + 'static` like a hand-written one.

#[test]
fn bad_message_attributes_and_unsendable_derived_messages_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/macros/fail_*.rs");
}
