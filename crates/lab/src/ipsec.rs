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

/// Checks that this kernel runs ESP with `alg`, in a throwaway namespace `probe_ns`.
pub fn probe(alg: Alg, probe_ns: &str) -> Result<()> {
    let (name, len, option) = alg.kernel();
    ip::run(Tool::Ip, None, false, &format!("netns add {probe_ns}\n"))?;
    let sa = format!(
        "xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 reqid 1 mode transport \
         aead {name} {} 128\n",
        random_key(len)?
    );
    let r = ip::run(Tool::Ip, Some(probe_ns), false, &sa);
    let _ = ip::run(Tool::Ip, None, false, &format!("netns del {probe_ns}\n"));
    r.map_err(|e| {
        let said = e.to_string();
        let lacks = if said.contains("type not found") {
            "ESP itself (the kernel is built without CONFIG_INET_ESP)".to_string()
        } else if said.contains("algorithm not found") {
            format!("the {name} AEAD ({option})")
        } else {
            said
        };
        Error::Ipsec(format!("--ipsec {}: this kernel lacks {lacks}", alg.name()))
    })?;
    Err(Error::Ipsec(format!(
        "--ipsec {}: this kernel has it, but fathom's lab does not set up ESP between hosts yet",
        alg.name()
    )))
}
