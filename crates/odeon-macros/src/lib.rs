//! Derive macros for [odeon](https://docs.rs/odeon).
//!
//! Do not depend on this crate directly: odeon re-exports its macros behind its
//! `macros` feature (on by default), so that `use odeon::Message;` brings both the
//! trait and its derive, the way `use serde::Serialize;` does.
//!
//! ```
//! use odeon::{Actor, Context, Handler, Message, System};
//!
//! #[derive(Message)]
//! #[message(reply = u64)]
//! struct Add(u64);
//!
//! struct Counter(u64);
//! impl Actor for Counter {}
//! impl Handler<Add> for Counter {
//!     fn handle(&mut self, msg: Add, _cx: &mut Context<Self>) -> u64 {
//!         self.0 += msg.0;
//!         self.0
//!     }
//! }
//!
//! let system = System::new();
//! let counter = system.spawn(Counter(40));
//! assert_eq!(system.block_on(counter.ask(Add(2))).unwrap(), 42);
//! system.shutdown();
//! ```

mod message;

use proc_macro::TokenStream;

/// Implements `odeon::Message` for a struct or an enum.
///
/// The reply type is named by `#[message(reply = Type)]`; without the attribute it is
/// `()`, a tell-only message. Any type that is `Send + 'static` will do.
///
/// ```
/// use odeon::Message;
///
/// #[derive(Message)]                 // type Reply = ();
/// struct Reset;
///
/// #[derive(Message)]
/// #[message(reply = Option<String>)]
/// enum Lookup {
///     ById(u64),
///     ByName(String),
/// }
///
/// // Compile-time checks of what the derive generated.
/// fn tell_only<M: Message<Reply = ()>>() {}
/// fn answers_with_a_name<M: Message<Reply = Option<String>>>() {}
/// tell_only::<Reset>();
/// answers_with_a_name::<Lookup>();
/// ```
///
/// # Generics
///
/// A generic message is a message for exactly the arguments that make it (and its
/// reply) `Send + 'static`: the derive adds those two bounds to the impl's `where`
/// clause instead of asking for them on the type. The reply may name the parameters.
///
/// ```
/// use odeon::{Actor, Context, Handler, Message, System};
///
/// /// Answers with what it carries.
/// #[derive(Message)]
/// #[message(reply = T)]
/// struct Echo<T>(T);
///
/// struct Echoer;
/// impl Actor for Echoer {}
/// impl<T: Send + 'static> Handler<Echo<T>> for Echoer {
///     fn handle(&mut self, msg: Echo<T>, _cx: &mut Context<Self>) -> T {
///         msg.0
///     }
/// }
///
/// let system = System::new();
/// let echoer = system.spawn(Echoer);
/// assert_eq!(system.block_on(echoer.ask(Echo("hi".to_string()))).unwrap(), "hi");
/// assert_eq!(system.block_on(echoer.ask(Echo(7_u8))).unwrap(), 7);
/// system.shutdown();
/// ```
///
/// # Errors
///
/// An attribute the derive does not understand is a compile error that says what it
/// expected: an unknown key, `reply` without `= Type`, a quoted type
/// (`reply = "u64"`), `reply` given twice, or a bare `#[message]`. A message that is
/// not `Send + 'static` fails to compile as it would with a hand-written impl.
#[proc_macro_derive(Message, attributes(message))]
pub fn derive_message(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    message::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
