//! A kind's own part of the report's shared records: one typed value per record (`test`,
//! `summary`, each flow, each interval) instead of an `Option` field per kind.
//!
//! In JSON the value sits under its kind's key (`"rr"`, `"udp"`, `"file"`) among the record's
//! other fields, as schema 2 always wrote it; the keys schema 2 wrote for every kind stay in
//! every document, `null` where another kind (or none) owns the record. A kind added later
//! writes only its own key. The enums themselves (`KindTest`, `KindSummary`, `KindFlow`,
//! `KindInterval`) are declared with `kind_value!` beside their records in `model.rs`: a kind
//! with a section adds one variant to each record it extends there, its type from the kind's
//! `sections/<kind>/model.rs`.

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

/// A kind's value in one record: how it is keyed in JSON.
pub trait KindValue: Sized {
    /// The keys every document carries for this record, `null` unless their kind owns it.
    const ALWAYS: &'static [&'static str];
    /// Every kind's key in this record (what docs/schema/result.schema.json must declare).
    const KEYS: &'static [&'static str];
    /// This value's key.
    fn key(&self) -> &'static str;
    /// Writes this value's entry into `map`.
    fn entry<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
    /// The value kept under `key`, if `key` is one of this record's kinds.
    fn read(key: &str, value: Value) -> Option<serde_json::Result<Self>>;
}

/// Declares a record's kind enum: its variants, their JSON keys, and the keys always written.
macro_rules! kind_value {
    ($(#[$doc:meta])* $name:ident in $record:ident, always $always:expr,
     { $($(#[$vdoc:meta])* $variant:ident($ty:ty) = $key:literal, $get:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $name {
            $($(#[$vdoc])* $variant($ty)),+
        }

        impl $crate::model::kind::KindValue for $name {
            const ALWAYS: &'static [&'static str] = $always;
            const KEYS: &'static [&'static str] = &[$($key),+];

            fn key(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => $key),+
                }
            }

            fn entry<M: ::serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                match self {
                    $($name::$variant(v) => map.serialize_entry($key, v)),+
                }
            }

            fn read(key: &str, value: ::serde_json::Value) -> Option<::serde_json::Result<Self>> {
                match key {
                    $($key => Some(::serde_json::from_value(value).map($name::$variant)),)+
                    _ => None,
                }
            }
        }

        impl $record {
            $(
                #[doc = concat!("The `", $key, "` part, when its kind owns this record.")]
                pub fn $get(&self) -> Option<&$ty> {
                    match &self.section {
                        Some($name::$variant(v)) => Some(v),
                        _ => None,
                    }
                }
            )+
        }
    };
}

pub(crate) use kind_value;

/// Serde glue for a record's `#[serde(flatten, with = "kind::keyed")]` field.
pub(crate) mod keyed {
    use super::*;

    /// Writes the always-written keys (`null` but for `value`'s own) and `value`'s own key.
    pub fn serialize<E: KindValue, S: Serializer>(
        value: &Option<E>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for &key in E::ALWAYS {
            match value {
                Some(v) if v.key() == key => v.entry(&mut map)?,
                _ => map.serialize_entry(key, &())?,
            }
        }
        if let Some(v) = value.as_ref().filter(|v| !E::ALWAYS.contains(&v.key())) {
            v.entry(&mut map)?;
        }
        map.end()
    }

    /// Reads the first non-null key that names one of the record's kinds.
    pub fn deserialize<'de, E: KindValue, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<E>, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        for (key, value) in map.into_iter().filter(|(_, v)| !v.is_null()) {
            if let Some(read) = E::read(&key, value) {
                return read.map(Some).map_err(D::Error::custom);
            }
        }
        Ok(None)
    }
}
