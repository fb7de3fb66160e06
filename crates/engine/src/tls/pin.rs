//! The connecting side's certificate check: the server must present exactly the certificate
//! the agent named over the authenticated control connection. Names, dates and authorities are
//! not checked (the agent's certificate is self-signed); the handshake signature is, so only
//! the holder of that certificate's key can complete it.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};
use std::sync::Arc;

/// The refusal of any other certificate.
#[derive(Debug)]
struct NotPinned;

/// Why the connecting side refused a certificate.
pub const REFUSED: &str = "the data port presented a certificate other than the one the agent \
     named over the control connection (a man in the middle, or another server on that port); \
     refused";

impl std::fmt::Display for NotPinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REFUSED)
    }
}

impl std::error::Error for NotPinned {}

/// Accepts one certificate, byte for byte.
#[derive(Debug)]
pub struct Pinned {
    cert: Vec<u8>,
    provider: Arc<CryptoProvider>,
}

impl Pinned {
    /// A verifier that accepts only `cert` (DER), checking signatures with `provider`.
    pub fn new(cert: Vec<u8>, provider: Arc<CryptoProvider>) -> Pinned {
        Pinned { cert, provider }
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if end_entity.as_ref() == self.cert.as_slice() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(Error::InvalidCertificate(CertificateError::Other(
                rustls::OtherError(Arc::new(NotPinned)),
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
