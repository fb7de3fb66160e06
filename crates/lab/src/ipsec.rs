//! IPsec between lab hosts: the ESP algorithms `lab up --ipsec` names, and the check that this
//! kernel can run one. The check adds a security association with a random key in a namespace
//! of its own (made and deleted here), fed to `ip -batch` on its standard input so that the key
//! is never on a command line, and says what the kernel lacks when it fails.
//!
//! Setting up the hosts' associations and policies is not built: the kernels this project runs
//! on have no ESP (CONFIG_INET_ESP), so nothing here could test it; `lab up --ipsec` stops
//! with one line saying which is missing, and does not build a lab in clear.

use std::fmt::Write;

use crate::error::{Error, Result};
use crate::ip::{self, Tool};

/// An ESP AEAD algorithm, as `lab up --ipsec` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    /// AES-128 in GCM mode with a 16-byte tag (RFC 4106).
    Aes128Gcm,
    /// AES-256 in GCM mode with a 16-byte tag (RFC 4106).
    Aes256Gcm,
    /// AES-128 in CCM mode with a 16-byte tag (RFC 4309).
    Aes128Ccm,
}

impl Alg {
    /// Every algorithm, in the order they are listed to the user.
    pub const ALL: [Alg; 3] = [Alg::Aes128Gcm, Alg::Aes256Gcm, Alg::Aes128Ccm];

    /// Its name on the command line and in the topology file.
    pub fn name(self) -> &'static str {
        match self {
            Alg::Aes128Gcm => "aes-128-gcm",
            Alg::Aes256Gcm => "aes-256-gcm",
            Alg::Aes128Ccm => "aes-128-ccm",
        }
    }

    /// The algorithm called `name`, or an error listing the known ones.
    pub fn parse(name: &str) -> std::result::Result<Alg, String> {
        Alg::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                let all: Vec<_> = Alg::ALL.iter().map(|a| a.name()).collect();
                format!("'{name}' is not one of {}", all.join(", "))
            })
    }

    /// The kernel's name for it, its key length in bytes (the key, then the salt), and the
    /// kernel option that builds it.
    fn kernel(self) -> (&'static str, usize, &'static str) {
        match self {
            Alg::Aes128Gcm => ("rfc4106(gcm(aes))", 16 + 4, "CONFIG_CRYPTO_GCM"),
            Alg::Aes256Gcm => ("rfc4106(gcm(aes))", 32 + 4, "CONFIG_CRYPTO_GCM"),
            Alg::Aes128Ccm => ("rfc4309(ccm(aes))", 16 + 3, "CONFIG_CRYPTO_CCM"),
        }
    }
}

/// A random key of `len` bytes as the hex `ip xfrm` reads.
fn random_key(len: usize) -> Result<String> {
    let mut key = vec![0u8; len];
    getrandom::getrandom(&mut key).map_err(|e| Error::Command {
        command: "getrandom".into(),
        message: e.to_string(),
    })?;
    Ok(key.iter().fold(String::from("0x"), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    }))
}

/// The SA `ip xfrm` adds to test the kernel: ESP in transport mode with the algorithms `algs`.
fn state(spi: u32, algs: &str) -> String {
    format!(
        "xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi {spi:#x} reqid 1 mode transport \
         {algs}\n"
    )
}

/// What a failed `ip xfrm state add` says is missing: the algorithm, or ESP itself.
#[derive(Debug, PartialEq)]
enum Missing {
    Algorithm,
    Esp,
    Other(String),
}

fn missing(said: String) -> Missing {
    if said.contains("type not found") {
        Missing::Esp
    } else if said.contains("algorithm not found") {
        Missing::Algorithm
    } else {
        Missing::Other(said)
    }
}

/// Adds `sa` in namespace `ns`: what is missing when the kernel refuses it.
fn try_state(ns: &str, sa: &str) -> Option<Missing> {
    ip::run(Tool::Ip, Some(ns), false, sa)
        .err()
        .map(|e| missing(e.to_string()))
}

/// Checks that this kernel runs ESP with `alg`, in a throwaway namespace `probe_ns`. The kernel
/// looks the algorithm up before ESP, so when the AEAD is missing a second SA, with CBC and
/// HMAC, tells whether ESP is missing too.
pub fn probe(alg: Alg, probe_ns: &str) -> Result<()> {
    let (name, len, option) = alg.kernel();
    let aead = state(0x100, &format!("aead {name} {} 128", random_key(len)?));
    let classic = state(
        0x101,
        &format!(
            "enc cbc(aes) {} auth hmac(sha256) {}",
            random_key(16)?,
            random_key(32)?
        ),
    );
    ip::run(Tool::Ip, None, false, &format!("netns add {probe_ns}\n"))?;
    let first = try_state(probe_ns, &aead);
    let esp = match first {
        Some(Missing::Algorithm) => try_state(probe_ns, &classic),
        _ => None,
    };
    let _ = ip::run(Tool::Ip, None, false, &format!("netns del {probe_ns}\n"));
    let no_esp = "ESP itself (CONFIG_INET_ESP)";
    let lacks = match (first, esp) {
        (None, _) => {
            return Err(Error::Ipsec(format!(
                "--ipsec {}: this kernel has it, but fathom's lab does not set up ESP between \
                 hosts yet",
                alg.name()
            )))
        }
        (Some(Missing::Esp), _) => no_esp.to_string(),
        (Some(Missing::Algorithm), Some(Missing::Esp)) => {
            format!("the {name} AEAD ({option}) and {no_esp}")
        }
        (Some(Missing::Algorithm), _) => format!("the {name} AEAD ({option})"),
        (Some(Missing::Other(said)), _) => said,
    };
    Err(Error::Ipsec(format!(
        "--ipsec {}: this kernel lacks {lacks}",
        alg.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_refusals_name_what_is_missing() {
        let refusal = |m: &str| missing(format!("ip -batch -: {m}"));
        assert_eq!(refusal("Error: Requested type not found."), Missing::Esp);
        assert_eq!(
            refusal("Error: Requested AEAD algorithm not found."),
            Missing::Algorithm
        );
        assert!(matches!(
            refusal("Operation not permitted"),
            Missing::Other(_)
        ));
    }

    #[test]
    fn a_probe_sa_has_its_algorithms_and_a_fresh_key() {
        let sa = state(
            0x100,
            &format!("aead rfc4106(gcm(aes)) {} 128", random_key(36).unwrap()),
        );
        assert!(sa.starts_with("xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 "));
        assert!(sa.ends_with(" 128\n"), "{sa}");
        let key = sa.split_whitespace().rev().nth(1).unwrap();
        assert_eq!(key.len(), 2 + 2 * 36, "{key}");
        assert_ne!(random_key(36).unwrap(), random_key(36).unwrap());
    }
}
