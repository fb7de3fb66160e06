//! The file copy kind: disk to disk over one connection per range. The sending end reads its
//! file (or generates data) and sends each range with its digest; the receiving end writes a
//! temporary file and renames it into place once every range arrived whole and matched
//! (the wire format is in `fathom_proto::file`). On an agent every path stays below its files
//! root, whichever end it runs (an agent without one refuses file copies); the controller's own
//! end, which has no files root, uses the user's paths.

mod counters;
mod io;
mod place;
mod recv;
mod send;
mod stale;
mod target;
mod temp;

pub use stale::remove_stale_parts;

use crate::kind::{wrong_sockets, Flow, Setup, Side, Sockets};
use fathom_proto::plan::TestPlan;
use place::Base;
use std::sync::Arc;

/// The range of a `total`-byte file flow `i` of `n` carries: (offset, length). Ranges are
/// whole multiples of `io` (so O_DIRECT offsets stay aligned), the last one clipped.
pub(crate) fn range(total: u64, io: u64, i: u64, n: u64) -> (u64, u64) {
    let chunks = total.div_ceil(io);
    let first = i * (chunks / n) + i.min(chunks % n);
    let off = (first * io).min(total);
    let len = (TestPlan::share(chunks, i, n) * io).min(total - off);
    (off, len)
}

/// Builds this side's flows of the file kind from its sockets.
pub(super) fn flows(s: &Setup<'_>, sockets: Sockets) -> std::io::Result<Vec<Box<dyn Flow>>> {
    let o = s
        .plan
        .file()
        .cloned()
        .ok_or_else(|| wrong_sockets(s.plan.kind.id()))?;
    let (base, path) = match (s.side, s.files_root) {
        (Side::Server, Some(root)) => (Base::Root(root), Some(o.path.clone())),
        (Side::Server, None) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "this agent serves no files: start it with `fathom serve --files-root DIR`",
            ))
        }
        // An agent running the client end (a third-party test) stays below its root too.
        (Side::Client, Some(root)) => (Base::Root(root), o.local.clone()),
        (Side::Client, None) => (Base::Local, o.local.clone()),
    };
    let sending = s.own_flows().next().is_some_and(|f| s.side.leads(f.dir));
    if !sending {
        let path = path.ok_or_else(|| wrong_sockets(s.plan.kind.id()))?;
        let target = Arc::new(target::Target::create(base, &path, &o, s.ids.len())?);
        let mut pipes = (0..s.ids.len())
            .map(|_| recv::Receiver::pipe(&o))
            .collect::<std::io::Result<Vec<_>>>()?;
        return s.tcp_flows(sockets, |_, sock, stats| {
            let pipe = pipes.pop().flatten();
            Box::new(recv::Receiver::new(sock, stats, target.clone(), pipe, &o))
        });
    }
    let src = path
        .map(|p| place::open_source(base, &p, o.direct))
        .transpose()?
        .map(Arc::new);
    let total = match &src {
        Some(f) => f.metadata()?.len(),
        None => o.size.unwrap_or(0),
    };
    if let Some(f) = src.as_deref().filter(|_| o.drop_cache) {
        io::drop_cache(f)?;
    }
    if o.size.is_some_and(|want| want != total) {
        return Err(std::io::Error::other(format!(
            "the source is now {total} bytes, not the {} planned",
            o.size.unwrap_or(0)
        )));
    }
    s.tcp_flows(sockets, |f, sock, stats| {
        let (i, n) = s.place(f);
        let (off, len) = range(total, o.io.into(), i, n);
        Box::new(send::Sender::new(
            sock,
            stats,
            src.clone(),
            (off, len, total),
            &o,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::range;

    #[test]
    fn ranges_cover_the_file_in_io_multiples() {
        for (total, io, n) in [
            (0u64, 4096u64, 1u64),
            (1, 4096, 3),
            (10_000, 4096, 2),
            (1 << 20, 60_000, 7),
        ] {
            let mut next = 0;
            for i in 0..n {
                let (off, len) = range(total, io, i, n);
                assert_eq!(off, next);
                assert!(off % io == 0 || len == 0);
                next = off + len;
            }
            assert_eq!(next, total);
        }
    }
}
