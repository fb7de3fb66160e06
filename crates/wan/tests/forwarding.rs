//! The emulator carries frames both ways, counts them, drops what does not fit the egress MTU,
//! and takes new parameters while it runs. Needs root (network namespaces).

mod common;

use std::time::Duration;

use common::{round_trips, Lab};
use fathom_wan::{Direction, LinkParams};

#[test]
fn forwards_both_ways_and_counts() {
    require_root!();
    let lab = Lab::new("both");
    let (forwarder, _echo) = lab.forwarding("", "");
    let rtts = round_trips(&lab, 20, Duration::from_secs(1));
    assert_eq!(rtts.len(), 20, "every probe came back");
    let counters = forwarder.stop().expect("clean stop");
    for dir in [counters.a_to_b, counters.b_to_a] {
        assert!(dir.forwarded >= 20, "{dir:?}");
        assert_eq!(dir.received, dir.forwarded, "nothing dropped: {dir:?}");
        assert_eq!(dir.delayed, 0);
    }
    let json = serde_json::to_value(counters).unwrap();
    assert!(json["a_to_b"]["dropped_queue"].is_u64());
}

#[test]
fn parameters_change_while_running() {
    require_root!();
    let lab = Lab::new("live");
    let (forwarder, _echo) = lab.forwarding("", "");
    let before = *round_trips(&lab, 5, Duration::from_secs(1))
        .iter()
        .min()
        .unwrap();
    assert!(before < Duration::from_millis(5), "{before:?}");
    let delayed: LinkParams = "delay=15ms".parse().unwrap();
    forwarder.set_params(Direction::AToB, delayed.clone());
    forwarder.set_params(Direction::BToA, delayed.clone());
    assert_eq!(forwarder.params(Direction::AToB), delayed);
    std::thread::sleep(Duration::from_millis(100));
    let after = *round_trips(&lab, 5, Duration::from_secs(1))
        .iter()
        .min()
        .unwrap();
    assert!(
        after >= Duration::from_millis(30) && after < Duration::from_millis(31),
        "{after:?}"
    );
    forwarder.set_params(Direction::AToB, "loss=100%".parse().unwrap());
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        round_trips(&lab, 3, Duration::from_millis(200)).is_empty(),
        "all lost"
    );
    let counters = forwarder.stop().unwrap();
    assert!(counters.a_to_b.dropped_loss >= 3, "{:?}", counters.a_to_b);
}

#[test]
fn frames_larger_than_the_egress_mtu_are_counted_as_oversize() {
    require_root!();
    let lab = Lab::new("big");
    // A and its router end take 3000-byte frames; B's side stays at 1500.
    common::run(&["ip", "-n", &lab.a, "link", "set", "eth0", "mtu", "3000"]);
    common::run(&["ip", "-n", &lab.r, "link", "set", "ra", "mtu", "3000"]);
    let (forwarder, _echo) = lab.forwarding("", "");
    let socket = lab.socket(false, 0);
    let target = format!("{}:{}", common::B_ADDR, common::ECHO_PORT);
    for _ in 0..5 {
        socket.send_to(&[0u8; 2500], &target).unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    let counters = forwarder.stop().unwrap();
    assert_eq!(counters.a_to_b.dropped_oversize, 5, "{:?}", counters.a_to_b);
}
