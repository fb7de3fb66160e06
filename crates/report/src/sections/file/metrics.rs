//! The file copy's metrics: the share of the measured window each end spent in its disk and in
//! the network.

use super::model::FileStages;
use crate::metric::Metric;
use crate::model::Report;

/// The sender's time in its disk, a share of the window.
pub const SENDER_DISK_SHARE: Metric = Metric {
    name: "file_sender_disk_share",
    label: "Sender's disk time, share of the window",
    unit: "",
    run: Some(|r| share(r, |st| st.sender_disk_s)),
    interval: None,
};

/// The sender's time in the network, a share of the window.
pub const SENDER_NET_SHARE: Metric = Metric {
    name: "file_sender_net_share",
    label: "Sender's network time, share of the window",
    unit: "",
    run: Some(|r| share(r, |st| st.sender_net_s)),
    interval: None,
};

/// The receiver's time in its disk, a share of the window.
pub const RECEIVER_DISK_SHARE: Metric = Metric {
    name: "file_receiver_disk_share",
    label: "Receiver's disk time, share of the window",
    unit: "",
    run: Some(|r| share(r, |st| st.receiver_disk_s)),
    interval: None,
};

/// The receiver's time in the network, a share of the window.
pub const RECEIVER_NET_SHARE: Metric = Metric {
    name: "file_receiver_net_share",
    label: "Receiver's network time, share of the window",
    unit: "",
    run: Some(|r| share(r, |st| st.receiver_net_s)),
    interval: None,
};

/// The kind's metrics, in the order a series lists them.
pub const METRICS: &[Metric] = &[
    SENDER_DISK_SHARE,
    SENDER_NET_SHARE,
    RECEIVER_DISK_SHARE,
    RECEIVER_NET_SHARE,
];

/// A stage's seconds (`of`) over the window's, when the run is a copy with a window.
fn share(r: &Report, of: fn(&FileStages) -> f64) -> Option<f64> {
    let s = &r.summary;
    let f = s.file()?;
    (s.seconds > 0.0).then(|| of(&f.stages) / s.seconds)
}
