//! The studies, one file each (what they share is in `shared.rs`).

mod cpu_scaling;
mod file_copy;
mod many_flows;
mod rr_payload;
mod shared;
mod small_packets;
mod socket_buffers;
mod streams_to_line_rate;
mod window_vs_rtt;
mod write_size;

use crate::spec::Study;

/// Every study, in list order.
pub(crate) const ALL: [Study; 9] = [
    socket_buffers::STUDY,
    write_size::STUDY,
    rr_payload::STUDY,
    cpu_scaling::STUDY,
    many_flows::STUDY,
    window_vs_rtt::STUDY,
    small_packets::STUDY,
    file_copy::STUDY,
    streams_to_line_rate::STUDY,
];
