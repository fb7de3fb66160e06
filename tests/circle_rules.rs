//! Issue 38's module circles: no crate's files import each other round in a circle, as
//! `scripts/check-circles.py` reads them from their `use` lines and inline paths (its `KNOWN`
//! list names the circles that are owned elsewhere), so a new circle fails the suite instead of
//! waiting for a review.

mod common;
use common::check_script;

#[test]
fn no_crate_has_a_module_circle_outside_known() {
    let (passed, said) = check_script("check-circles.py", 120);
    assert!(passed, "scripts/check-circles.py:\n{said}");
    assert!(said.contains("0 circles outside KNOWN"), "{said}");
    assert!(!said.contains("strike it from KNOWN"), "{said}");
}
