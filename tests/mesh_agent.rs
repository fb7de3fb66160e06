//! The agent's side of a mesh: slots of its time booked, refused while a conflicting one is
//! held, freed at their deadline when the holder never gives them back, and, on a keyed
//! agent, neither a slot nor the mesh's results for a controller without the key.

mod common;
use common::{challenged, in_process};
use fathom::agent::AgentConfig;
use fathom::controller::mesh::{self, Links};
use fathom::controller::Target;
use fathom_mesh::class::Class;
use fathom_proto::{BookSlot, ToAgent, ToController, MAX_FRAME};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn keyed() -> (SocketAddr, Arc<fathom::agent::MeshShare>) {
    let cfg = AgentConfig {
        key: Some(KEY.to_vec()),
        ..AgentConfig::default()
    };
    let share = cfg.mesh.clone();
    (in_process(cfg), share)
}

fn slot(class: Class, hold_ms: u64) -> BookSlot {
    BookSlot {
        class,
        start_in_ns: 0,
        hold_ns: hold_ms * 1_000_000,
        holder: "mesh_agent test".into(),
    }
}

fn target(addr: SocketAddr) -> Target {
    Target::resolve(&addr.to_string(), None).unwrap()
}

/// A stranger's conversation: the preamble, an answer to the challenge with `mac` (none, or
/// made with the wrong key), then `ask`; what the agent said after the challenge.
fn stranger(addr: SocketAddr, wrong_key: bool, ask: ToAgent) -> Vec<ToController> {
    let (mut c, challenge) = challenged(addr);
    let ToController::Challenge {
        nonce,
        key_required,
    } = challenge
    else {
        panic!("no challenge")
    };
    assert!(key_required);
    let mac = wrong_key.then(|| fathom_proto::auth::answer(b"not the key at all", &nonce));
    let _ = c.send(&ToAgent::Auth { mac });
    let _ = c.send(&ask);
    let mut said = Vec::new();
    while let Ok(m) = c.expect::<ToController>(MAX_FRAME) {
        said.push(m);
    }
    said
}

#[test]
fn a_stranger_can_neither_book_slots_nor_read_results_of_a_keyed_agent() {
    let (addr, share) = keyed();
    share.serve_results(Box::new(|| "{\"document\":\"mesh_status\"}".into()));
    for wrong_key in [false, true] {
        for ask in [
            ToAgent::Book(slot(Class::Exclusive, 60_000)),
            ToAgent::MeshResults,
        ] {
            let said = stranger(addr, wrong_key, ask.clone());
            assert!(
                matches!(said.as_slice(), [ToController::Error { .. }]),
                "{ask:?} (wrong key {wrong_key}): {said:?}"
            );
        }
    }
    assert!(
        share.held().is_empty(),
        "a stranger booked: {:?}",
        share.held()
    );
    // Booking without the handshake is refused too.
    let (mut c, _) = challenged(addr);
    let _ = c.send(&ToAgent::Book(slot(Class::Exclusive, 60_000)));
    assert!(matches!(
        c.expect::<ToController>(MAX_FRAME),
        Ok(ToController::Error { .. })
    ));
    assert!(share.held().is_empty());
    // With the key, both work.
    let t = target(addr);
    let booked = Links::new(Some(KEY.to_vec()))
        .book(&t, &slot(Class::Exclusive, 60_000))
        .unwrap();
    assert!(matches!(booked, ToController::Booked { .. }), "{booked:?}");
    assert_eq!(share.held().len(), 1);
    let doc = mesh::results(&t, Some(KEY)).unwrap();
    assert!(doc.contains("mesh_status"), "{doc}");
    assert!(Links::new(None).book(&t, &slot(Class::Normal, 10)).is_err());
}

#[test]
fn a_conflicting_slot_is_refused_with_when_it_frees_and_release_frees_it() {
    let (addr, _) = keyed();
    let t = target(addr);
    let key = Some(KEY);
    let mut links = Links::new(key.map(<[u8]>::to_vec));
    let ToController::Booked { id } = links.book(&t, &slot(Class::Normal, 60_000)).unwrap() else {
        panic!("not booked")
    };
    assert!(matches!(
        links.book(&t, &slot(Class::Normal, 60_000)).unwrap(),
        ToController::Booked { .. }
    ));
    assert!(matches!(
        links.book(&t, &slot(Class::Background, 60_000)).unwrap(),
        ToController::Booked { .. }
    ));
    match links.book(&t, &slot(Class::Exclusive, 1_000)).unwrap() {
        ToController::Busy {
            free_in_ns: Some(ns),
        } => {
            assert!((50_000_000_000..=60_000_000_000).contains(&ns), "{ns}")
        }
        other => panic!("{other:?}"),
    }
    assert!(links.release(&t, id).unwrap());
    assert!(!links.release(&t, id).unwrap(), "released twice");
    assert!(mesh::probe(&t, key).is_ok());
}

#[test]
fn a_slot_holder_that_never_finishes_frees_the_slot_at_its_deadline() {
    let (addr, _) = keyed();
    let t = target(addr);
    let mut holder = Links::new(Some(KEY.to_vec()));
    let booked = holder.book(&t, &slot(Class::Exclusive, 400)).unwrap();
    assert!(matches!(booked, ToController::Booked { .. }), "{booked:?}");
    let held_from = Instant::now();
    // The holder vanishes (its connection gone, its slot never released); another mesh asks
    // until the agent gives it.
    drop(holder);
    let mut links = Links::new(Some(KEY.to_vec()));
    loop {
        match links.book(&t, &slot(Class::Exclusive, 100)).unwrap() {
            ToController::Booked { .. } => break,
            ToController::Busy { .. } => {
                assert!(held_from.elapsed() < Duration::from_secs(5), "never freed");
                std::thread::sleep(Duration::from_millis(50));
            }
            other => panic!("{other:?}"),
        }
    }
    let waited = held_from.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "freed early: {waited:?}"
    );
}

#[test]
fn an_agent_without_a_mesh_says_so() {
    let (addr, _) = keyed();
    let e = mesh::results(&target(addr), Some(KEY))
        .unwrap_err()
        .to_string();
    assert!(e.contains("runs no mesh"), "{e}");
}
