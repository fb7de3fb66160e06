//! iperf3's RSA authentication in `fathom serve --iperf3` against the real iperf3 client
//! (Debian's 3.12): the right password is admitted; a wrong one, an unknown user, no
//! credentials and a stale timestamp get iperf3's own "test authorization failed" before any
//! stream opens; bad key or users files are refused at start.

mod common;
mod iperf3_common;
use common::{run_exit, run_exit_says};
use iperf3_common::Server;
use std::process::Command;

/// An RSA key pair made by openssl and a users file admitting alice (password "secret"), in a
/// temporary directory.
struct Rsa {
    _dir: tempfile::TempDir,
    private: String,
    public: String,
    users: String,
}

impl Rsa {
    fn new() -> Rsa {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = |f: &str| dir.path().join(f).display().to_string();
        let (private, public, users) = (path("priv.pem"), path("pub.pem"), path("users.csv"));
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        };
        run(&["genrsa", "-out", &private, "2048"]);
        run(&["rsa", "-in", &private, "-pubout", "-out", &public]);
        let hash = fathom_iperf3::password_hash("alice", "secret");
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        std::fs::write(&users, format!("# iperf3 users\nalice,{hex}\n")).unwrap();
        Rsa {
            _dir: dir,
            private,
            public,
            users,
        }
    }

    /// An agent requiring these credentials, with `extra` serve options.
    fn serve(&self, extra: &[&str]) -> Server {
        let mut args = vec![
            "--rsa-private-key-path",
            &self.private,
            "--authorized-users-path",
            &self.users,
        ];
        args.extend(extra);
        Server::start_with(&args)
    }
}

/// Runs a 1 s test as `user` with `password`, returning (exit code, output).
fn as_user(s: &Server, public: &str, user: &str, password: &str) -> (i32, String) {
    let args = [
        "-t",
        "1",
        "--username",
        user,
        "--rsa-public-key-path",
        public,
    ];
    s.client_env(&args, &[("IPERF3_PASSWORD", password)])
}

/// Asserts iperf3's own refusal, before any stream connected.
fn refused(r: (i32, String)) {
    let (code, text) = r;
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("test authorization failed"), "{text}");
    assert!(!text.contains("connected to"), "a stream opened: {text}");
}

#[test]
fn rsa_authentication_admits_the_right_password_only() {
    let k = Rsa::new();
    let public = &k.public;
    let mut s = k.serve(&[]);
    let (code, text) = as_user(&s, public, "alice", "secret");
    assert_eq!(code, 0, "{text}");
    s.line_with("authenticated as \"alice\"");
    refused(as_user(&s, public, "alice", "wrong"));
    s.line_with("unknown user or wrong password");
    refused(as_user(&s, public, "bob", "secret"));
    s.line_with("unknown user or wrong password");
    refused(s.client(&["-t", "1"]));
    s.line_with("no authentication token");
    let (code, text) = as_user(&s, public, "alice", "secret");
    assert_eq!(code, 0, "{text}");
}

#[test]
fn rsa_authentication_refuses_a_stale_timestamp() {
    let k = Rsa::new();
    let public = &k.public;
    // The agent's clock an hour ahead: the client's credentials are an hour old.
    let mut s = k.serve(&["--test-clock-shift", "1h"]);
    refused(as_user(&s, public, "alice", "secret"));
    s.line_with("s off");
    drop(s);
    let s = k.serve(&["--test-clock-shift", "1h", "--time-skew-threshold", "3700"]);
    let (code, text) = as_user(&s, public, "alice", "secret");
    assert_eq!(code, 0, "{text}");
}

/// `serve --listen 127.0.0.1:0 --iperf3=0 EXTRA`: an agent with the iperf3 server on.
fn serve_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [
        &["serve", "--listen", "127.0.0.1:0", "--iperf3=0"][..],
        extra,
    ]
    .concat()
}

#[test]
fn rsa_options_are_checked_before_serving() {
    let k = Rsa::new();
    let (private, users) = (&k.private, &k.users);
    // Each file where the other belongs: refused, naming what it should have held.
    for (key, authorized, says) in [
        (users, users, "not an unencrypted RSA private key"),
        (private, private, "expected USER,SHA256-HEX"),
    ] {
        let both: [&str; 4] = [
            "--rsa-private-key-path",
            key,
            "--authorized-users-path",
            authorized,
        ];
        run_exit_says(&serve_args(&both), 30, 2, says);
    }
    run_exit(&serve_args(&["--rsa-private-key-path", private]), 30, 2);
}
