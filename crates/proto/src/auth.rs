//! Pre-shared key authentication: the agent sends a random nonce, the controller answers with
//! HMAC-SHA256(key, domain ‖ nonce); the agent checks it in constant time.

use hmac::{Hmac, Mac};
use sha2::Sha256;

const DOMAIN: &[u8] = b"fathom-control-v1";

/// A fresh random nonce.
pub fn nonce() -> [u8; 32] {
    random()
}

/// Random bytes from the operating system.
pub fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).expect("the kernel's random source is unavailable");
    b
}

/// The controller's answer to a challenge.
pub fn answer(key: &[u8], nonce: &[u8; 32]) -> [u8; 32] {
    answer_in(DOMAIN, key, nonce)
}

/// True when `mac` answers `nonce` under `key`.
pub fn verify(key: &[u8], nonce: &[u8; 32], mac: &[u8; 32]) -> bool {
    verify_in(DOMAIN, key, nonce, mac)
}

/// The answer to a challenge of another conversation than the control channel (`domain` names
/// it), so that an answer given in one can never be replayed in another.
pub fn answer_in(domain: &[u8], key: &[u8], nonce: &[u8; 32]) -> [u8; 32] {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    m.update(domain);
    m.update(nonce);
    m.finalize().into_bytes().into()
}

/// True when `mac` answers `nonce` under `key` in the conversation `domain`.
pub fn verify_in(domain: &[u8], key: &[u8], nonce: &[u8; 32], mac: &[u8; 32]) -> bool {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    m.update(domain);
    m.update(nonce);
    m.verify_slice(mac).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_key_passes_wrong_key_fails() {
        let n = nonce();
        let mac = answer(b"secret", &n);
        assert!(verify(b"secret", &n, &mac));
        assert!(!verify(b"secreT", &n, &mac));
        assert!(!verify(b"secret", &nonce(), &mac));
        assert!(!verify_in(b"fathom-launch-rank-v1", b"secret", &n, &mac));
    }
}
