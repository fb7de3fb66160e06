//! The CI smoke of the fuzz targets (`fuzz/`): every input of the `plan` target's kept corpus;
//! every input of the `control`, `file` and `iperf3_control` targets', then a short random run
//! of mutations of each; each through its target's entry point, in a private network
//! namespace (root; skipped without it outside CI). A panic on any thread (as libFuzzer's panic
//! hook would abort on), or an input that takes longer than [`SLOW`], fails the test. The long
//! coverage-guided runs are in fuzz/README.md.

mod common;

use fathom::agent::{fuzz, AgentConfig};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Longest one input may take.
const SLOW: Duration = Duration::from_secs(10);
/// Time for the random part, per target.
const RANDOM_RUN: Duration = Duration::from_secs(20);
const FILE_RANDOM_RUN: Duration = Duration::from_secs(5);
const IPERF3_RANDOM_RUN: Duration = Duration::from_secs(5);

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|f| f.expect("a corpus entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read(f).expect("read a corpus file"))
        .collect()
}

/// Runs `input` as the `control` fuzz target does (first byte: odd = keyed agent).
fn one(input: &[u8]) {
    let Some((&pick, bytes)) = input.split_first() else {
        return;
    };
    let cfg = AgentConfig {
        key: (pick & 1 == 1).then(|| b"fuzz".to_vec()),
        ..AgentConfig::default()
    };
    within_slow(input, || fuzz::fuzz_session(bytes, &cfg));
}

/// Runs `input` as the `file` fuzz target does.
fn one_file(input: &[u8]) {
    within_slow(input, || fuzz::fuzz_file(input));
}

/// Runs `target`, which must end within [`SLOW`].
fn within_slow(input: &[u8], target: impl FnOnce()) {
    let started = Instant::now();
    target();
    assert!(
        started.elapsed() < SLOW,
        "input {input:02x?} took {:?}",
        started.elapsed()
    );
}

/// Runs mutations of `corpus` through `target` for `time`; how many.
fn random_run(corpus: Vec<Vec<u8>>, time: Duration, target: fn(&[u8])) -> u64 {
    let strategy = mutated(corpus);
    let mut runner = TestRunner::default();
    let (start, mut runs) = (Instant::now(), 0u64);
    while start.elapsed() < time {
        let tree = strategy.new_tree(&mut runner).expect("a mutated input");
        target(&tree.current());
        runs += 1;
    }
    runs
}

/// A corpus entry with a few bytes overwritten, inserted or cut.
fn mutated(corpus: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let edits = prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6);
    (prop::sample::select(corpus), edits).prop_map(|(mut input, edits)| {
        for (at, byte, how) in edits {
            let i = at.index(input.len() + 1);
            match how {
                0 if i < input.len() => input[i] = byte,
                1 => input.insert(i, byte),
                _ => input.truncate(i.max(1)),
            }
        }
        input
    })
}

#[test]
fn the_fuzz_targets_survive_their_corpus_and_a_random_run() {
    if !common::root_or_ci() {
        return;
    }
    let panics = Arc::new(AtomicUsize::new(0));
    let counted = panics.clone();
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        counted.fetch_add(1, Ordering::SeqCst);
        report(info);
    }));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        fuzz::isolate_network().expect("a private network namespace");
        for input in corpus("plan") {
            fuzz::fuzz_plan(&input, &AgentConfig::default());
        }
        let control = corpus("control");
        for input in &control {
            one(input);
        }
        let files = corpus("file");
        for input in &files {
            one_file(input);
        }
        let runs =
            random_run(control, RANDOM_RUN, one) + random_run(files, FILE_RANDOM_RUN, one_file);
        let _ = tx.send(runs);
    });
    let runs = rx
        .recv_timeout(Duration::from_secs(90))
        .expect("the smoke run ended within 90 s (a panic in it is printed above)");
    let panics = panics.load(Ordering::SeqCst);
    assert_eq!(panics, 0, "{panics} threads panicked (printed above)");
    eprintln!("fuzz smoke: corpus and {runs} mutated inputs, no failure");
}

/// Runs `input` as the `iperf3_control` fuzz target does (no sockets: no namespace needed).
fn one_iperf3(input: &[u8]) {
    within_slow(input, || fathom_iperf3::fuzz::fuzz_control(input));
}

#[test]
fn the_iperf3_control_target_survives_its_corpus_and_a_random_run() {
    let corpus = corpus("iperf3_control");
    assert!(
        corpus.len() >= 10,
        "the seeds of fuzz/examples/iperf3_seeds.rs"
    );
    corpus.iter().for_each(|input| one_iperf3(input));
    let runs = random_run(corpus, IPERF3_RANDOM_RUN, one_iperf3);
    eprintln!("iperf3 fuzz smoke: corpus and {runs} mutated inputs, no failure");
}

#[test]
fn the_file_corpus_holds_the_seeds() {
    let corpus = corpus("file");
    for (name, seed) in fuzz::file_seeds() {
        assert!(
            corpus.contains(&seed),
            "seed {name} is not in fuzz/corpus/file: `cargo run --example seeds -- corpus` in fuzz/"
        );
    }
}
