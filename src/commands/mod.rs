//! One module per subcommand: glue from validated options to the controller or agent, and out.

pub mod compare;
pub mod compare_clear;
pub mod file;
pub mod key;
pub mod lab;
pub mod output;
pub mod plot;
pub mod report;
pub mod rr;
pub mod runs;
pub mod serve;
pub mod show;
pub mod stream;
pub mod study;
pub mod sweep;
pub mod test;
pub mod udp;
/// Raises the soft open-files limit to the hard limit: thousands of flows need thousands of
/// descriptors, and the usual soft limit is 1024.
pub fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid pointer to an rlimit; failure leaves the limit as it was.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
