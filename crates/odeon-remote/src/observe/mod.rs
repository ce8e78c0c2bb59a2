//! A node's `GET /metrics` endpoint in the Prometheus text format
//! ([`NodeBuilder::metrics_http`](crate::NodeBuilder::metrics_http)); off unless asked
//! for. See `docs/observe.md` for every metric name.
//!
//! The page has two parts:
//! - the node's own counters ([`Metrics`]), rendered here with a `node` label:
//!   handshakes, gossip datagrams, migrations;
//! - everything recorded through the [`metrics`] facade, among them odeon's `odeon_*`
//!   metrics when odeon is built with its `observe` feature (this crate's `observe`
//!   feature turns it on) and the system with `SystemBuilder::observe(true)`. The first
//!   endpoint started in the process installs `metrics-exporter-prometheus`'s recorder
//!   as the facade's global recorder; if the application installed a recorder of its
//!   own before, that recorder keeps the facade's values and the page has only the
//!   node's part.

mod http;
mod render;
mod wire;

use std::net::SocketAddr;
use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

pub(crate) use http::MetricsServer;
#[cfg(feature = "observe")]
pub(crate) use wire::PeerTraffic;
pub(crate) use wire::{in_trace, outgoing, replied};

use crate::Metrics;

/// Bucket bounds of every facade histogram, in seconds: handler times run from
/// well under a microsecond to whatever a slow handler takes.
const HANDLER_BUCKETS: &[f64] = &[
    1e-6, 5e-6, 25e-6, 100e-6, 500e-6, 2.5e-3, 10e-3, 50e-3, 250e-3, 1.0,
];

/// The facade's recorder, if this crate installed it (`None`: another one was there).
fn facade() -> Option<&'static PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new();
            // Histograms (odeon's handler times) as Prometheus histograms, whose
            // buckets add up across nodes, rather than the default summaries.
            let builder = match builder.set_buckets(HANDLER_BUCKETS) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(error = %e, "metrics buckets refused");
                    PrometheusBuilder::new()
                }
            };
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            match metrics::set_global_recorder(recorder) {
                Ok(()) => Some(handle),
                Err(_) => {
                    tracing::info!(
                        "a metrics recorder is already installed: /metrics serves the node's \
                         counters only"
                    );
                    None
                }
            }
        })
        .as_ref()
}

/// The whole page: the node's counters, then the facade's.
pub(crate) fn page(node: &str, metrics: &Metrics) -> String {
    let mut out = render::node_metrics(node, metrics);
    if let Some(handle) = facade() {
        // Histograms' buckets and summaries age out unless someone drains them.
        handle.run_upkeep();
        out.push_str(&handle.render());
    }
    out
}

/// Installs the facade's recorder now, so that values recorded before the first
/// scrape are kept.
pub(crate) fn install() {
    let _ = facade();
}

/// Why the endpoint could not start.
pub(crate) fn bind_error(addr: SocketAddr, source: std::io::Error) -> crate::NodeError {
    crate::NodeError::MetricsBind { addr, source }
}
