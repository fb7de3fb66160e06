//! fathom: a network performance lab in one binary. `main` only parses, dispatches and maps
//! outcomes to exit codes: 0 ok, 1 the test or the agent failed, 2 bad usage.

use clap::Parser;
use fathom::{cli, commands, Failure};
use std::process::ExitCode;

fn main() -> ExitCode {
    fathom_engine::tls::prefer_vector_copies();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let json = args.iter().any(|a| a == "--json");
    let mut cli = match cli::Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => return usage(e, json),
    };
    if let Err(f) = cli.command.discover() {
        return fail(f, json);
    }
    fathom::fdlimit::raise();
    let argv: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let r = match cli.command {
        cli::Command::Test(cli::test_args::TestArgs::Stream(s)) if s.iperf3.is_some() => {
            commands::iperf3_client::run(&s, s.iperf3.as_deref().unwrap_or_default(), &argv)
        }
        cli::Command::Test(cli::test_args::TestArgs::Udp(u)) if u.iperf3.is_some() => {
            commands::iperf3_udp::run(&u, u.iperf3.as_deref().unwrap_or_default(), &argv)
        }
        cli::Command::Test(t) => commands::test::run_args(&t, &argv),
        cli::Command::Sweep(a) => commands::sweep::run(&a, &argv),
        cli::Command::Runs(a) => commands::runs::run(&a),
        cli::Command::Show(a) => commands::show::run(&a),
        cli::Command::Compare(a) => commands::compare::run(&a),
        cli::Command::Report(a) => commands::report::run(&a),
        cli::Command::Plot(a) => commands::plot::run(&a),
        cli::Command::Study(a) => commands::study::run(&a, &argv),
        cli::Command::Serve(a) => commands::serve::run(&a),
        cli::Command::Iperf3(a) => commands::iperf3_cli::run(&a),
        cli::Command::Doctor(a) => commands::doctor::run(&a),
        cli::Command::Profile(a) => commands::profile::run(&a),
        cli::Command::Mesh(a) => commands::mesh::run(&a, &argv),
        cli::Command::Key(a) => commands::key::run(&a),
        cli::Command::Completions(a) => commands::install::completions(&a),
        cli::Command::Man(a) => commands::install::man(&a),
        cli::Command::Lab(a) => return lab(a, json),
        cli::Command::Launch(a) => return launch(&a, &argv, json),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail(f, json),
    }
}

/// `fathom lab`: the lab prints its own output (JSON errors included) and picks its exit code.
fn lab(a: cli::lab::LabArgs, json: bool) -> ExitCode {
    let exe = std::env::current_exe().unwrap_or_else(|_| "fathom".into());
    match commands::lab::run(a, &exe) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => fail(commands::lab::failure(e), json),
    }
}

/// `fathom launch`: every rank exits with the test's exit code.
fn launch(a: &cli::launch::LaunchArgs, argv: &[String], json: bool) -> ExitCode {
    match commands::launch::run(a, argv) {
        Ok(code) => ExitCode::from(code),
        Err(f) => fail(f, json),
    }
}

/// clap's errors: help and version go out as usual; real errors become one line, exit 2.
fn usage(e: clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind::*;
    if matches!(
        e.kind(),
        DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    fail(
        Failure::Usage(cli::error::one_line(&e.render().to_string())),
        json,
    )
}

fn fail(f: Failure, json: bool) -> ExitCode {
    let (msg, code) = match f {
        Failure::Usage(m) => (m, 2),
        Failure::Runtime(m) => (m, 1),
        Failure::Reported => return ExitCode::from(1),
    };
    if json {
        commands::output::write_stdout(&fathom_report::json::error_document(&msg));
    }
    eprintln!("fathom: {msg}");
    ExitCode::from(code)
}
