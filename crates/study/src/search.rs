//! A sweep that searches instead of trying every value: the number of streams (or any count
//! option) doubles from 1 until a metric reaches a target, then bisects between the last miss and
//! the first hit, so the smallest count that reaches it is found in a few runs. [`Search::next`]
//! reads the series so far and names the next value, or none when the search is over.

use crate::curve::{metric, number_x};
use fathom_report::series::Series;

/// How a sweep searches its count axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    /// The count option searched ("parallel").
    pub axis: String,
    /// The metric that must reach the target ("bits_per_second").
    pub metric: String,
    /// The target, in the metric's unit.
    pub target: f64,
    /// The largest count tried.
    pub max: u32,
}

impl Search {
    /// The next count to run, given the points of `series` so far; `None` when the smallest count
    /// reaching the target is known, or the largest count missed it. A failed point counts as a
    /// miss.
    pub fn next(&self, series: &Series) -> Option<String> {
        let tried: Vec<(u32, f64)> = series
            .points
            .iter()
            .filter_map(|p| {
                let n = number_x(p.param(&self.axis)?)?;
                let y = metric(p, &self.metric).unwrap_or(0.0);
                Some((n as u32, y))
            })
            .collect();
        next_count(&tried, self.target, self.max).map(|n| n.to_string())
    }
}

/// The count to try after `tried` (count, metric): doubling from 1 until one reaches `target`
/// (capped at `max`), then the middle of the last miss below the first hit and that hit.
pub fn next_count(tried: &[(u32, f64)], target: f64, max: u32) -> Option<u32> {
    let first_hit = tried
        .iter()
        .filter(|(_, y)| *y >= target)
        .map(|(n, _)| *n)
        .min();
    let below = |limit: u32| {
        tried
            .iter()
            .filter(|(n, y)| *n < limit && *y < target)
            .map(|(n, _)| *n)
            .max()
    };
    match first_hit {
        Some(hit) => {
            let miss = below(hit).unwrap_or(0);
            let mid = miss + (hit - miss) / 2;
            (hit - miss > 1).then_some(mid)
        }
        None => {
            let last = tried.iter().map(|(n, _)| *n).max().unwrap_or(0);
            (last < max.max(1)).then(|| (last * 2).clamp(1, max.max(1)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::next_count;

    #[test]
    fn doubles_until_a_hit_then_bisects() {
        assert_eq!(next_count(&[], 90.0, 16), Some(1));
        assert_eq!(next_count(&[(1, 10.0)], 90.0, 16), Some(2));
        assert_eq!(next_count(&[(1, 10.0), (2, 20.0)], 90.0, 16), Some(4));
        let stepped = [(1, 10.0), (2, 20.0), (4, 40.0), (8, 95.0)];
        assert_eq!(next_count(&stepped, 90.0, 16), Some(6));
        let mut more = stepped.to_vec();
        more.push((6, 80.0));
        assert_eq!(next_count(&more, 90.0, 16), Some(7));
        more.push((7, 91.0));
        assert_eq!(next_count(&more, 90.0, 16), None, "7 is the smallest");
    }

    #[test]
    fn stops_at_one_or_at_the_limit() {
        assert_eq!(next_count(&[(1, 95.0)], 90.0, 16), None);
        assert_eq!(next_count(&[(8, 10.0)], 90.0, 12), Some(12));
        assert_eq!(next_count(&[(8, 10.0), (12, 20.0)], 90.0, 12), None);
        assert_eq!(next_count(&[(1, 10.0), (2, 95.0)], 90.0, 16), None);
    }
}
