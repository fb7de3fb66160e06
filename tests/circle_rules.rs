//! Issue 38's module circles: no crate's files import each other round in a circle, as
//! `scripts/check-circles.py` reads them from their `use` lines and inline paths (its `KNOWN`
//! list names the circles that are owned elsewhere), so a new circle fails the suite instead of
//! waiting for a review.

mod common;
use common::run_program;

#[test]
fn no_crate_has_a_module_circle_outside_known() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check-circles.py");
    let out = run_program("python3", &[script], 120);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "scripts/check-circles.py:\n{said}");
    assert!(said.contains("0 circles outside KNOWN"), "{said}");
    assert!(!said.contains("strike it from KNOWN"), "{said}");
}
