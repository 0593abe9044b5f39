//! `stream`: TCP session tracking and reassembly (Suricata's keys and defaults:
//! midstream pickup off, checksum validation on, a reassembly depth of 1mb).

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de::{self, ByteSize, yes};

fn default_depth() -> ByteSize {
    ByteSize::mib(1)
}

fn default_chunk() -> ByteSize {
    ByteSize(2560)
}

/// `stream.reassembly`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Reassembly {
    /// Bytes of each direction of a TCP stream that are reassembled and inspected;
    /// 0 = unlimited. Suricata's default: 1mb.
    #[serde(default = "default_depth")]
    pub depth: ByteSize,
    /// Stream rules inspect the client's acknowledged data in chunks of at least this
    /// many bytes; sooner when a transaction of that direction completes, the side
    /// closes, or the depth is reached. Suricata's default: 2560.
    #[serde(default = "default_chunk")]
    pub toserver_chunk_size: ByteSize,
    /// The same for the server's data. Suricata's default: 2560.
    #[serde(default = "default_chunk")]
    pub toclient_chunk_size: ByteSize,
    /// Suricata varies each chunk size at random by up to `randomize-chunk-range`
    /// percent (its default: yes, 10). Meerkat keeps the configured sizes exact, so a
    /// run's alerts are reproducible: `yes` is accepted and has no effect.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub randomize_chunk_size: bool,
    #[serde(default)]
    pub randomize_chunk_range: Option<u32>,
}

impl Default for Reassembly {
    fn default() -> Self {
        Reassembly {
            depth: default_depth(),
            toserver_chunk_size: default_chunk(),
            toclient_chunk_size: default_chunk(),
            randomize_chunk_size: false,
            randomize_chunk_range: None,
        }
    }
}

/// `stream`: TCP tracking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Stream {
    /// Pick up sessions whose handshake was not seen. Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub midstream: bool,
    /// Inline (IPS) stream mode: inspect data as it arrives rather than once acked
    /// (`auto`, Suricata's stock value, is inline only in IPS mode: off here).
    #[serde(default, deserialize_with = "de::flex_bool_or_auto")]
    pub inline: bool,
    /// Validate TCP checksums (`-k none` turns it off). Suricata's default: yes.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub checksum_validation: bool,
    /// Suricata's `async-oneside` (track sessions where only one direction is seen).
    /// Meerkat does not track one-sided sessions: `yes` is refused at load
    /// ([`validate`]); `no`, the default, is accepted.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub async_oneside: bool,
    #[serde(default)]
    pub reassembly: Reassembly,
}

impl Default for Stream {
    fn default() -> Self {
        Stream {
            midstream: false,
            inline: false,
            checksum_validation: true,
            async_oneside: false,
            reassembly: Reassembly::default(),
        }
    }
}

/// Refuses what Meerkat accepts but does not do: `async-oneside: yes`.
pub(crate) fn validate(s: &Stream) -> Result<(), ConfigError> {
    if s.async_oneside {
        return Err(ConfigError::Invalid(
            "stream.async-oneside: yes is not supported (Meerkat does not track one-sided \
             TCP sessions); remove the key or set it to no"
                .to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_oneside_yes_is_refused_by_name() {
        assert!(validate(&Stream::default()).is_ok());
        let s = Stream {
            async_oneside: true,
            ..Stream::default()
        };
        let e = validate(&s).unwrap_err().to_string();
        assert!(e.contains("stream.async-oneside"), "{e}");
    }
}
