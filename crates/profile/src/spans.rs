//! Where a profile's values are in its text, kept beside the plan as it is read so that the
//! checks after it (the flowops' order, the plan's bounds) name the line and column at fault.

use crate::read::Span;

/// Where a profile's values are.
pub(crate) struct Spans {
    pub name: Span,
    pub groups: Vec<GroupSpans>,
}

/// Where a group's values are (its header where a key is absent).
pub(crate) struct GroupSpans {
    pub header: Span,
    pub name: Span,
    pub threads: Span,
    pub flows: Span,
    pub window: Span,
    pub transactions: Vec<TxSpans>,
}

/// Where a transaction's values are.
pub(crate) struct TxSpans {
    pub header: Span,
    pub repeat: Span,
    pub rate: Span,
    pub flowops: Span,
    pub ops: Vec<OpSpans>,
}

/// Where a flowop's values are.
pub(crate) struct OpSpans {
    pub op: Span,
    pub count: Span,
    pub size: Span,
}
