//! Waiting for an actor to stop from outside it (`ActorRef::wait_stopped`), and the
//! stop watch it is built on, which the local registry shares.
//!
//! A wait is a watcher with a one-shot channel instead of a mailbox: nothing is kept
//! on the actor until someone waits (the watcher list lives in the cell's `ctl`,
//! allocated on first use), and nothing touches the message path.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::oneshot;

use super::remote::Endpoint;
use crate::cell::{AnyCell, Cell};
use crate::{Actor, ActorId, StopReason, Terminated};

/// A watch on one actor's stop, local or remote, that can be cancelled. The key is
/// a fresh id, so several watches on the same actor never replace one another.
pub(crate) struct StopWatch {
    target: WatchTarget,
    key: ActorId,
}

enum WatchTarget {
    /// Memory only: an `Arc` of the cell does not count as a strong reference, so it
    /// never keeps the actor from being collected.
    Local(Arc<dyn AnyCell>),
    Remote(Arc<dyn Endpoint>),
}

impl StopWatch {
    /// Calls `notify` once when the actor stops (at once, on this thread, if it has).
    pub(crate) fn local<A: Actor>(
        cell: Arc<Cell<A>>,
        notify: Box<dyn FnOnce(Terminated) + Send>,
    ) -> Self {
        let key = ActorId::next();
        cell.add_watcher(key, notify);
        Self {
            target: WatchTarget::Local(cell),
            key,
        }
    }

    /// Calls `notify` once when the remote actor stops or its node is lost.
    pub(crate) fn remote(
        endpoint: Arc<dyn Endpoint>,
        notify: Box<dyn FnOnce(Terminated) + Send>,
    ) -> Self {
        let key = ActorId::next();
        endpoint.watch(key, notify);
        Self {
            target: WatchTarget::Remote(endpoint),
            key,
        }
    }

    /// Removes the watch (a no-op if it has fired).
    pub(crate) fn cancel(self) {
        match self.target {
            WatchTarget::Local(cell) => cell.remove_watcher(self.key),
            WatchTarget::Remote(endpoint) => endpoint.unwatch(self.key),
        }
    }
}

/// Resolves with the [`StopReason`] once the actor has stopped: see
/// [`ActorRef::wait_stopped`](crate::ActorRef::wait_stopped).
///
/// Dropping it before it resolves removes its waiter from the actor.
#[must_use = "a wait does nothing unless it is awaited"]
pub struct WaitStopped {
    rx: oneshot::Receiver<StopReason>,
    /// `None` once resolved: there is nothing to cancel any more.
    watch: Option<StopWatch>,
    remote: bool,
}

impl WaitStopped {
    pub(crate) fn local<A: Actor>(cell: Arc<Cell<A>>) -> Self {
        let (tx, rx) = oneshot::channel();
        let watch = StopWatch::local(cell, notifier(tx));
        Self {
            rx,
            watch: Some(watch),
            remote: false,
        }
    }

    pub(crate) fn remote(endpoint: Arc<dyn Endpoint>) -> Self {
        let (tx, rx) = oneshot::channel();
        let watch = StopWatch::remote(endpoint, notifier(tx));
        Self {
            rx,
            watch: Some(watch),
            remote: true,
        }
    }
}

fn notifier(tx: oneshot::Sender<StopReason>) -> Box<dyn FnOnce(Terminated) + Send> {
    Box::new(move |t: Terminated| {
        let _ = tx.send(t.reason);
    })
}

impl Future for WaitStopped {
    type Output = StopReason;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<StopReason> {
        let this = &mut *self;
        match Pin::new(&mut this.rx).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                this.watch = None;
                Poll::Ready(result.unwrap_or(if this.remote {
                    // The transport dropped the watch without a verdict: the node is
                    // gone as far as this one can tell.
                    StopReason::NodeLost
                } else {
                    // A local cell drops its watchers unnotified only when the actor
                    // moved to another node (the stub retires): it stopped here.
                    StopReason::Normal
                }))
            }
        }
    }
}

impl Drop for WaitStopped {
    fn drop(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.cancel();
        }
    }
}

impl fmt::Debug for WaitStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitStopped")
            .field("resolved", &self.watch.is_none())
            .finish_non_exhaustive()
    }
}
