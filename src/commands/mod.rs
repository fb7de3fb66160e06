//! One module per subcommand: glue from validated options to the controller or agent, and out.

pub mod compare;
pub mod compare_clear;
pub mod doctor;
pub mod file;
pub mod install;
pub mod iperf3;
pub mod iperf3_cli;
pub mod iperf3_client;
pub mod iperf3_udp;
pub mod key;
pub mod lab;
pub mod launch;
pub mod output;
pub mod plot;
pub mod profile;
pub mod profile_run;
pub mod report;
pub mod runs;
pub mod serve;
pub mod show;
pub mod study;
pub mod sweep;
pub mod test;
