//! The check that this kernel runs ESP with a suite. It adds a security association with a
//! random key in a namespace of its own (made and deleted here), fed to `ip -batch` on its
//! standard input so that the key is never on a command line, and says what the kernel lacks
//! when it fails.

use std::fmt::Write;

use super::suite::{KernelAlg, Suite};
use crate::error::{Error, Result};
use crate::ip::{self, Tool};

/// `len` random bytes as hex, with `prefix` before them (`0x` for `ip xfrm`).
pub(crate) fn random_hex(len: usize, prefix: &str) -> Result<String> {
    let mut key = vec![0u8; len];
    getrandom::getrandom(&mut key).map_err(|e| Error::Command {
        command: "getrandom".into(),
        message: e.to_string(),
    })?;
    Ok(key.iter().fold(prefix.to_string(), |mut s, b| {
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

/// The suite's own SA, the name of its algorithm and the kernel option that builds it.
fn suite_state(suite: Suite) -> Result<(String, String, &'static str)> {
    Ok(match suite.kernel() {
        KernelAlg::Aead(name, len, option) => (
            state(
                0x100,
                &format!("aead {name} {} 128", random_hex(len, "0x")?),
            ),
            name.to_string(),
            option,
        ),
        KernelAlg::Classic(enc, enc_len, auth, auth_len, option) => (
            state(
                0x100,
                &format!(
                    "enc {enc} {} auth {auth} {}",
                    random_hex(enc_len, "0x")?,
                    random_hex(auth_len, "0x")?
                ),
            ),
            format!("{enc} with {auth}"),
            option,
        ),
    })
}

/// Checks that this kernel runs ESP with `suite`, in a throwaway namespace `probe_ns`: `Ok`
/// when it does, else [`Error::Ipsec`] naming what it lacks. The kernel looks the algorithm
/// up before ESP, so when the suite's algorithm is missing a second SA, with CBC and HMAC,
/// tells whether ESP is missing too.
pub fn probe(suite: Suite, probe_ns: &str) -> Result<()> {
    let (sa, name, option) = suite_state(suite)?;
    let classic = state(
        0x101,
        &format!(
            "enc cbc(aes) {} auth hmac(sha256) {}",
            random_hex(16, "0x")?,
            random_hex(32, "0x")?
        ),
    );
    ip::run(Tool::Ip, None, false, &format!("netns add {probe_ns}\n"))?;
    let first = try_state(probe_ns, &sa);
    let esp = match first {
        Some(Missing::Algorithm) => try_state(probe_ns, &classic),
        _ => None,
    };
    let _ = ip::run(Tool::Ip, None, false, &format!("netns del {probe_ns}\n"));
    let no_esp = "ESP itself (CONFIG_INET_ESP)";
    let lacks = match (first, esp) {
        (None, _) => return Ok(()),
        (Some(Missing::Esp), _) => no_esp.to_string(),
        (Some(Missing::Algorithm), Some(Missing::Esp)) => {
            format!("the {name} algorithm ({option}) and {no_esp}")
        }
        (Some(Missing::Algorithm), _) => format!("the {name} algorithm ({option})"),
        (Some(Missing::Other(said)), _) => said,
    };
    Err(Error::Ipsec(format!(
        "--ipsec {}: this kernel lacks {lacks}",
        suite.name()
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
        let (sa, name, _) = suite_state(Suite::Aes256Gcm).unwrap();
        assert_eq!(name, "rfc4106(gcm(aes))");
        assert!(sa.starts_with("xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 "));
        assert!(sa.ends_with(" 128\n"), "{sa}");
        let key = sa.split_whitespace().rev().nth(1).unwrap();
        assert_eq!(key.len(), 2 + 2 * 36, "{key}");
        assert_ne!(random_hex(36, "0x").unwrap(), random_hex(36, "0x").unwrap());
        let (sa, _, _) = suite_state(Suite::AesCbcSha256).unwrap();
        assert!(sa.contains(" enc cbc(aes) 0x"), "{sa}");
        assert!(sa.contains(" auth hmac(sha256) 0x"), "{sa}");
    }
}
