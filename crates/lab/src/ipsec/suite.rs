//! The cipher suites `lab up --ipsec` names: for each, the ESP and IKE proposals strongSwan
//! negotiates and the kernel algorithms the ESP probe tries.

use serde::{Deserialize, Serialize};

/// An ESP cipher suite, as `lab up --ipsec` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Suite {
    /// AES-128 in GCM mode with a 16-byte tag (RFC 4106).
    #[serde(rename = "aes-128-gcm")]
    Aes128Gcm,
    /// AES-256 in GCM mode with a 16-byte tag (RFC 4106).
    #[serde(rename = "aes-256-gcm")]
    Aes256Gcm,
    /// ChaCha20 with Poly1305 (RFC 7634).
    #[serde(rename = "chacha20-poly1305")]
    Chacha20Poly1305,
    /// AES-128 in CBC mode with HMAC-SHA-256-128 (RFC 3602, RFC 4868).
    #[serde(rename = "aes-cbc+sha256")]
    AesCbcSha256,
}

/// How the kernel probe names a suite's ESP algorithms: `ip xfrm` arguments with the key
/// lengths (bytes) to fill in, and the kernel option that builds the algorithm.
pub(crate) enum KernelAlg {
    /// An AEAD: its name and key length (the key, then the salt).
    Aead(&'static str, usize, &'static str),
    /// A cipher and an authenticator, each with its key length.
    Classic(&'static str, usize, &'static str, usize, &'static str),
}

impl Suite {
    /// Every suite, in the order they are listed to the user.
    pub const ALL: [Suite; 4] = [
        Suite::Aes128Gcm,
        Suite::Aes256Gcm,
        Suite::Chacha20Poly1305,
        Suite::AesCbcSha256,
    ];

    /// Its name on the command line and in the topology file.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Aes128Gcm => "aes-128-gcm",
            Suite::Aes256Gcm => "aes-256-gcm",
            Suite::Chacha20Poly1305 => "chacha20-poly1305",
            Suite::AesCbcSha256 => "aes-cbc+sha256",
        }
    }

    /// The suite called `name`, or an error listing the known ones.
    pub fn parse(name: &str) -> std::result::Result<Suite, UnknownName> {
        Suite::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| UnknownName::new(name, Suite::ALL.iter().map(|a| a.name())))
    }

    /// The ESP proposal in swanctl.conf's syntax.
    pub(crate) fn esp_proposal(self) -> &'static str {
        match self {
            Suite::Aes128Gcm => "aes128gcm16",
            Suite::Aes256Gcm => "aes256gcm16",
            Suite::Chacha20Poly1305 => "chacha20poly1305",
            Suite::AesCbcSha256 => "aes128-sha256",
        }
    }

    /// The IKE proposal: the same cipher, PRF HMAC-SHA-256, X25519.
    pub(crate) fn ike_proposal(self) -> String {
        match self {
            Suite::AesCbcSha256 => "aes128-sha256-x25519".to_string(),
            aead => format!("{}-prfsha256-x25519", aead.esp_proposal()),
        }
    }

    /// The kernel's algorithms for the ESP probe.
    pub(crate) fn kernel(self) -> KernelAlg {
        match self {
            Suite::Aes128Gcm => KernelAlg::Aead("rfc4106(gcm(aes))", 16 + 4, "CONFIG_CRYPTO_GCM"),
            Suite::Aes256Gcm => KernelAlg::Aead("rfc4106(gcm(aes))", 32 + 4, "CONFIG_CRYPTO_GCM"),
            Suite::Chacha20Poly1305 => KernelAlg::Aead(
                "rfc7539esp(chacha20,poly1305)",
                32 + 4,
                "CONFIG_CRYPTO_CHACHA20POLY1305",
            ),
            Suite::AesCbcSha256 => {
                KernelAlg::Classic("cbc(aes)", 16, "hmac(sha256)", 32, "CONFIG_CRYPTO_CBC")
            }
        }
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is none of the known ones (a cipher suite's, a data path's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{name}' is not one of {known}")]
pub struct UnknownName {
    /// The name given.
    pub name: String,
    /// The known names, comma-separated.
    pub known: String,
}

impl UnknownName {
    /// `name`, which is none of `known`.
    pub fn new<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> UnknownName {
        UnknownName {
            name: name.to_string(),
            known: known.into_iter().collect::<Vec<_>>().join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suite_parses_from_its_name_and_an_unknown_one_lists_them() {
        for s in Suite::ALL {
            assert_eq!(Suite::parse(s.name()), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
        }
        let err = Suite::parse("des").unwrap_err().to_string();
        assert_eq!(
            err,
            "'des' is not one of aes-128-gcm, aes-256-gcm, chacha20-poly1305, aes-cbc+sha256"
        );
    }

    #[test]
    fn proposals_name_the_suites_cipher_for_ike_and_esp() {
        assert_eq!(Suite::Aes256Gcm.esp_proposal(), "aes256gcm16");
        assert_eq!(
            Suite::Chacha20Poly1305.ike_proposal(),
            "chacha20poly1305-prfsha256-x25519"
        );
        assert_eq!(Suite::AesCbcSha256.ike_proposal(), "aes128-sha256-x25519");
    }
}
