//! The Prometheus text endpoint (`control.metrics-listen`, `GET /metrics`): every
//! counter of every role, read from the counter pages.

use std::time::Duration;

use meerkat_runtime::counters;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Page, SharedRef, read_counters};

/// Prometheus text of every counter. Names are stable: `meerkat_` + the counter name with
/// the worker index moved to a `worker` label (the only label, bounded by
/// `detect.workers`); every dot or dash becomes `_`.
pub fn prometheus_text(pages: &[Page]) -> String {
    use std::collections::BTreeMap;
    use std::fmt::Write;
    // name -> [(labels, value)]
    let mut metrics: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for (_, _, counters) in pages {
        for (name, value) in counters {
            let (metric, label) = match counters::split_worker(name) {
                Some((metric, n)) => (metric, format!("worker=\"{n}\"")),
                None => (name.clone(), String::new()),
            };
            let metric: String = format!("meerkat_{metric}")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            metrics.entry(metric).or_default().push((label, *value));
        }
    }
    let mut out = String::new();
    for (name, samples) in metrics {
        let _ = writeln!(out, "# TYPE {name} untyped");
        for (label, value) in samples {
            if label.is_empty() {
                let _ = writeln!(out, "{name} {value}");
            } else {
                let _ = writeln!(out, "{name}{{{label}}} {value}");
            }
        }
    }
    out
}

/// Serves `GET /metrics` (HTTP/1.0 style: one request per connection).
pub(super) async fn serve_metrics(listener: tokio::net::TcpListener, shared: SharedRef) {
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut n = 0;
            // Read the request head (bounded; a slow client gets 5 s).
            let read = tokio::time::timeout(Duration::from_secs(5), async {
                while n < buf.len() {
                    let m = sock.read(&mut buf[n..]).await?;
                    if m == 0 {
                        break;
                    }
                    n += m;
                    if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                Ok::<_, std::io::Error>(())
            })
            .await;
            if !matches!(read, Ok(Ok(()))) {
                return;
            }
            let head = String::from_utf8_lossy(&buf[..n]);
            let line = head.lines().next().unwrap_or("");
            let mut it = line.split_whitespace();
            let (method, path) = (it.next().unwrap_or(""), it.next().unwrap_or(""));
            let (status, ctype, body) = if method != "GET" {
                (
                    "405 Method Not Allowed",
                    "text/plain",
                    "GET only\n".to_string(),
                )
            } else if path != "/metrics" && !path.starts_with("/metrics?") {
                ("404 Not Found", "text/plain", "see /metrics\n".to_string())
            } else {
                (
                    "200 OK",
                    "text/plain; version=0.0.4",
                    prometheus_text(&read_counters(&shared)),
                )
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
            let _ = sock.shutdown().await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_names_are_stable_and_labels_bounded() {
        let pages = vec![
            (
                "detect-0".to_string(),
                1,
                vec![
                    ("detect.0.packets".to_string(), 5),
                    ("detect.0.alerts".to_string(), 2),
                ],
            ),
            (
                "detect-1".to_string(),
                2,
                vec![("detect.1.packets".to_string(), 7)],
            ),
            (
                "capture".to_string(),
                3,
                vec![
                    ("capture.packets".to_string(), 12),
                    ("capture.worker.1.packets".to_string(), 7),
                ],
            ),
            (
                "eve-writer".to_string(),
                4,
                vec![("eve.events.alert".to_string(), 2)],
            ),
        ];
        let text = prometheus_text(&pages);
        assert!(text.contains("# TYPE meerkat_detect_packets untyped\n"));
        assert!(text.contains("meerkat_detect_packets{worker=\"0\"} 5\n"));
        assert!(text.contains("meerkat_detect_packets{worker=\"1\"} 7\n"));
        assert!(text.contains("meerkat_capture_packets 12\n"));
        assert!(text.contains("meerkat_capture_worker_packets{worker=\"1\"} 7\n"));
        assert!(text.contains("meerkat_eve_events_alert 2\n"));
        // One TYPE line per metric, not per worker.
        assert_eq!(text.matches("# TYPE meerkat_detect_packets ").count(), 1);
    }
}
