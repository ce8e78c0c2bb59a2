//! `#[derive(Message)]` (the `macros` feature), used the way users do: `use
//! odeon::Message` brings the trait and the derive, and derived messages are told and
//! asked like hand-written ones. The compile-fail cases (bad attributes) are trybuild
//! tests in `crates/tests-build`.

#![cfg(feature = "macros")]

use std::fmt::Debug;
use std::marker::PhantomData;

use odeon::{Actor, Context, Handler, Message, System};

/// Holds only if `M`'s reply type is `R`: the derive's output, checked by the compiler.
fn reply_is<M: Message<Reply = R>, R>() {}

#[derive(Default)]
struct Counter {
    total: u64,
    resets: u32,
}
impl Actor for Counter {}

#[derive(Message)]
#[message(reply = u64)]
struct Add(u64);
impl Handler<Add> for Counter {
    fn handle(&mut self, msg: Add, _cx: &mut Context<Self>) -> u64 {
        self.total += msg.0;
        self.total
    }
}

/// No attribute: a tell-only message.
#[derive(Message)]
struct Reset;
impl Handler<Reset> for Counter {
    fn handle(&mut self, _: Reset, _cx: &mut Context<Self>) {
        self.total = 0;
        self.resets += 1;
    }
}

#[derive(Message)]
#[message(reply = (u64, u32))]
enum Query {
    Total,
    Resets,
}
impl Handler<Query> for Counter {
    fn handle(&mut self, msg: Query, _cx: &mut Context<Self>) -> (u64, u32) {
        match msg {
            Query::Total => (self.total, 0),
            Query::Resets => (0, self.resets),
        }
    }
}

#[test]
fn a_derived_message_is_told_and_asked_like_a_hand_written_one() {
    reply_is::<Add, u64>();
    reply_is::<Reset, ()>();
    reply_is::<Query, (u64, u32)>();

    let system = System::new();
    let counter = system.spawn(Counter::default());
    counter.tell(Add(40)).expect("the counter is alive");
    assert_eq!(system.block_on(counter.ask(Add(2))).unwrap(), 42);
    counter.tell(Reset).expect("the counter is alive");
    system
        .block_on(counter.ask(Reset))
        .expect("a unit reply arrives");
    assert_eq!(system.block_on(counter.ask(Query::Total)).unwrap(), (0, 0));
    assert_eq!(system.block_on(counter.ask(Query::Resets)).unwrap(), (0, 2));
    system.shutdown();
}

/// Answers with what it carries: the reply type is the parameter.
#[derive(Message)]
#[message(reply = T)]
struct Echo<T>(T);

/// Bounds and a `where` clause of its own, a const parameter, and a reply that names
/// the parameter inside another type.
#[derive(Message)]
#[message(reply = Vec<T>)]
struct Repeat<T: Clone, const N: usize>
where
    T: Debug,
{
    item: T,
}

/// A parameter that appears only in a marker: the message is `Send` whatever `T` is,
/// and the derive asks no more than that.
#[derive(Message)]
#[message(reply = &'static str)]
struct TypeName<T>(PhantomData<fn() -> T>);

struct Echoer;
impl Actor for Echoer {}
impl<T: Send + 'static> Handler<Echo<T>> for Echoer {
    fn handle(&mut self, msg: Echo<T>, _cx: &mut Context<Self>) -> T {
        msg.0
    }
}
impl<T: Clone + Debug + Send + 'static, const N: usize> Handler<Repeat<T, N>> for Echoer {
    fn handle(&mut self, msg: Repeat<T, N>, _cx: &mut Context<Self>) -> Vec<T> {
        vec![msg.item; N]
    }
}
impl<T: 'static> Handler<TypeName<T>> for Echoer {
    fn handle(&mut self, _: TypeName<T>, _cx: &mut Context<Self>) -> &'static str {
        std::any::type_name::<T>()
    }
}

#[test]
fn a_generic_derived_message_is_a_message_for_each_sendable_argument() {
    reply_is::<Echo<String>, String>();
    reply_is::<Repeat<u8, 3>, Vec<u8>>();
    // `Rc` is not `Send`, but `TypeName<Rc<_>>` holds no `Rc`: still a message.
    reply_is::<TypeName<std::rc::Rc<u8>>, &'static str>();

    let system = System::new();
    let echoer = system.spawn(Echoer);
    assert_eq!(
        system.block_on(echoer.ask(Echo("hi".to_string()))).unwrap(),
        "hi"
    );
    assert_eq!(system.block_on(echoer.ask(Echo(7_u32))).unwrap(), 7);
    assert_eq!(
        system
            .block_on(echoer.ask(Repeat::<char, 3> { item: 'a' }))
            .unwrap(),
        vec!['a', 'a', 'a']
    );
    let name = system
        .block_on(echoer.ask(TypeName::<std::rc::Rc<u8>>(PhantomData)))
        .unwrap();
    assert!(name.contains("Rc<u8>"), "{name}");
    system.shutdown();
}

/// A lifetime parameter: a message for `'static` arguments only, such as literals.
#[derive(Message)]
#[message(reply = usize)]
struct Greeting<'a>(&'a str);

struct Greeter;
impl Actor for Greeter {}
impl Handler<Greeting<'static>> for Greeter {
    fn handle(&mut self, msg: Greeting<'static>, _cx: &mut Context<Self>) -> usize {
        msg.0.len()
    }
}

#[test]
fn a_message_with_a_lifetime_parameter_is_sent_with_static_data() {
    let system = System::new();
    let greeter = system.spawn(Greeter);
    assert_eq!(system.block_on(greeter.ask(Greeting("hello"))).unwrap(), 5);
    system.shutdown();
}
