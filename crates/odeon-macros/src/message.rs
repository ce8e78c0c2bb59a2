//! `#[derive(Message)]`: reads `#[message(reply = Type)]` and writes the impl.
//!
//! Parsing and expansion work on `proc_macro2` tokens, so the unit tests below run them
//! without a compiler in the loop; what the generated impl means to rustc is tested
//! through odeon (`crates/odeon/tests/messaging_derive.rs`) and the compile-fail cases
//! with trybuild (`crates/tests-build`).

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::punctuated::Punctuated;
use syn::{DeriveInput, Generics, LitStr, Meta, Token, Type, WhereClause, parse_quote};

/// How to write the attribute, quoted by every error about it.
const USAGE: &str = "expected `#[message(reply = Type)]`";

/// The impl of `::odeon::Message` for `input`, or every error found in its attributes.
pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let reply = reply_type(input)?.unwrap_or_else(|| parse_quote!(()));
    let name = &input.ident;
    let (impl_generics, type_generics, _) = input.generics.split_for_impl();
    let where_clause = where_clause(&input.generics, &reply);
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::odeon::Message for #name #type_generics #where_clause {
            type Reply = #reply;
        }
    })
}

/// The type given by `reply = Type` in the `#[message(...)]` attributes, if any. All the
/// errors are reported together, so one build shows every bad attribute.
fn reply_type(input: &DeriveInput) -> syn::Result<Option<Type>> {
    let mut reply: Option<Type> = None;
    let mut errors: Option<syn::Error> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("message")) {
        let list = match &attr.meta {
            Meta::List(list) if !list.tokens.is_empty() => list,
            Meta::List(_) => {
                push(
                    &mut errors,
                    syn::Error::new_spanned(
                        attr,
                        "empty `#[message()]`: remove it for `Reply = ()`, or write \
                     `#[message(reply = Type)]`",
                    ),
                );
                continue;
            }
            Meta::Path(_) | Meta::NameValue(_) => {
                push(&mut errors, syn::Error::new_spanned(attr, USAGE));
                continue;
            }
        };
        let parsed = list.parse_nested_meta(|meta| {
            if !meta.path.is_ident("reply") {
                let key = meta.path.to_token_stream().to_string().replace(' ', "");
                return Err(meta.error(format!(
                    "unknown key `{key}` in `#[message(...)]`: the only key is `reply`, \
                     as in `#[message(reply = u64)]`"
                )));
            }
            if !meta.input.peek(Token![=]) {
                return Err(meta.error("expected `reply = Type`, as in `reply = u64`"));
            }
            let value = meta.value()?;
            if value.peek(LitStr) {
                let quoted: LitStr = value.parse()?;
                return Err(syn::Error::new_spanned(
                    &quoted,
                    format!(
                        "write the reply type without quotes: `reply = {}`",
                        quoted.value()
                    ),
                ));
            }
            // syn's own message lists every token a type may start with.
            let ty: Type = value.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected a type after `reply =`, as in `reply = u64`",
                )
            })?;
            if reply.is_some() {
                return Err(syn::Error::new_spanned(
                    &meta.path,
                    "duplicate `reply`: a message has one reply type",
                ));
            }
            reply = Some(ty);
            Ok(())
        });
        if let Err(e) = parsed {
            push(&mut errors, e);
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(reply),
    }
}

/// Adds `e` to the errors reported together.
fn push(errors: &mut Option<syn::Error>, e: syn::Error) {
    match errors {
        Some(all) => all.combine(e),
        None => *errors = Some(e),
    }
}

/// The impl's `where` clause: the type's own, plus what `Message` asks of a generic
/// message. `Message: Send + 'static` and `Reply: Send + 'static` hold for some
/// arguments and not others, so they become bounds of the impl (the type needs none).
/// The reply's bound is added only when the reply names a parameter: a bound without
/// parameters that does not hold is an error about rustc's `trivial_bounds` feature,
/// where the error from `Message` itself says what is wrong.
fn where_clause(generics: &Generics, reply: &Type) -> Option<WhereClause> {
    let mut clause = generics.where_clause.clone();
    if generics.params.is_empty() {
        return clause;
    }
    let predicates = &mut clause
        .get_or_insert_with(|| WhereClause {
            where_token: <Token![where]>::default(),
            predicates: Punctuated::new(),
        })
        .predicates;
    predicates.push(parse_quote!(Self: ::core::marker::Send + 'static));
    if names_a_parameter(reply.to_token_stream(), generics) {
        predicates.push(parse_quote!(#reply: ::core::marker::Send + 'static));
    }
    clause
}

/// Whether `tokens` mention one of the parameters of `generics` (by identifier, so a
/// path segment of the same name counts too: then the bound is merely redundant).
fn names_a_parameter(tokens: TokenStream, generics: &Generics) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => generics.params.iter().any(|param| match param {
            syn::GenericParam::Type(t) => t.ident == ident,
            syn::GenericParam::Lifetime(l) => l.lifetime.ident == ident,
            syn::GenericParam::Const(c) => c.ident == ident,
        }),
        TokenTree::Group(group) => names_a_parameter(group.stream(), generics),
        TokenTree::Punct(_) | TokenTree::Literal(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(item: TokenStream) -> Result<String, String> {
        let input: DeriveInput = syn::parse2(item).expect("a valid item");
        expand(&input)
            .map(|tokens| tokens.to_string())
            .map_err(|e| {
                e.into_iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
    }

    #[test]
    fn without_the_attribute_the_reply_is_the_unit_type() {
        let out = expand_str(quote!(
            struct Ping;
        ))
        .unwrap();
        assert_eq!(
            out,
            quote!(
                #[automatically_derived]
                impl ::odeon::Message for Ping {
                    type Reply = ();
                }
            )
            .to_string()
        );
    }

    #[test]
    fn the_reply_attribute_names_the_reply_type() {
        let out = expand_str(quote!(
            #[message(reply = Result<Vec<u8>, String>)]
            enum Fetch {
                One(u64),
                All,
            }
        ))
        .unwrap();
        assert!(
            out.contains("type Reply = Result < Vec < u8 > , String > ;"),
            "{out}"
        );
    }

    #[test]
    fn a_generic_message_is_bounded_in_the_impl_and_keeps_its_own_bounds() {
        let out = expand_str(quote!(
            #[message(reply = Vec<T>)]
            struct Batch<T: Clone, const N: usize>
            where
                T: Default,
            {
                items: [T; N],
            }
        ))
        .unwrap();
        // A string, not `quote!`: rustfmt would add a trailing comma to the `where`.
        let expected = "# [automatically_derived] \
            impl < T : Clone , const N : usize > :: odeon :: Message for Batch < T , N > \
            where T : Default , \
            Self : :: core :: marker :: Send + 'static , \
            Vec < T > : :: core :: marker :: Send + 'static \
            { type Reply = Vec < T > ; }";
        assert_eq!(out, expected);
    }

    #[test]
    fn a_reply_without_parameters_gets_no_bound_of_its_own() {
        let out = expand_str(quote!(
            #[message(reply = u64)]
            struct Sum<T>(Vec<T>);
        ))
        .unwrap();
        assert!(
            out.contains("Self : :: core :: marker :: Send + 'static"),
            "{out}"
        );
        assert!(!out.contains("u64 :"), "{out}");
    }

    #[test]
    fn a_lifetime_parameter_is_bounded_by_static() {
        let out = expand_str(quote!(
            #[message(reply = &'a str)]
            struct Greeting<'a>(&'a str);
        ))
        .unwrap();
        assert!(
            out.contains("impl < 'a > :: odeon :: Message for Greeting < 'a >"),
            "{out}"
        );
        assert!(
            out.contains("& 'a str : :: core :: marker :: Send + 'static"),
            "{out}"
        );
    }

    #[test]
    fn an_unknown_key_is_named_in_the_error() {
        let err = expand_str(quote!(
            #[message(response = u64)]
            struct M;
        ))
        .unwrap_err();
        assert!(err.contains("unknown key `response`"), "{err}");
    }

    #[test]
    fn reply_without_a_type_is_an_error() {
        let err = expand_str(quote!(
            #[message(reply)]
            struct M;
        ))
        .unwrap_err();
        assert_eq!(err, "expected `reply = Type`, as in `reply = u64`");
    }

    #[test]
    fn a_quoted_reply_type_is_refused_with_the_unquoted_spelling() {
        let err = expand_str(quote!(
            #[message(reply = "u64")]
            struct M;
        ))
        .unwrap_err();
        assert_eq!(err, "write the reply type without quotes: `reply = u64`");
    }

    #[test]
    fn a_value_where_the_type_belongs_is_an_error() {
        let err = expand_str(quote!(
            #[message(reply = 42)]
            struct M;
        ))
        .unwrap_err();
        assert_eq!(err, "expected a type after `reply =`, as in `reply = u64`");
    }

    #[test]
    fn a_second_reply_is_an_error_even_in_a_second_attribute() {
        let err = expand_str(quote!(
            #[message(reply = u64)]
            #[message(reply = u32)]
            struct M;
        ))
        .unwrap_err();
        assert_eq!(err, "duplicate `reply`: a message has one reply type");
    }

    #[test]
    fn a_bare_or_empty_attribute_is_an_error() {
        for item in [
            quote!(
                #[message]
                struct M;
            ),
            quote!(
                #[message = "u64"]
                struct M;
            ),
            quote!(
                #[message()]
                struct M;
            ),
        ] {
            let err = expand_str(item).unwrap_err();
            assert!(err.contains("#[message"), "{err}");
        }
    }

    #[test]
    fn every_bad_attribute_is_reported_at_once() {
        let err = expand_str(quote!(
            #[message(answer = u64)]
            #[message]
            struct M;
        ))
        .unwrap_err();
        assert_eq!(err.split(" | ").count(), 2, "{err}");
    }
}
