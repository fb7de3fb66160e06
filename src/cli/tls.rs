//! The TLS options of `stream`, `rr` and `crr`: validated into the plan's [`TlsOptions`].

use super::error::{ArgsError, Sets};
use super::units::parse_io_size;
use fathom_proto::tls::{TlsCipher, TlsOptions, TlsVersion, MAX_RECORD};

/// Where the kernel lists the TCP upper-layer protocols it offers (kTLS is "tls").
const AVAILABLE_ULP: &str = "/proc/sys/net/ipv4/tcp_available_ulp";

/// The plan fields the TLS options set.
pub const SETS: &[Sets] = &[
    Sets::by(&["tls"], &["tls"]),
    Sets::by(&["tls.record"], &["tls_record"]),
];

/// `--tls` and its companions; any of them turns TLS on.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TlsArgs {
    /// Encrypt every data connection with TLS (rustls); the agent's certificate, named over
    /// the authenticated control connection, is the only one accepted.
    #[arg(long)]
    pub tls: bool,
    /// TLS protocol version: 1.3 (default) or 1.2.
    #[arg(long, value_name = "1.2|1.3")]
    pub tls_version: Option<String>,
    /// The one TLS cipher offered: aes-128-gcm, aes-256-gcm or chacha20-poly1305 (default: the
    /// library's order, AES-256-GCM first).
    #[arg(long, value_name = "CIPHER")]
    pub cipher: Option<String>,
    /// Largest plaintext per TLS record (64 to 16K; default 16K).
    #[arg(long, value_parser = parse_io_size, value_name = "SIZE")]
    pub tls_record: Option<u32>,
    /// Hand the TLS record layer to the kernel (kTLS) after the handshake.
    #[arg(long)]
    pub ktls: bool,
    /// Run the test with TLS and in clear, alternating, and report TLS's cost as ratios.
    #[arg(long)]
    pub compare_clear: bool,
}

impl TlsArgs {
    /// The plan's TLS options (`None`: clear); errors name the flag.
    pub fn options(&self) -> Result<Option<TlsOptions>, ArgsError> {
        let on = self.tls
            || self.tls_version.is_some()
            || self.cipher.is_some()
            || self.tls_record.is_some()
            || self.ktls
            || self.compare_clear;
        if !on {
            return Ok(None);
        }
        let version = match self.tls_version.as_deref() {
            None | Some("1.3") => TlsVersion::V13,
            Some("1.2") => TlsVersion::V12,
            Some(v) => {
                return Err(ArgsError::flag(
                    "--tls-version",
                    format!("'{v}' is not 1.2 or 1.3"),
                ))
            }
        };
        let cipher = self
            .cipher
            .as_deref()
            .map(|c| {
                TlsCipher::parse(c).ok_or_else(|| {
                    let all: Vec<_> = TlsCipher::ALL.iter().map(|c| c.name()).collect();
                    ArgsError::flag(
                        "--cipher",
                        format!("'{c}' is not one of {}", all.join(", ")),
                    )
                })
            })
            .transpose()?;
        Ok(Some(TlsOptions {
            version,
            cipher,
            record: self.tls_record.unwrap_or(MAX_RECORD),
        }))
    }

    /// With `--ktls`: the runtime check that the kernel offers kTLS (an error says why not).
    pub fn check_ktls(&self) -> Result<(), ArgsError> {
        if !self.ktls {
            return Ok(());
        }
        let ulps = std::fs::read_to_string(AVAILABLE_ULP).unwrap_or_default();
        if !ulps.split_whitespace().any(|u| u == "tls") {
            return Err(ArgsError::flag(
                "--ktls",
                format!(
                    "this kernel offers no kTLS ({AVAILABLE_ULP} lists '{}', no 'tls'; \
                     load the tls module where it exists, or run without --ktls)",
                    ulps.trim()
                ),
            ));
        }
        Err(ArgsError::flag(
            "--ktls",
            "this kernel offers kTLS, but fathom does not hand sessions to it yet; \
             run without --ktls",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        assert_eq!(TlsArgs::default().options().unwrap(), None);
        let a = TlsArgs {
            cipher: Some("chacha20-poly1305".into()),
            tls_version: Some("1.2".into()),
            ..Default::default()
        };
        let o = a.options().unwrap().unwrap();
        assert_eq!(o.version, TlsVersion::V12);
        assert_eq!(o.cipher, Some(TlsCipher::Chacha20Poly1305));
        let bogus = TlsArgs {
            cipher: Some("bogus".into()),
            ..Default::default()
        };
        assert!(bogus
            .options()
            .unwrap_err()
            .to_string()
            .starts_with("--cipher: 'bogus'"));
    }
}
