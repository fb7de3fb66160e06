//! Small pieces of wording the renderers share, so that the terminal and the HTML page say the
//! same thing: a count with its noun, and what a byte-limited test moved.

use crate::model::TestEcho;

/// "1 flow", "4 flows".
pub(crate) fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("{n} {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// What a `-n` test moves, as its kind's section words it ("200 MB per direction", "a 200 MB
/// file").
pub(crate) fn bytes_limit(t: &TestEcho, bytes: u64) -> String {
    crate::sections::of_kind(&t.kind).bytes_limit(bytes)
}
