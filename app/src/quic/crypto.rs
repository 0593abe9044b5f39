//! Removing the protection of QUIC Initial packets (RFC 9001 section 5; RFC 9369 for
//! version 2): keys derived from the client's first Destination Connection ID and the
//! version's initial salt with HKDF-SHA256, header protection with AES-128, the
//! payload sealed with AES-128-GCM. Everything is `ring`'s.

use ring::aead::quic::{AES_128, HeaderProtectionKey};
use ring::aead::{AES_128_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use ring::hkdf::{HKDF_SHA256, KeyType, Prk, Salt};

use super::parser::{V2, Version};

/// AES-128 key, GCM tag and header protection sample length.
const KEY_LEN: usize = 16;
const IV_LEN: usize = 12;
const TAG_LEN: usize = 16;
const SAMPLE_LEN: usize = 16;
/// The sample starts this far past the packet number's first byte (RFC 9001 5.4.2:
/// the packet number is taken to be 4 bytes long).
const PN_MAX_LEN: usize = 4;

/// The initial salt of a version with Initial packet protection, if Meerkat knows it.
fn salt(version: Version) -> Option<[u8; 20]> {
    let hex = match version {
        // RFC 9001 5.2, and the last drafts (33, 34) that kept it.
        1 | 0xff00_0021..=0xff00_0022 => "38762cf7f55934b34d179ae6a4c80cadccbb7f0a",
        // RFC 9369 3.3.1.
        V2 => "0dede3def700a6db819381be6e269dcbf9bd2ed9",
        // draft-ietf-quic-tls-29 to -32.
        0xff00_001d..=0xff00_0020 => "afbfec289993d24c9e9786f19c6111e04390a899",
        // draft-ietf-quic-tls-23 to -28, and Facebook's mvfst draft-22 variant.
        0xfaceb002 | 0xff00_0017..=0xff00_001c => "c3eef712c72ebb5a11a7d2432bb46365bef9f502",
        // Google QUIC Q050 (TLS-less, but its Initials are protected the same way).
        0x5130_3530 => "504574efd066fe2f9d945cfcdbd3a7f0d3b56b45",
        _ => return None,
    };
    let mut out = [0u8; 20];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// An HKDF output length for `ring`.
struct Len(usize);

impl KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// TLS 1.3's HKDF-Expand-Label with an empty context (RFC 8446 7.1).
fn expand_label(prk: &Prk, label: &[u8], out: &mut [u8]) -> Option<()> {
    let len = u16::try_from(out.len()).ok()?.to_be_bytes();
    let label_len = [u8::try_from(6 + label.len()).ok()?];
    let info: [&[u8]; 5] = [&len, &label_len, b"tls13 ", label, &[0]];
    prk.expand(&info, Len(out.len())).ok()?.fill(out).ok()
}

/// One direction's Initial keys.
pub struct DirKeys {
    packet: LessSafeKey,
    iv: [u8; IV_LEN],
    header: HeaderProtectionKey,
}

impl std::fmt::Debug for DirKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DirKeys")
    }
}

impl DirKeys {
    fn new(secret: &[u8], version: Version) -> Option<DirKeys> {
        let prk = Prk::new_less_safe(HKDF_SHA256, secret);
        let (key_l, iv_l, hp_l): (&[u8], &[u8], &[u8]) = if version == V2 {
            (b"quicv2 key", b"quicv2 iv", b"quicv2 hp")
        } else {
            (b"quic key", b"quic iv", b"quic hp")
        };
        let mut key = [0u8; KEY_LEN];
        let mut iv = [0u8; IV_LEN];
        let mut hp = [0u8; KEY_LEN];
        expand_label(&prk, key_l, &mut key)?;
        expand_label(&prk, iv_l, &mut iv)?;
        expand_label(&prk, hp_l, &mut hp)?;
        Some(DirKeys {
            packet: LessSafeKey::new(UnboundKey::new(&AES_128_GCM, &key).ok()?),
            iv,
            header: HeaderProtectionKey::new(&AES_128, &hp).ok()?,
        })
    }
}

/// The Initial keys of a connection: the client's and the server's.
#[derive(Debug)]
pub struct Keys {
    pub client: DirKeys,
    pub server: DirKeys,
}

impl Keys {
    /// The keys of `version`'s Initials for the client's first Destination Connection
    /// ID `dcid`; `None` for a version whose salt Meerkat does not know.
    pub fn initial(version: Version, dcid: &[u8]) -> Option<Keys> {
        let salt = salt(version)?;
        let initial = Salt::new(HKDF_SHA256, &salt).extract(dcid);
        let mut client = [0u8; 32];
        let mut server = [0u8; 32];
        expand_label(&initial, b"client in", &mut client)?;
        expand_label(&initial, b"server in", &mut server)?;
        Some(Keys {
            client: DirKeys::new(&client, version)?,
            server: DirKeys::new(&server, version)?,
        })
    }
}

/// Unprotects one long-header packet whose protected packet number starts at `pn_at`
/// of `packet` and whose payload (packet number included) ends at `end`: the
/// plaintext frames, or `None` when the packet is too short or does not authenticate.
pub fn open(keys: &DirKeys, packet: &[u8], pn_at: usize, end: usize) -> Option<Vec<u8>> {
    let sample_at = pn_at.checked_add(PN_MAX_LEN)?;
    let sample = packet.get(sample_at..sample_at.checked_add(SAMPLE_LEN)?)?;
    if end > packet.len() || end < sample_at + SAMPLE_LEN {
        return None;
    }
    let mask = keys.header.new_mask(sample).ok()?;
    let first = packet.first()? ^ (mask[0] & 0x0f);
    let pn_len = usize::from(first & 0x03) + 1;
    // The header as it was before protection: the first byte and the packet number
    // unmasked.
    let mut aad = packet.get(..pn_at + pn_len)?.to_vec();
    aad[0] = first;
    let mut pn: u64 = 0;
    for i in 0..pn_len {
        let b = aad[pn_at + i] ^ mask[1 + i];
        aad[pn_at + i] = b;
        pn = (pn << 8) | u64::from(b);
    }
    let mut nonce = keys.iv;
    for (n, p) in nonce[IV_LEN - 8..].iter_mut().zip(pn.to_be_bytes()) {
        *n ^= p;
    }
    let mut payload = packet.get(pn_at + pn_len..end)?.to_vec();
    if payload.len() < TAG_LEN {
        return None;
    }
    let plain = keys
        .packet
        .open_in_place(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(&aad[..]),
            &mut payload,
        )
        .ok()?
        .len();
    payload.truncate(plain);
    Some(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    /// RFC 9001 appendix A.1: the client's Initial keys for DCID 8394c8f03e515708.
    #[test]
    fn rfc9001_initial_keys() {
        let dcid = unhex("8394c8f03e515708");
        let initial = Salt::new(HKDF_SHA256, &salt(1).unwrap()).extract(&dcid);
        let mut client = [0u8; 32];
        expand_label(&initial, b"client in", &mut client).unwrap();
        assert_eq!(
            client.to_vec(),
            unhex("c00cf151ca5be075ed0ebfb5c80323c4 2d6b7db67881289af4008f1f6c357aea")
        );
        let prk = Prk::new_less_safe(HKDF_SHA256, &client);
        let mut iv = [0u8; 12];
        expand_label(&prk, b"quic iv", &mut iv).unwrap();
        assert_eq!(iv.to_vec(), unhex("fa044b2f42a3fd3b46fb255c"));
        assert!(Keys::initial(1, &dcid).is_some());
        assert!(Keys::initial(0x1234_5678, &dcid).is_none());
        assert!(Keys::initial(V2, &dcid).is_some());
    }

    /// RFC 9001 appendix A.3: the server's Initial (ServerHello in a CRYPTO frame,
    /// an ACK) unprotected with the server keys of the client's DCID.
    #[test]
    fn rfc9001_server_initial() {
        let packet = unhex(
            "cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a
             5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3
             dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84
             022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4
             2158407dd074ee",
        );
        let keys = Keys::initial(1, &unhex("8394c8f03e515708")).unwrap();
        // 1 + 4 + 1 + 0 + 1 + 8 + 1 (token length) + 2 (length) = 18.
        let plain = open(&keys.server, &packet, 18, packet.len()).unwrap();
        assert_eq!(plain[..9], unhex("02000000000600405a")[..]);
        assert!(open(&keys.client, &packet, 18, packet.len()).is_none());
        assert!(open(&keys.server, &packet[..30], 18, 30).is_none());
    }
}
