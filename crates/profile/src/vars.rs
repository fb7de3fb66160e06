//! A profile's variables: `$name` and `${name}` in string values, set (lowest first) by the
//! defaults in `[vars]`, by the environment's `FATHOM_VAR_<name>`, and by `--set name=value`.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// The prefix of the environment variables that set a profile's variables.
pub const ENV_PREFIX: &str = "FATHOM_VAR_";

/// Longest value of a variable, and of any string value once its variables are set.
pub const MAX_VALUE: usize = 4096;

/// The variables set outside the file: the environment's and `--set`'s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--set name=value`, in command line order (a later one wins).
    pub sets: Vec<(String, String)>,
    /// The environment's `FATHOM_VAR_<name>=value`, without the prefix.
    pub env: Vec<(String, String)>,
}

impl Overrides {
    /// `sets`, with this process's environment variables that start with [`ENV_PREFIX`] (those
    /// that are not UTF-8 or whose name is not a variable's are left out).
    pub fn from_env(sets: Vec<(String, String)>) -> Overrides {
        let env = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter_map(|(k, v)| Some((k.strip_prefix(ENV_PREFIX)?.to_string(), v)))
            .filter(|(k, _)| is_name(k))
            .collect();
        Overrides { sets, env }
    }
}

/// Why a `--set name=value` is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    /// No `=`.
    #[error("'{0}' is not name=value; try --set threads=64")]
    NoEquals(String),
    /// The name is not a variable's.
    #[error("'{0}' is not a variable name (letters, digits and _, not starting with a digit)")]
    Name(String),
    /// The value is longer than [`MAX_VALUE`] bytes.
    #[error("the value of '{0}' is over {MAX_VALUE} bytes")]
    TooLong(String),
}

/// Why a string value's variables cannot be set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum VarError {
    /// `${` without its `}`.
    #[error("'${{' has no closing '}}'; write ${{name}}")]
    Unclosed,
    /// After `$`, no variable's name.
    #[error(
        "'${0}' is not a variable: write $name or ${{name}} (letters, digits and _), \
         or $$ for a dollar sign"
    )]
    Name(String),
    /// A variable with no value from [vars], the environment or `--set`.
    #[error(
        "variable '${0}' is never set: give it a default in [vars], set \
         {ENV_PREFIX}{0} or --set {0}=VALUE"
    )]
    Unset(String),
    /// The value is longer than [`MAX_VALUE`] bytes once its variables are set.
    #[error("the value is over {MAX_VALUE} bytes once expanded")]
    TooLong,
}

/// Reads one `--set name=value`.
pub fn parse_set(arg: &str) -> Result<(String, String), SetError> {
    let Some((name, value)) = arg.split_once('=') else {
        return Err(SetError::NoEquals(arg.into()));
    };
    if !is_name(name) {
        return Err(SetError::Name(name.into()));
    }
    if value.len() > MAX_VALUE {
        return Err(SetError::TooLong(name.into()));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Whether `s` can name a variable: letters, digits and `_`, not starting with a digit.
pub(crate) fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Who set a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Default,
    Env,
    Set,
}

impl Origin {
    fn label(self, name: &str) -> String {
        match self {
            Origin::Default => "its default in [vars]".into(),
            Origin::Env => format!("{ENV_PREFIX}{name}"),
            Origin::Set => "--set".into(),
        }
    }
}

/// A string value with its variables set, and what they were, for messages about it.
pub(crate) struct Expanded {
    /// The text.
    pub text: String,
    /// "$threads = 'x' (from --set)", when it used variables.
    pub note: Option<String>,
}

/// Every variable's value and who set it, and the names the profile used.
pub(crate) struct Vars {
    values: BTreeMap<String, (String, Origin)>,
    used: RefCell<BTreeSet<String>>,
}

impl Vars {
    /// The variables from `defaults` ([vars]), then `overrides`.
    pub(crate) fn new(defaults: Vec<(String, String)>, overrides: &Overrides) -> Vars {
        let mut values = BTreeMap::new();
        let layers = [
            (defaults.as_slice(), Origin::Default),
            (overrides.env.as_slice(), Origin::Env),
            (overrides.sets.as_slice(), Origin::Set),
        ];
        for (layer, origin) in layers {
            for (k, v) in layer {
                values.insert(k.clone(), (v.clone(), origin));
            }
        }
        Vars {
            values,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    /// `text` with its variables set; an error says which one is never set or what is wrong.
    pub(crate) fn expand(&self, text: &str) -> Result<Expanded, VarError> {
        if !text.contains('$') {
            return Ok(Expanded {
                text: text.to_string(),
                note: None,
            });
        }
        let mut out = String::new();
        let mut notes = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let (name, after) = variable(&rest[at + 1..])?;
            rest = after;
            let Some(name) = name else {
                out.push('$');
                continue;
            };
            let (value, origin) = self
                .values
                .get(name)
                .ok_or_else(|| VarError::Unset(name.into()))?;
            self.used.borrow_mut().insert(name.to_string());
            out.push_str(value);
            notes.push(format!("${name} = '{value}' from {}", origin.label(name)));
            if out.len() > MAX_VALUE {
                return Err(VarError::TooLong);
            }
        }
        out.push_str(rest);
        Ok(Expanded {
            text: out,
            note: (!notes.is_empty()).then(|| notes.join(", ")),
        })
    }

    /// The first `--set` of a variable the profile neither declares nor uses, with the nearest
    /// name the profile has.
    pub(crate) fn unused_set(&self, overrides: &Overrides, declared: &[String]) -> Option<String> {
        let used = self.used.borrow();
        let known: Vec<&str> = used
            .iter()
            .map(String::as_str)
            .chain(declared.iter().map(String::as_str))
            .collect();
        let (name, _) = overrides
            .sets
            .iter()
            .find(|(k, _)| !known.contains(&k.as_str()))?;
        let near = crate::error::nearest(name, known.iter().copied())
            .map(|n| format!("; did you mean '{n}'?"))
            .unwrap_or_default();
        Some(format!(
            "--set {name}: the profile has no variable '{name}'{near}"
        ))
    }
}

/// After a `$`: the variable's name (none for `$$`, a literal dollar) and the text after it.
fn variable(s: &str) -> Result<(Option<&str>, &str), VarError> {
    if let Some(after) = s.strip_prefix('$') {
        return Ok((None, after));
    }
    let (name, after) = if let Some(inner) = s.strip_prefix('{') {
        let end = inner.find('}').ok_or(VarError::Unclosed)?;
        (&inner[..end], &inner[end + 1..])
    } else {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        s.split_at(end)
    };
    if !is_name(name) {
        return Err(VarError::Name(name.into()));
    }
    Ok((Some(name), after))
}
