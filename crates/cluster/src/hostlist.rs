//! Slurm host lists: `node[01-03,7],login` is `node01 node02 node03 node7 login`.
//!
//! The syntax is Slurm's (`scontrol show hostnames`): names separated by commas, each with any
//! number of bracketed ranges; a range `lo-hi` keeps the zero padding of `lo`, and several
//! brackets in one name give every combination, in order (`r[1-2]n[1-2]` is `r1n1 r1n2 r2n1
//! r2n2`). A list comes from a flag, a file or a launcher's environment, so its size is bounded
//! before any name is made: at most [`MAX_HOSTS`] names, each at most [`MAX_NAME`] bytes.

/// Most names one list may expand to.
pub const MAX_HOSTS: usize = 100_000;
/// Longest name (a DNS name's limit).
pub const MAX_NAME: usize = 253;

/// Why a host list is refused; each names the list, item or name at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    /// Two commas with nothing between them, or an empty list.
    #[error("'{0}': an empty host name in the list")]
    EmptyName(String),
    /// The list names no host at all.
    #[error("'{0}': no host in the list")]
    NoHost(String),
    /// A name longer than [`MAX_NAME`].
    #[error("'{0}' is longer than {MAX_NAME} bytes")]
    LongName(String),
    /// The list or item expands to more than [`MAX_HOSTS`] names.
    #[error("'{0}' names more than {MAX_HOSTS} hosts")]
    TooMany(String),
    /// A `[` inside a bracket.
    #[error("'{0}': a bracket inside a bracket")]
    Nested(String),
    /// A `]` with no `[` before it.
    #[error("'{0}': a ']' without its '['")]
    Unopened(String),
    /// A `[` never closed.
    #[error("'{0}': a '[' without its ']'")]
    Unclosed(String),
    /// A bracket whose inside is not ranges of numbers.
    #[error("'{item}': '[{inside}]' is not a range like [01-64] or [1,3,5-7]")]
    NotRange {
        /// The list item.
        item: String,
        /// The bracket's inside.
        inside: String,
    },
    /// A range whose end is below its start.
    #[error("'{item}': the range {lo}-{hi} runs backwards")]
    Backwards {
        /// The list item.
        item: String,
        /// The range's start, as written.
        lo: String,
        /// The range's end, as written.
        hi: String,
    },
}

/// The names in `list`, in order, duplicates kept (Slurm keeps them too).
///
/// ```
/// use fathom_cluster::hostlist::expand;
/// assert_eq!(expand("n[08-10],login").unwrap(), ["n08", "n09", "n10", "login"]);
/// ```
pub fn expand(list: &str) -> Result<Vec<String>, HostlistError> {
    let mut hosts = Vec::new();
    for item in split_top(list)? {
        let item = item.trim();
        if item.is_empty() {
            return Err(HostlistError::EmptyName(list.into()));
        }
        let mut names = vec![String::new()];
        for part in parts(item)? {
            names = match part {
                Part::Text(t) => names.into_iter().map(|n| n + t).collect(),
                Part::Ranges(r) => combine(names, &ranges(item, r)?, list)?,
            };
        }
        for n in &names {
            if n.len() > MAX_NAME {
                return Err(HostlistError::LongName(n.clone()));
            }
        }
        if hosts.len() + names.len() > MAX_HOSTS {
            return Err(HostlistError::TooMany(list.into()));
        }
        hosts.extend(names);
    }
    Ok(hosts)
}

/// The first name of `list`, without expanding the rest (a launcher's rank 0 host).
pub fn first(list: &str) -> Result<String, HostlistError> {
    let item = split_top(list)?
        .into_iter()
        .next()
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .ok_or_else(|| HostlistError::NoHost(list.into()))?;
    let mut name = String::new();
    for part in parts(item)? {
        match part {
            Part::Text(t) => name.push_str(t),
            Part::Ranges(r) => name.push_str(&ranges(item, r)?[0]),
        }
    }
    Ok(name)
}

/// A piece of one list item: literal text, or the inside of a bracket.
enum Part<'a> {
    Text(&'a str),
    Ranges(&'a str),
}

/// Splits at the commas outside brackets.
fn split_top(list: &str) -> Result<Vec<&str>, HostlistError> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(HostlistError::Nested(list.into())),
            ']' if depth == 1 => depth = 0,
            ']' => return Err(HostlistError::Unopened(list.into())),
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(HostlistError::Unclosed(list.into()));
    }
    items.push(&list[start..]);
    Ok(items)
}

/// An item's text and bracket parts, in order (brackets are balanced: [`split_top`] checked).
fn parts(item: &str) -> Result<Vec<Part<'_>>, HostlistError> {
    let mut out = Vec::new();
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        let close = open
            + rest[open..]
                .find(']')
                .ok_or_else(|| HostlistError::Unclosed(item.into()))?;
        if open > 0 {
            out.push(Part::Text(&rest[..open]));
        }
        out.push(Part::Ranges(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Part::Text(rest));
    }
    Ok(out)
}

/// The numbers a bracket names, in order, each as text with its padding.
fn ranges(item: &str, inside: &str) -> Result<Vec<String>, HostlistError> {
    let mut out = Vec::new();
    for r in inside.split(',') {
        let r = r.trim();
        let (lo, hi) = r.split_once('-').unwrap_or((r, r));
        let bad = || HostlistError::NotRange {
            item: item.into(),
            inside: inside.into(),
        };
        if lo.is_empty()
            || hi.is_empty()
            || !lo.bytes().chain(hi.bytes()).all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let (a, b): (u64, u64) = (
            lo.parse().map_err(|_| bad())?,
            hi.parse().map_err(|_| bad())?,
        );
        if a > b {
            return Err(HostlistError::Backwards {
                item: item.into(),
                lo: lo.into(),
                hi: hi.into(),
            });
        }
        if b - a >= MAX_HOSTS as u64 || out.len() as u64 + (b - a) >= MAX_HOSTS as u64 {
            return Err(HostlistError::TooMany(item.into()));
        }
        let width = lo.len();
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

/// Every name in `names` followed by every number in `nums`, in order.
fn combine(names: Vec<String>, nums: &[String], list: &str) -> Result<Vec<String>, HostlistError> {
    if names.len().saturating_mul(nums.len()) > MAX_HOSTS {
        return Err(HostlistError::TooMany(list.into()));
    }
    Ok(names
        .iter()
        .flat_map(|n| nums.iter().map(move |d| format!("{n}{d}")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_keep_their_padding_and_order() {
        assert_eq!(
            expand("node[01-03,7]").unwrap(),
            ["node01", "node02", "node03", "node7"]
        );
        assert_eq!(expand("n[8-10]").unwrap(), ["n8", "n9", "n10"]);
        assert_eq!(expand("n[098-100]").unwrap(), ["n098", "n099", "n100"]);
    }

    #[test]
    fn several_items_and_several_brackets() {
        assert_eq!(
            expand("r[1-2]n[1-2]-ib,login").unwrap(),
            ["r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib", "login"]
        );
        assert_eq!(expand("a,b,a").unwrap(), ["a", "b", "a"]);
    }

    #[test]
    fn the_first_host_needs_no_expansion() {
        assert_eq!(first("node[0001-9999],x").unwrap(), "node0001");
        assert_eq!(first("login").unwrap(), "login");
    }

    #[test]
    fn bad_lists_are_refused_saying_why() {
        for (list, why) in [
            ("node[01-", "without its ']'"),
            ("node01]", "without its '['"),
            ("n[[1]]", "inside a bracket"),
            ("n[5-1]", "backwards"),
            ("n[a-b]", "not a range"),
            ("n[1-]", "not a range"),
            ("a,,b", "empty host name"),
            ("", "empty host name"),
            ("n[0-99999999999]", "more than"),
            ("a[0-999]b[0-999]", "more than"),
        ] {
            let e = expand(list).unwrap_err().to_string();
            assert!(e.contains(why), "{list}: {e}");
        }
        assert!(first("").is_err());
    }
}
