//! The test subcommands as one enum, [`TestArgs`]: `fathom stream|rr|crr|udp|file`, and the
//! same tests offered under `sweep` and `launch` ([`Offered`]). A new kind adds a variant here,
//! its row in [`OFFERED`] and its args file, which implements [`KindArgs`].

use super::common::CommonArgs;
use super::error::ArgsError;
use super::file::FileArgs;
use super::kind::KindArgs;
use super::rr::RrArgs;
use super::stream::StreamArgs;
use super::tls::TlsArgs;
use super::udp::UdpArgs;
use clap::{ArgMatches, FromArgMatches, Subcommand};
use fathom_proto::plan::{KindId, TestPlan};

/// The tests: one variant per subcommand.
#[derive(Subcommand, Debug, Clone)]
pub enum TestArgs {
    /// Bulk transfer over TCP: throughput, CPU, TCP internals.
    Stream(StreamArgs),
    /// Request/response (TCP, or UDP with --udp): transactions/s and latency percentiles.
    Rr(RrArgs),
    /// Connect/request/response/close: a new TCP connection per transaction.
    Crr(RrArgs),
    /// A UDP datagram stream: packet rate, loss, duplicates, reordering and jitter.
    Udp(UdpArgs),
    /// Copy a file to or from an agent's disk, and say where the time went.
    File(FileArgs),
}

/// How `sweep` and `launch` offer each test: (subcommand, its line under `sweep`, its line under
/// `launch`, without a full stop, as clap shows doc comments); `None` where it is not offered.
const OFFERED: &[(&str, Option<&str>, Option<&str>)] = &[
    (
        "stream",
        Some("Sweep a stream test"),
        Some("Bulk transfer over TCP from every client rank to the server rank"),
    ),
    (
        "rr",
        Some("Sweep a request/response test"),
        Some("Request/response between every client rank and the server rank"),
    ),
    (
        "crr",
        Some("Sweep a connect/request/response test"),
        Some("Connect/request/response/close between every client rank and the server rank"),
    ),
    (
        "udp",
        Some("Sweep a UDP stream test"),
        Some("A UDP datagram stream from every client rank to the server rank"),
    ),
    ("file", None, None),
];

impl TestArgs {
    /// The test's kind (as its subcommand names it), its options and the shared ones among them.
    fn parts(&self) -> (KindId, &dyn KindArgs, &CommonArgs) {
        match self {
            TestArgs::Stream(a) => (KindId::Stream, a, &a.common),
            TestArgs::Rr(a) => (KindId::Rr, a, &a.common),
            TestArgs::Crr(a) => (KindId::Crr, a, &a.common),
            TestArgs::Udp(a) => (KindId::Udp, a, &a.common),
            TestArgs::File(a) => (KindId::File, a, &a.common),
        }
    }

    /// The kind its subcommand names (`rr --udp` is still `rr`).
    pub fn kind(&self) -> KindId {
        self.parts().0
    }

    /// The options every test shares.
    pub fn common(&self) -> &CommonArgs {
        self.parts().2
    }

    /// The shared options, to fill in (discovery, launch).
    pub fn common_mut(&mut self) -> &mut CommonArgs {
        match self {
            TestArgs::Stream(a) => &mut a.common,
            TestArgs::Rr(a) | TestArgs::Crr(a) => &mut a.common,
            TestArgs::Udp(a) => &mut a.common,
            TestArgs::File(a) => &mut a.common,
        }
    }

    /// The shared options as the test runs with them.
    pub fn run_common(&self) -> Result<CommonArgs, ArgsError> {
        let (_, args, common) = self.parts();
        args.run_common(common)
    }

    /// Validates the options into a plan; errors name the flag.
    pub fn plan(&self) -> Result<TestPlan, ArgsError> {
        let (kind, args, _) = self.parts();
        args.plan_for(kind).map_err(|e| match e {
            ArgsError::Plan(p) => ArgsError::Field {
                flag: self.flag_of(p.field),
                message: p.message,
            },
            e => e,
        })
    }

    /// The flags that set the plan field `field`, as this test's options define them (the
    /// field's own name where none does).
    pub fn flag_of(&self, field: &str) -> String {
        let (kind, args, _) = self.parts();
        let tls = args.tls().map_or(&[][..], |_| super::tls::SETS);
        let mut sets = args.sets().iter().chain(tls).chain(super::common::SETS);
        let tests = TestArgs::augment_subcommands(clap::Command::new("tests"));
        let cmd = tests.find_subcommand(kind.descriptor().command);
        match (sets.find(|s| s.fields.contains(&field)), cmd) {
            (Some(s), Some(cmd)) => s.flags(cmd),
            _ => field.to_string(),
        }
    }

    /// The TLS options, for the kinds that take them.
    pub fn tls(&self) -> Option<&TlsArgs> {
        self.parts().1.tls()
    }

    /// The shared options for `--agents-from` to fill in; an error where the kind refuses it.
    pub fn discovery_mut(&mut self) -> Result<&mut CommonArgs, ArgsError> {
        self.parts().1.discovery()?;
        Ok(self.common_mut())
    }
}

/// Where a test is offered besides its own subcommand.
#[derive(Clone, Copy)]
pub enum Place {
    /// `fathom sweep TEST`.
    Sweep,
    /// `fathom launch TEST`.
    Launch,
}

/// The line a test's subcommand shows under `place`; `None` where it is not offered.
fn offered(name: &str, place: Place) -> Option<&'static str> {
    let (_, sweep, launch) = OFFERED.iter().find(|(n, _, _)| *n == name)?;
    match place {
        Place::Sweep => *sweep,
        Place::Launch => *launch,
    }
}

/// What a place adds to every test it offers: its own options.
pub trait Extra: Sized {
    /// The place.
    const PLACE: Place;
    /// Adds the place's options to a test's subcommand.
    fn augment(cmd: clap::Command) -> clap::Command;
    /// The place's options, from the test subcommand's matches.
    fn from_matches(m: &ArgMatches) -> Result<Self, clap::Error>;
}

/// A test as a place offers it (`fathom sweep TEST`, `fathom launch TEST`): the test with its
/// options, and the place's own.
#[derive(Debug, Clone)]
pub struct Offered<E> {
    /// The test.
    pub test: TestArgs,
    /// The place's own options.
    pub extra: E,
}

impl<E: Extra> FromArgMatches for Offered<E> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let (_, sub) = m
            .subcommand()
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingSubcommand))?;
        Ok(Offered {
            test: TestArgs::from_arg_matches(m)?,
            extra: E::from_matches(sub)?,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl<E: Extra> Subcommand for Offered<E> {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        let tests = TestArgs::augment_subcommands(clap::Command::new("tests"));
        tests
            .get_subcommands()
            .filter_map(|s| Some(E::augment(s.clone()).about(offered(s.get_name(), E::PLACE)?)))
            .fold(cmd, clap::Command::subcommand)
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        offered(name, E::PLACE).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn test(args: &[&str]) -> TestArgs {
        let argv = std::iter::once("fathom").chain(args.iter().copied());
        match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Command::Test(t)) => t,
            other => panic!("{args:?} is not a test: {other:?}"),
        }
    }

    fn named(t: &TestArgs, pairs: &[(&str, &str)]) {
        for (field, flag) in pairs {
            assert_eq!(t.flag_of(field), *flag, "{field}");
        }
    }

    #[test]
    fn plan_fields_are_named_by_the_flags_that_set_them() {
        let shared = [
            ("flows", "-P/--parallel"),
            ("flows.id", "-P/--parallel"),
            ("limit.duration", "-t/--time"),
            ("omit", "--omit"),
            ("interval", "-i/--interval"),
            ("socket.sndbuf", "--sndbuf/--buffer"),
            ("socket.rcvbuf", "--rcvbuf/--buffer"),
            ("socket.mss", "--mss"),
            ("socket.cc", "--cc"),
            ("client.affinity", "--affinity (this side's CPUs)"),
            ("server.affinity", "--affinity (the agent's CPUs, after /)"),
            ("client.cpu_set", "--cpus"),
            ("server.cpu_set", "--cpus"),
            ("client.threads", "--threads"),
            ("server.threads", "--threads"),
            ("flows.dir", "flows.dir"),
        ];
        for args in [
            &["stream"][..],
            &["rr"],
            &["crr"],
            &["udp"],
            &["file", "get", "h:x", "y"],
        ] {
            named(&test(args), &shared);
        }
        let tls = [("tls", "--tls"), ("tls.record", "--tls-record")];
        named(&test(&["stream"]), &tls);
        named(&test(&["rr"]), &tls);
        named(
            &test(&["stream"]),
            &[
                ("limit.bytes", "-n/--bytes"),
                ("write_size", "--write"),
                ("read_size", "--read"),
                ("zerocopy", "--zerocopy"),
            ],
        );
        named(
            &test(&["crr"]),
            &[
                ("limit.transactions", "-n/--transactions"),
                ("rr", "--size"),
                ("rr.request", "--size"),
                ("rr.response", "--size"),
                ("rr.burst", "--burst"),
                ("rr.rate", "--rate"),
                ("rr.udp_timeout", "--udp-timeout"),
                ("rr.test_drop_every", "--test-drop-every"),
            ],
        );
        named(
            &test(&["udp"]),
            &[
                ("limit.datagrams", "-n/--count"),
                ("udp", "-l/--size"),
                ("udp.size", "-l/--size"),
                ("udp.batch", "--batch"),
                ("udp.rate_bps", "--rate"),
                ("udp.pps", "--pps"),
                ("write_size", "-l/--size/--batch"),
            ],
        );
        named(
            &test(&["file", "put", "--size", "1M", "h:x"]),
            &[
                ("file.io", "--io"),
                ("file.size", "--size"),
                ("file.path", "SRC/DST"),
                ("file.local", "SRC/DST"),
                ("file.direct", "--direct"),
            ],
        );
    }

    #[test]
    fn a_refused_field_is_named_by_its_flag() {
        let e = test(&["udp", "--batch", "0"]).plan().unwrap_err();
        assert!(e.to_string().starts_with("--batch: "), "{e}");
        let e = test(&["rr", "--burst", "0"]).plan().unwrap_err();
        assert!(e.to_string().starts_with("--burst: "), "{e}");
    }

    #[test]
    fn every_test_is_offered_or_not_and_named_as_its_kind() {
        let tests = TestArgs::augment_subcommands(clap::Command::new("tests"));
        let names: Vec<&str> = tests.get_subcommands().map(|c| c.get_name()).collect();
        let listed: Vec<&str> = OFFERED.iter().map(|(n, ..)| *n).collect();
        assert_eq!(names, listed);
        assert_eq!(test(&["crr"]).kind().descriptor().command, "crr");
    }
}
