//! A profile group's CSV columns: each flow operation's figures of the interval at both ends,
//! `flowop{N}_{client|server}_{count|bytes|failed|p50_us|p99_us}` for N = 1 to
//! [`PROFILE_OPS`], the same columns for every profile (an operation the program does not
//! have is left empty, as every flow row is), so that runs of different profiles line up.

use super::model::{OpInterval, OpSpan};
use crate::floor::text::num;
use crate::model::Interval;
use fathom_proto::profile::PROFILE_OPS;

/// Columns per flow operation: five figures at each of the two ends.
const PER_OP: usize = 10;

/// The five columns of flow operation `$n` at end `$end`.
macro_rules! end_columns {
    ($n:literal, $end:literal) => {
        [
            concat!("flowop", $n, "_", $end, "_count"),
            concat!("flowop", $n, "_", $end, "_bytes"),
            concat!("flowop", $n, "_", $end, "_failed"),
            concat!("flowop", $n, "_", $end, "_p50_us"),
            concat!("flowop", $n, "_", $end, "_p99_us"),
        ]
    };
}

/// The ten columns of each flow operation `$n`, in order.
macro_rules! op_columns {
    ($($n:literal)*) => {
        [$([end_columns!($n, "client"), end_columns!($n, "server")]),*]
    };
}

/// The columns, by operation, then end, then figure.
static COLUMNS: [[[&str; 5]; 2]; PROFILE_OPS] = op_columns!(1 2 3 4 5 6 7 8 9 10 11 12);

/// The profile's CSV columns, in order.
pub fn heads() -> &'static [&'static str] {
    COLUMNS.as_flattened().as_flattened()
}

/// An interval's cells under [`heads`] (`None`: a flow's row, all empty).
pub fn cells(iv: Option<&Interval>) -> Vec<String> {
    let ops: &[OpInterval] = iv.and_then(Interval::profile).map_or(&[], |p| &p.ops);
    let mut row = Vec::with_capacity(PROFILE_OPS * PER_OP);
    for i in 0..PROFILE_OPS {
        match ops.get(i) {
            Some(o) => {
                row.extend(end(&o.client));
                row.extend(end(&o.server));
            }
            None => row.extend(std::iter::repeat_n(String::new(), PER_OP)),
        }
    }
    row
}

/// One end's five cells; a time is empty when no run completed.
fn end(s: &OpSpan) -> [String; 5] {
    let time = |t: Option<f64>| t.map_or(String::new(), num);
    [
        s.count.to_string(),
        s.bytes.to_string(),
        s.failed.to_string(),
        time(s.latency_p50_us),
        time(s.latency_p99_us),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_its_ten_columns_named_in_order() {
        let h = heads();
        assert_eq!(h.len(), PROFILE_OPS * PER_OP);
        assert_eq!(h[0], "flowop1_client_count");
        assert_eq!(h[5], "flowop1_server_count");
        assert_eq!(h[14], "flowop2_client_p99_us");
        assert_eq!(h[h.len() - 1], "flowop12_server_p99_us");
        assert_eq!(cells(None), vec![String::new(); h.len()]);
    }
}
