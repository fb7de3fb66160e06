//! Percentages: `0.1%` is a probability of 0.001; `0` alone is accepted, any other number needs
//! its `%` sign so that `0.01` is never read as 1%.

use crate::{number, Refusal};

/// Reads a percentage into a probability in `[0, 1]`.
pub fn parse(text: &str) -> Result<f64, Refusal> {
    let digits = match text.strip_suffix('%') {
        Some(d) => d,
        None if text == "0" => "0",
        None => {
            return Err(Refusal::new(
                text,
                "needs a '%' sign; write 0.1% for one packet in a thousand",
            ))
        }
    };
    let value =
        number(digits).ok_or_else(|| Refusal::new(text, "is not a percentage; try 0.1%"))?;
    if !(0.0..=100.0).contains(&value) {
        return Err(Refusal::new(text, "must be between 0% and 100%"));
    }
    Ok(value / 100.0)
}

/// Writes a probability as a percentage without trailing zeros (`0.1%`).
pub fn format(probability: f64) -> String {
    format!("{}%", probability * 100.0)
}
