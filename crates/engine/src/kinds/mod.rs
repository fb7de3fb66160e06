//! The test kinds; each in its own file, listed once in [`REGISTRY`].

mod crr;
mod pacer;
mod rr;
mod stream;
mod udp_rr;

use crate::kind::Kind;

/// Every kind the engine can run.
pub static REGISTRY: &[&dyn Kind] = &[&stream::Stream, &rr::Rr, &crr::Crr, &udp_rr::UdpRr];

#[cfg(test)]
mod tests {
    use super::REGISTRY;

    #[test]
    fn wiring_matches_the_descriptors_transport() {
        for k in REGISTRY {
            assert_eq!(
                k.wiring().transport(),
                k.descriptor().transport,
                "{}",
                k.descriptor().name
            );
        }
    }
}
