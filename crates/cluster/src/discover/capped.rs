//! A JSON list read with a cap on its length: the deserializer stops at the first element past
//! the cap, so a reply of millions of empty objects costs no more memory than the cap allows
//! (a 12 MB page of `{}` endpoints took the controller to 521 MB).

use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use std::marker::PhantomData;

/// At most `N` elements of `T`; a longer list is an error naming the cap.
#[derive(Debug)]
pub struct Capped<T, const N: usize>(pub Vec<T>);

impl<T, const N: usize> Default for Capped<T, N> {
    fn default() -> Self {
        Capped(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for Capped<T, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Seq<T, N> {
            type Value = Capped<T, N>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a list of at most {N}")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(N).min(1024));
                while let Some(item) = seq.next_element()? {
                    if items.len() == N {
                        return Err(serde::de::Error::custom(format!(
                            "more than {N} elements in one list"
                        )));
                    }
                    items.push(item);
                }
                Ok(Capped(items))
            }
        }
        d.deserialize_seq(Seq::<T, N>(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_past_its_cap_is_refused() {
        let ok: Capped<u8, 3> = serde_json::from_str("[1,2,3]").unwrap();
        assert_eq!(ok.0, [1, 2, 3]);
        let e = serde_json::from_str::<Capped<u8, 3>>("[1,2,3,4]").unwrap_err();
        assert!(e.to_string().contains("more than 3 elements"), "{e}");
    }
}
