//! How results and the store itself are named: run and series references, the default path.

use fathom_store::{default_path, default_path_from, Ref};
use std::ffi::OsString;
use std::path::PathBuf;

#[test]
fn refs_parse_and_display_back() {
    assert_eq!(Ref::parse("42").unwrap(), Ref::Run(42));
    assert_eq!(Ref::parse("s7").unwrap(), Ref::Series(7));
    assert_eq!("s7".parse::<Ref>().unwrap(), Ref::Series(7));
    assert_eq!(Ref::Run(42).to_string(), "42");
    assert_eq!(Ref::Series(7).to_string(), "s7");
}

#[test]
fn bad_refs_are_refused_clearly() {
    for bad in [
        "x7",
        "",
        "s",
        "-3",
        "+3",
        "0",
        "s0",
        "4 2",
        "S7",
        "99999999999999999999",
    ] {
        let err = Ref::parse(bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("'{bad}' is not a run id (42) or a series id (s7)")
        );
    }
}

fn os(s: &str) -> Option<OsString> {
    Some(s.into())
}

#[test]
fn the_default_path_follows_the_documented_order() {
    let p = default_path_from;
    assert_eq!(
        p(os("/tmp/x.db"), os("/xdg"), os("/home/u")),
        PathBuf::from("/tmp/x.db")
    );
    assert_eq!(
        p(os(""), os("/xdg"), os("/home/u")),
        PathBuf::from("/xdg/fathom/fathom.db")
    );
    assert_eq!(
        p(None, os("relative"), os("/home/u")),
        PathBuf::from("/home/u/.local/share/fathom/fathom.db")
    );
    assert_eq!(
        p(None, None, os("/home/u")),
        PathBuf::from("/home/u/.local/share/fathom/fathom.db")
    );
    assert_eq!(p(None, os(""), os("")), PathBuf::from("fathom.db"));
}

/// Run as a child by [`fathom_store_in_the_environment_wins`]: prints the default path.
#[test]
fn child_print_default_path() {
    if std::env::var_os("FATHOM_STORE_TEST_CHILD").is_some() {
        println!("default_path={}", default_path().display());
    }
}

#[test]
fn fathom_store_in_the_environment_wins() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["child_print_default_path", "--exact", "--nocapture"])
        .env("FATHOM_STORE_TEST_CHILD", "1")
        .env("FATHOM_STORE", "/somewhere/else.db")
        .env("XDG_DATA_HOME", "/xdg")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("default_path=/somewhere/else.db\n"),
        "{stdout}"
    );
}
