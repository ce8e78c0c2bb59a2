//! The node's own counters ([`Metrics`]) in the Prometheus text format.

use std::fmt::Write;

use crate::Metrics;

/// One metric family: `# HELP`, `# TYPE`, then its samples.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value, escaped as the text format wants (`\`, `"`, newline).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

pub(super) fn node_metrics(node: &str, m: &Metrics) -> String {
    let node = escape(node);
    let mut out = String::new();
    let links = m.links();
    family(
        &mut out,
        "odeon_remote_handshakes_total",
        "counter",
        "Incoming link handshakes by outcome (accepted, refused, shed).",
    );
    for (outcome, n) in [
        ("accepted", links.accepted()),
        ("refused", links.refused()),
        ("shed", links.shed()),
    ] {
        let _ = writeln!(
            out,
            "odeon_remote_handshakes_total{{node=\"{node}\",outcome=\"{outcome}\"}} {n}"
        );
    }
    family(
        &mut out,
        "odeon_remote_accept_errors_total",
        "counter",
        "Times accepting a link connection failed.",
    );
    let _ = writeln!(
        out,
        "odeon_remote_accept_errors_total{{node=\"{node}\"}} {}",
        links.accept_errors()
    );
    let gossip = m.gossip();
    family(
        &mut out,
        "odeon_remote_gossip_datagrams_total",
        "counter",
        "Gossip datagrams received by outcome (accepted, rejected, malformed, oversized).",
    );
    for (outcome, n) in [
        ("accepted", gossip.accepted()),
        ("rejected", gossip.rejected()),
        ("malformed", gossip.malformed()),
        ("oversized", gossip.oversized()),
    ] {
        let _ = writeln!(
            out,
            "odeon_remote_gossip_datagrams_total{{node=\"{node}\",outcome=\"{outcome}\"}} {n}"
        );
    }
    let mig = m.migrations();
    family(
        &mut out,
        "odeon_remote_migrations_total",
        "counter",
        "Live migrations this node was the source of, by outcome (moved, refused, failed).",
    );
    for (outcome, n) in [
        ("moved", mig.moved()),
        ("refused", mig.refused()),
        ("failed", mig.failed()),
    ] {
        let _ = writeln!(
            out,
            "odeon_remote_migrations_total{{node=\"{node}\",outcome=\"{outcome}\"}} {n}"
        );
    }
    family(
        &mut out,
        "odeon_remote_forwarded_frames_total",
        "counter",
        "Messages forwarded to actors that moved on.",
    );
    let _ = writeln!(
        out,
        "odeon_remote_forwarded_frames_total{{node=\"{node}\"}} {}",
        mig.forwarded_frames()
    );
    family(
        &mut out,
        "odeon_remote_migration_seconds",
        "histogram",
        "How long committed moves took, freeze to commit, at the source.",
    );
    let h = mig.durations();
    let mut cumulative = 0;
    for (bound, n) in h.buckets() {
        cumulative += n;
        let le = bound.map_or_else(|| "+Inf".to_owned(), |b| b.as_secs_f64().to_string());
        let _ = writeln!(
            out,
            "odeon_remote_migration_seconds_bucket{{node=\"{node}\",le=\"{le}\"}} {cumulative}"
        );
    }
    // The mean is whole microseconds: the sum is exact to `count` µs.
    let sum = h.mean().map_or(0.0, |m| m.as_secs_f64() * h.count() as f64);
    let _ = writeln!(
        out,
        "odeon_remote_migration_seconds_sum{{node=\"{node}\"}} {sum}"
    );
    let _ = writeln!(
        out,
        "odeon_remote_migration_seconds_count{{node=\"{node}\"}} {}",
        h.count()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
