//! Where a TLS test's random numbers, key exchanges and signatures come from: ring, which reads
//! every random byte from the kernel (`getrandom`), while the record cipher stays aws-lc's.
//!
//! aws-lc seeds its own random generator from CPU jitter entropy on its first use in a process:
//! 50–75 ms of CPU, paid by both ends of every TLS test in a fresh process (bench/RESULTS.md,
//! "A test's fixed cost and TLS, sixth session"). Only the handshake and the agent's
//! certificate draw random numbers; the record cipher (AES-GCM, ChaCha20-Poly1305) and the key
//! schedule draw none. So the provider takes ring's key exchange groups, signing keys and
//! random source, and the certificate is made with a ring key: aws-lc's generator is never
//! seeded, and every secret still comes from the operating system's CSPRNG.

use super::{TlsError, SERVER_NAME};
use rcgen::{
    CertificateParams, KeyPair, RemoteKeyPair, SignatureAlgorithm, PKCS_ECDSA_P256_SHA256,
};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_ASN1_SIGNING};
use rustls::crypto::{CryptoProvider, KeyProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::SigningKey;
use std::sync::Arc;

/// The crypto provider every session uses: aws-lc-rs's cipher suites and signature checks
/// (chosen by measurement: bench/RESULTS.md), with ring's key exchange, signing keys and
/// random numbers.
pub(super) fn provider() -> CryptoProvider {
    let ring = rustls::crypto::ring::default_provider();
    CryptoProvider {
        kx_groups: ring.kx_groups,
        secure_random: ring.secure_random,
        key_provider: &RingFirst,
        ..rustls::crypto::aws_lc_rs::default_provider()
    }
}

/// Loads a key with ring, else (a kind ring lacks, such as ECDSA P-521, which `--cert/--key`
/// took before ring signed) with aws-lc, whose generator is then seeded for that key's
/// signatures only.
#[derive(Debug)]
struct RingFirst;

impl KeyProvider for RingFirst {
    fn load_private_key(
        &self,
        key: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, rustls::Error> {
        let ring = rustls::crypto::ring::default_provider().key_provider;
        ring.load_private_key(key.clone_key()).or_else(|_| {
            rustls::crypto::aws_lc_rs::default_provider()
                .key_provider
                .load_private_key(key)
        })
    }
}

/// A new self-signed certificate for [`SERVER_NAME`] (ECDSA P-256) and its PKCS#8 key.
pub(super) fn self_signed() -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), TlsError> {
    let failed = |e: &dyn std::fmt::Display| TlsError::Generate(e.to_string());
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
        .map_err(|e| failed(&e))?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
        .map_err(|e| failed(&e))?;
    let signer =
        KeyPair::from_remote(Box::new(RingSigner { pair, rng })).map_err(|e| failed(&e))?;
    let cert = CertificateParams::new(vec![SERVER_NAME.to_string()])
        .and_then(|p| p.self_signed(&signer))
        .map_err(|e| failed(&e))?;
    Ok((
        cert.der().clone(),
        PrivateKeyDer::Pkcs8(pkcs8.as_ref().to_vec().into()),
    ))
}

/// Signs the certificate with ring, so that rcgen's own backend draws no random numbers.
struct RingSigner {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
}

impl RemoteKeyPair for RingSigner {
    fn public_key(&self) -> &[u8] {
        self.pair.public_key().as_ref()
    }

    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, rcgen::Error> {
        self.pair
            .sign(&self.rng, msg)
            .map(|s| s.as_ref().to_vec())
            .map_err(|_| rcgen::Error::RemoteKeyError)
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        &PKCS_ECDSA_P256_SHA256
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ring loads no ECDSA P-521 key; aws-lc does, as before ring signed.
    #[test]
    fn a_p521_key_still_loads() {
        let pair = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P521_SHA512).expect("a P-521 key");
        let der = PrivateKeyDer::Pkcs8(pair.serialize_der().into());
        assert!(provider().key_provider.load_private_key(der).is_ok());
    }

    #[test]
    fn the_certificate_is_signed_by_its_key_and_parses() {
        let (cert, key) = self_signed().expect("a certificate");
        let id = super::super::Identity {
            chain: vec![cert],
            key,
        };
        assert!(super::super::TlsEnd::server(&id, &Default::default()).is_ok());
    }
}
