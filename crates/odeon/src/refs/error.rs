//! Send errors.

use std::fmt;

/// Why a `tell` failed. Carries the message back.
#[derive(PartialEq, Eq)]
pub enum TellError<M> {
    /// The actor has stopped.
    Stopped(M),
    /// The actor's bounded mailbox is full.
    Full(M),
}

impl<M> TellError<M> {
    /// The message that was not sent.
    pub fn into_inner(self) -> M {
        match self {
            TellError::Stopped(m) | TellError::Full(m) => m,
        }
    }
}

impl<M> fmt::Debug for TellError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TellError::Stopped(_) => f.write_str("Stopped(..)"),
            TellError::Full(_) => f.write_str("Full(..)"),
        }
    }
}

impl<M> fmt::Display for TellError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TellError::Stopped(_) => f.write_str("the actor has stopped"),
            TellError::Full(_) => f.write_str("the actor's mailbox is full"),
        }
    }
}

impl<M> std::error::Error for TellError<M> {}
