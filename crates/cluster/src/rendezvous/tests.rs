//! Rank 0 and ranks on loopback, through the real sockets.

use super::*;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

const LOOP: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

fn root(size: u32, key: Option<&[u8]>) -> (Root, SocketAddr) {
    let r = Root::listen(
        SocketAddr::new(LOOP, 0),
        size,
        "job1",
        key.map(<[u8]>::to_vec),
    )
    .unwrap();
    let addr = SocketAddr::new(LOOP, r.port().unwrap());
    (r, addr)
}

/// Rank `rank` of `size` joins rank 0 at `addr` with `key` (its agent "listens" on 40000 +
/// rank), then waits for the exit code.
fn rank(
    addr: SocketAddr,
    rank: u32,
    size: u32,
    key: Option<&'static [u8]>,
) -> thread::JoinHandle<Result<u8, String>> {
    thread::spawn(move || {
        let root = addr.to_string();
        let j = Joining {
            root: &root,
            rank,
            size,
            launch: "job1",
            host: "node with spaces",
            key,
            timeout: Duration::from_secs(5),
        };
        let joined = join(
            &j,
            || Ok(vec![addr]),
            |ip, k| {
                assert_eq!(ip, LOOP);
                assert!(k.len() >= 16);
                Ok::<_, String>(40000 + rank as u16)
            },
        )
        .map_err(|e| e.to_string())?;
        joined.wait().map_err(|e| e.to_string())
    })
}

#[test]
fn every_rank_registers_and_gets_the_exit_code() {
    let (root, addr) = root(4, Some(b"0123456789abcdef"));
    let ranks: Vec<_> = (1..4)
        .map(|r| rank(addr, r, 4, Some(b"0123456789abcdef")))
        .collect();
    let mut got = root.gather(Duration::from_secs(5)).unwrap();
    got.sort_by_key(|r| r.rank);
    assert_eq!(got.iter().map(|r| r.rank).collect::<Vec<_>>(), [1, 2, 3]);
    for r in &got {
        assert_eq!(r.agent, SocketAddr::new(LOOP, 40000 + r.rank as u16));
        assert_eq!(
            (r.host.as_str(), r.root_ip, r.key.is_none()),
            ("node_with_spaces", LOOP, true)
        );
    }
    root.finish(3);
    for r in ranks {
        assert_eq!(r.join().unwrap(), Ok(3));
    }
}

#[test]
fn without_a_key_each_agent_reports_its_own() {
    let (root, addr) = root(3, None);
    let ranks: Vec<_> = (1..3).map(|r| rank(addr, r, 3, None)).collect();
    let got = root.gather(Duration::from_secs(5)).unwrap();
    let keys: Vec<_> = got.iter().map(|r| r.key.clone().unwrap()).collect();
    assert_eq!(keys[0].len(), 32);
    assert_ne!(keys[0], keys[1]);
    drop(root);
    for r in ranks {
        assert_eq!(r.join().unwrap(), Ok(1), "dropped without finish: exit 1");
    }
}

#[test]
fn a_wrong_key_is_refused_and_named_at_the_timeout() {
    let (root, addr) = root(3, Some(b"0123456789abcdef"));
    let good = rank(addr, 1, 3, Some(b"0123456789abcdef"));
    let bad = rank(addr, 2, 3, Some(b"fedcba9876543210"));
    let e = root
        .gather(Duration::from_millis(1500))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("1 of 2 ranks did not register within 1.5 s: 2"),
        "{e}"
    );
    assert!(e.contains("wrong or missing key"), "{e}");
    assert!(bad
        .join()
        .unwrap()
        .unwrap_err()
        .contains("wrong or missing key"));
    drop(root);
    assert_eq!(good.join().unwrap(), Ok(1));
}

#[test]
fn wrong_size_duplicate_rank_and_no_key_are_refused() {
    let (root, addr) = root(3, None);
    thread::scope(|s| {
        let gather = s.spawn(|| root.gather(Duration::from_secs(3)));
        let first = rank(addr, 1, 3, None);
        thread::sleep(Duration::from_millis(300));
        let twice = rank(addr, 1, 3, None).join().unwrap().unwrap_err();
        assert!(twice.contains("rank 1 registered twice"), "{twice}");
        let size = rank(addr, 2, 5, None).join().unwrap().unwrap_err();
        assert!(
            size.contains("its launch has 5 processes, rank 0's has 3"),
            "{size}"
        );
        let keyed = rank(addr, 2, 3, Some(b"0123456789abcdef"))
            .join()
            .unwrap()
            .unwrap_err();
        assert!(keyed.contains("runs without --key-file"), "{keyed}");
        let e = gather.join().unwrap().unwrap_err().to_string();
        assert!(e.contains("did not register within 3 s: 2 (see --rendezvous-timeout); 3 registration(s) refused"), "{e}");
        first
    });
    drop(root);
}

/// Strangers that connect and say nothing, send garbage, or announce a 16 MiB registration (refused
/// before anything is allocated for it) do not keep a rank out.
#[test]
fn strangers_do_not_block_registration() {
    let (root, addr) = root(2, None);
    let _silent = TcpStream::connect(addr).unwrap();
    let mut garbage = TcpStream::connect(addr).unwrap();
    garbage.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut huge = TcpStream::connect(addr).unwrap();
    huge.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    huge.write_all(&fathom_proto::Preamble::ours(fathom_proto::PreambleKind::Rendezvous).encode())
        .unwrap();
    huge.write_all(&(16u32 << 20).to_be_bytes()).unwrap();
    let r = rank(addr, 1, 2, None);
    assert_eq!(root.gather(Duration::from_secs(5)).unwrap().len(), 1);
    let mut answer = Vec::new();
    let _ = huge.read_to_end(&mut answer);
    assert!(String::from_utf8_lossy(&answer).contains("exceeds the 1024-byte limit"));
    root.finish(0);
    assert_eq!(r.join().unwrap(), Ok(0));
}

#[test]
fn a_rank_without_rank_0_gives_up_in_time() {
    let (root, addr) = root(2, None);
    drop(root);
    let t = Instant::now();
    let e = rank(addr, 1, 2, None).join().unwrap().unwrap_err();
    assert!(
        e.contains("rank 0 did not answer at 127.0.0.1:") && e.contains("--controller"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(7));
}

/// A stranger that dribbles a registration a byte at a time is cut off once its HANDSHAKE is
/// over, however often it sends.
#[test]
fn a_dribbler_is_cut_off_after_the_handshake_time() {
    let (root, addr) = root(2, None);
    thread::scope(|s| {
        let gather = s.spawn(|| root.gather(HANDSHAKE + Duration::from_secs(2)));
        let t = Instant::now();
        let mut d = TcpStream::connect(addr).unwrap();
        d.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let preamble = fathom_proto::Preamble::ours(fathom_proto::PreambleKind::Rendezvous);
        d.write_all(&preamble.encode()).unwrap();
        d.write_all(&1000u32.to_be_bytes()).unwrap();
        let mut buf = [0u8; 256];
        let cut = loop {
            assert!(
                t.elapsed() < HANDSHAKE + Duration::from_secs(2),
                "never cut off"
            );
            if d.write_all(&[0]).is_err() {
                break t.elapsed();
            }
            match d.read(&mut buf) {
                Ok(0) => break t.elapsed(),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break t.elapsed(),
            }
        };
        assert!(cut >= HANDSHAKE - Duration::from_millis(500), "{cut:?}");
        assert!(gather.join().unwrap().is_err());
    });
}

/// More idle strangers than [`MAX_PENDING`] (issue 21, item 9): the oldest are cut off to make
/// room, so a keyed launch's ranks still register well within their timeout.
#[test]
fn a_flood_of_idle_strangers_does_not_keep_ranks_out() {
    const KEY: &[u8] = b"0123456789abcdef";
    let (root, addr) = root(3, Some(KEY));
    thread::scope(|s| {
        let gather = s.spawn(|| root.gather(Duration::from_secs(8)));
        let idle: Vec<TcpStream> = (0..MAX_PENDING + 20)
            .map(|_| TcpStream::connect(addr).unwrap())
            .collect();
        thread::sleep(Duration::from_millis(300));
        let t = Instant::now();
        let ranks: Vec<_> = (1..3).map(|r| rank(addr, r, 3, Some(KEY))).collect();
        let got = gather.join().unwrap();
        assert_eq!(
            got.map(|g| g.len()).ok(),
            Some(2),
            "with {} idle",
            idle.len()
        );
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        ranks
    });
    drop(root);
}
