//! Reaching the services of these contracts: a gRPC channel over a Unix socket (the
//! event socket, the workers' and the supervisor's control sockets), and, with the `tls`
//! feature, the TLS settings of the control API on TCP ([`tls`]).

use std::path::Path;

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

#[cfg(feature = "tls")]
pub mod tls;

/// A gRPC channel to the Unix socket at `path` (the URI is a placeholder: the connector
/// always dials the socket).
pub async fn unix_channel(path: &Path) -> Result<Channel, tonic::transport::Error> {
    let path = path.to_path_buf();
    Endpoint::from_static("http://meerkat.local")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move {
                Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(path).await?))
            }
        }))
        .await
}
