//! The parameter strings' parser and printer: every key, the errors, the round trips.

use super::*;

#[test]
fn comma_and_space_separated_forms_agree() {
    let commas: LinkParams = "delay=100ms,jitter=2ms,loss=0.1%".parse().unwrap();
    let spaces: LinkParams = "delay=100ms jitter=2ms  loss=0.1%".parse().unwrap();
    assert_eq!(commas, spaces);
    assert_eq!(commas.delay, Duration::from_millis(100));
    assert_eq!(commas.jitter, Duration::from_millis(2));
    assert_eq!(commas.loss, LossModel::Random(0.001));
}

#[test]
fn every_key() {
    let p: LinkParams =
        "delay=50ms,jitter=2ms,loss=0.1%,rate=1G,burst=64K,queue=500p,reorder,seed=7"
            .parse()
            .unwrap();
    assert_eq!(p.rate_bps, Some(1_000_000_000));
    assert_eq!(p.burst_bytes, 65536);
    assert_eq!(p.queue_limit, QueueLimit::Packets(500));
    assert!(p.reorder);
    assert_eq!(p.seed, 7);
    assert_eq!(
        "queue=256KB".parse::<LinkParams>().unwrap().queue_limit,
        QueueLimit::Bytes(262144)
    );
    assert_eq!(
        "queue=64".parse::<LinkParams>().unwrap().queue_limit,
        QueueLimit::Packets(64)
    );
    assert!(!"reorder=off".parse::<LinkParams>().unwrap().reorder);
}

#[test]
fn empty_string_is_a_plain_wire() {
    assert_eq!("".parse::<LinkParams>().unwrap(), LinkParams::default());
}

#[test]
fn gilbert_elliott_defaults_as_netem() {
    let p: LinkParams = "loss=ge:1%:30%".parse().unwrap();
    assert_eq!(
        p.loss,
        LossModel::GilbertElliott {
            p: 0.01,
            r: 0.3,
            loss_bad: 1.0,
            loss_good: 0.0
        }
    );
    let p: LinkParams = "loss=ge:1%:30%:50%:0.1%".parse().unwrap();
    assert_eq!(
        p.loss,
        LossModel::GilbertElliott {
            p: 0.01,
            r: 0.3,
            loss_bad: 0.5,
            loss_good: 0.001
        }
    );
}

#[test]
fn errors_name_the_key_and_value() {
    let err = |s: &str| s.parse::<LinkParams>().unwrap_err().to_string();
    assert_eq!(err("delay=50"), "delay: '50' needs a unit: ns, us, ms or s");
    assert!(err("rate=10MBps").starts_with("rate: '10MBps' is ambiguous"));
    assert!(err("loss=1").starts_with("loss: '1' needs a '%'"));
    assert!(err("loss=ge:1%").starts_with("loss: 'ge:1%' is not a Gilbert-Elliott"));
    assert!(err("queue=0p").starts_with("queue: '0p' must be above zero"));
    assert!(err("dealy=5ms").starts_with("unknown key 'dealy'"));
    assert_eq!(err("delay=1ms delay=2ms"), "'delay' is given twice");
    assert_eq!(err("delay"), "'delay' needs a value, as in delay=...");
    assert!(err("seed=x").starts_with("seed: 'x' is not a whole number"));
}

#[test]
fn display_parses_back() {
    for text in [
        "",
        "delay=50ms,jitter=1500us,loss=0.5%,rate=100M,queue=256KB,reorder,seed=9",
        "loss=ge:1%:30%",
        "rate=1500K,burst=3000",
    ] {
        let p: LinkParams = text.parse().unwrap();
        assert_eq!(
            p.to_string().parse::<LinkParams>().unwrap(),
            p,
            "{text} -> {p}"
        );
    }
}

#[test]
fn updated_changes_only_the_keys_written() {
    let base: LinkParams = "delay=50ms,rate=1G,loss=1%".parse().unwrap();
    let next = base.updated("delay=100ms jitter=2ms").unwrap();
    assert_eq!(
        next,
        "delay=100ms,jitter=2ms,rate=1G,loss=1%".parse().unwrap()
    );
    assert_eq!(base.updated("").unwrap(), base);
    let err = base.updated("delay=1").unwrap_err().to_string();
    assert!(err.starts_with("delay: '1'"), "{err}");
}

#[test]
fn summary_names_only_what_differs_from_a_plain_wire() {
    assert_eq!(LinkParams::default().summary(), "");
    let p: LinkParams = "rate=1G,delay=25ms,seed=3".parse().unwrap();
    assert_eq!(p.summary(), "delay=25ms,rate=1G,seed=3");
    assert_eq!(p.summary().parse::<LinkParams>().unwrap(), p);
}

#[test]
fn serde_uses_the_text_form() {
    let p: LinkParams = "delay=10ms,rate=1G".parse().unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.starts_with("\"delay=10ms,"), "{json}");
    assert_eq!(serde_json::from_str::<LinkParams>(&json).unwrap(), p);
}
