//! IPv4 subnets (`10.77.0.0/16`) and the host addresses inside them.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An IPv4 subnet whose host bits are zero, with a prefix of 1–30 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Subnet {
    network: Ipv4Addr,
    prefix_len: u8,
}

impl Subnet {
    /// The network address, e.g. `10.77.0.0`.
    pub fn network(&self) -> Ipv4Addr {
        self.network
    }

    /// The prefix length, e.g. 16.
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// The `n`-th host address (1-based): `10.77.0.0/16` gives `10.77.0.1` for 1. `None` when
    /// `n` is 0 or would reach the broadcast address.
    pub fn host(&self, n: u32) -> Option<Ipv4Addr> {
        (n >= 1 && n <= self.host_count()).then(|| Ipv4Addr::from(u32::from(self.network) + n))
    }

    /// Whether `addr` is a host address of this subnet (not the network or broadcast address).
    pub fn is_host(&self, addr: Ipv4Addr) -> bool {
        let offset = u32::from(addr).wrapping_sub(u32::from(self.network));
        u32::from(addr) & self.mask() == u32::from(self.network)
            && offset >= 1
            && offset <= self.host_count()
    }

    /// How many host addresses the subnet holds.
    fn host_count(&self) -> u32 {
        (1u32 << (32 - self.prefix_len)) - 2
    }

    fn mask(&self) -> u32 {
        u32::MAX << (32 - self.prefix_len)
    }
}

/// Why a subnet is refused: the subnet as written and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("subnet '{text}': {why}")]
pub struct SubnetError {
    /// The subnet as written.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

impl FromStr for Subnet {
    type Err = SubnetError;

    fn from_str(s: &str) -> Result<Self, SubnetError> {
        let bad = |why: &str| SubnetError {
            text: s.into(),
            why: why.into(),
        };
        let (addr, len) = s
            .split_once('/')
            .ok_or_else(|| bad("expected ADDRESS/PREFIX, e.g. 10.77.0.0/16"))?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| bad("not an IPv4 address"))?;
        let prefix_len: u8 = len
            .parse()
            .map_err(|_| bad("prefix length is not a number"))?;
        if !(1..=30).contains(&prefix_len) {
            return Err(bad("prefix length must be 1 to 30"));
        }
        let subnet = Subnet {
            network: addr,
            prefix_len,
        };
        let network = Ipv4Addr::from(u32::from(addr) & subnet.mask());
        if network != addr {
            return Err(bad(&format!(
                "host bits are set; did you mean {network}/{prefix_len}?"
            )));
        }
        Ok(subnet)
    }
}

impl fmt::Display for Subnet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix_len)
    }
}

impl Serialize for Subnet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Subnet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_numbers_hosts() {
        let s: Subnet = "10.77.0.0/16".parse().unwrap();
        assert_eq!(s.host(1), Some(Ipv4Addr::new(10, 77, 0, 1)));
        assert_eq!(s.host(256), Some(Ipv4Addr::new(10, 77, 1, 0)));
        assert_eq!(s.host(65534), Some(Ipv4Addr::new(10, 77, 255, 254)));
        assert_eq!(s.host(65535), None);
        assert_eq!(s.host(0), None);
        assert!(s.is_host(Ipv4Addr::new(10, 77, 3, 4)));
        assert!(!s.is_host(Ipv4Addr::new(10, 78, 0, 1)));
        assert!(!s.is_host(Ipv4Addr::new(10, 77, 255, 255)));
        assert_eq!(s.to_string(), "10.77.0.0/16");
    }

    #[test]
    fn rejects_bad_subnets() {
        for bad in [
            "10.77.0.0",
            "10.77.0.1/16",
            "10.77.0.0/31",
            "10.77.0.0/x",
            "nope/8",
        ] {
            assert!(bad.parse::<Subnet>().is_err(), "{bad}");
        }
        let err = "10.77.0.1/16".parse::<Subnet>().unwrap_err();
        assert!(
            err.to_string().contains("did you mean 10.77.0.0/16"),
            "{err}"
        );
    }
}
