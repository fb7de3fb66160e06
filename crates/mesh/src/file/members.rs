//! `[members]`: the hosts listed (`hosts = ["h1", { name = "db1", addr = "10.0.0.5:5301" }]`)
//! or a discovery source (`from = "k8s:svc=fathom"`, looked at again every `refresh`).

use super::read::{kind, Fields};
use crate::error::{MeshError, Source, Span};
use crate::spec::{Member, Members, MAX_MEMBERS};
use fathom_cluster::discover::Source as Discovery;
use toml_edit::{Table, Value};

/// How often a discovery source is looked at again unless `refresh` says.
const DEFAULT_REFRESH_NS: u64 = 60_000_000_000;
/// Longest name of a member or a mesh.
const MAX_NAME: usize = 253;

/// The members, and the lab whose host names they use (if any).
pub fn read(src: &Source, t: &Table) -> Result<(Members, Option<String>), MeshError> {
    let f = Fields::of(src, t, "[members]", &["hosts", "from", "refresh", "lab"])?;
    let lab = match f.text(src, "lab")? {
        Some((l, span)) => Some(checked_name(src, l, span, "lab")?),
        None => None,
    };
    let hosts = f.value(src, "hosts")?;
    let from = f.text(src, "from")?;
    let refresh = f.duration(src, "refresh", 1_000_000_000, 86_400_000_000_000)?;
    let members = match (hosts, from) {
        (Some(_), Some((_, span))) => {
            return Err(src.error(span, "from: [members] takes hosts or from, not both"))
        }
        (None, None) => {
            return Err(src.error(
                f.span.clone(),
                "[members]: list hosts = [...] or from = \"SOURCE\"",
            ))
        }
        (Some((v, span)), None) => {
            if let Some((_, at)) = refresh {
                return Err(src.error(
                    at,
                    "refresh: only a discovery source (from) is looked at again",
                ));
            }
            Members::Listed(listed(src, v, span)?)
        }
        (None, Some((text, span))) => Members::Found {
            source: text
                .parse::<Discovery>()
                .map_err(|e| src.error(span, format!("from: {e}")))?,
            refresh_ns: refresh.map_or(DEFAULT_REFRESH_NS, |r| r.0),
        },
    };
    Ok((members, lab))
}

/// The hosts listed: names (which are their addresses too) or `{ name, addr }` tables.
fn listed(src: &Source, v: &Value, span: Span) -> Result<Vec<Member>, MeshError> {
    let Some(items) = v.as_array() else {
        return Err(src.error(span, format!("hosts: expected an array, found {}", kind(v))));
    };
    if items.len() > MAX_MEMBERS {
        return Err(src.error(span, format!("hosts: over {MAX_MEMBERS} members")));
    }
    let mut out: Vec<Member> = Vec::with_capacity(items.len());
    for item in items.iter() {
        let member = member(src, item)?;
        if out.iter().any(|m| m.name == member.name) {
            let m = format!("hosts: '{}' is listed twice", member.name);
            return Err(src.error(item.span(), m));
        }
        out.push(member);
    }
    if out.len() < 2 {
        return Err(src.error(span, "hosts: a mesh needs two members at least"));
    }
    Ok(out)
}

/// One listed member.
fn member(src: &Source, item: &Value) -> Result<Member, MeshError> {
    match item {
        Value::String(s) => {
            let name = checked_name(src, s.value().clone(), item.span(), "hosts")?;
            Ok(Member {
                addr: name.clone(),
                name,
            })
        }
        Value::InlineTable(t) => {
            if let Some((k, _)) = t.iter().find(|(k, _)| !["name", "addr"].contains(k)) {
                let m = format!("hosts: unknown key '{k}' in a member; expected name or addr");
                return Err(src.error(t.key(k).and_then(|k| k.span()), m));
            }
            let text = |key: &str| match t.get(key) {
                Some(v) => v
                    .as_str()
                    .map(|s| (s.to_string(), v.span()))
                    .ok_or_else(|| {
                        src.error(
                            v.span(),
                            format!("hosts: {key}: expected a string, found {}", kind(v)),
                        )
                    }),
                None => Err(src.error(item.span(), format!("hosts: a member table needs {key}"))),
            };
            let (name, at) = text("name")?;
            let (addr, addr_at) = text("addr")?;
            Ok(Member {
                name: checked_name(src, name, at, "hosts: name")?,
                addr: checked_name(src, addr, addr_at, "hosts: addr")?,
            })
        }
        other => Err(src.error(
            other.span(),
            format!(
                "hosts: expected a host name or {{ name, addr }}, found {}",
                kind(other)
            ),
        )),
    }
}

/// `name` if it can name a member, a lab or a mesh: 1 to 253 printable characters, no spaces
/// or quotes.
pub fn checked_name(
    src: &Source,
    name: String,
    span: Span,
    key: &str,
) -> Result<String, MeshError> {
    let bad = name
        .chars()
        .find(|c| !c.is_ascii_graphic() || matches!(c, '"' | '\'' | '\\' | '|'));
    match (name.len(), bad) {
        (0, _) => Err(src.error(span, format!("{key}: empty"))),
        (n, _) if n > MAX_NAME => {
            Err(src.error(span, format!("{key}: over {MAX_NAME} characters")))
        }
        (_, Some(c)) => Err(src.error(
            span,
            format!("{key}: '{}' may not hold {c:?}", name.escape_debug()),
        )),
        _ => Ok(name),
    }
}
