//! The plain stream's section: every method [`Section`]'s default, which writes the stream's
//! table (`table_stream.rs`).

use crate::section::Section;

/// The plain stream's section: every method the [`Section`] trait's default, which is the
/// stream's table.
#[derive(Debug)]
pub struct Stream;

/// The plain stream's section.
pub static STREAM: Stream = Stream;

impl Section for Stream {}
