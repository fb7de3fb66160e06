//! Shell completions and manual pages, generated from the command line's definitions.

mod common;
use common::*;

#[test]
fn completions_are_generated_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef fathom"),
        ("fish", "complete -c fathom"),
    ] {
        let out = run(&["completions", shell], 30);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(marker), "{shell}: {marker} missing");
        for word in ["stream", "sweep", "parallel", "lab"] {
            assert!(text.contains(word), "{shell}: {word} missing");
        }
    }
    let out = run(&["completions", "tcsh"], 30);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bash"), "{}", stderr(&out));
}

#[test]
fn the_manual_pages_are_generated() {
    let out = run_ok(&["man"], 30);
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH fathom"),
        "{page}"
    );
    assert!(page.contains("stream"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    run_ok(&["man", "--out", &dir.path().display().to_string()], 30);
    for name in ["fathom.1", "fathom-stream.1", "fathom-lab-up.1"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
        assert!(text.contains(".TH"), "{name}: {text}");
    }
    let stream = std::fs::read_to_string(dir.path().join("fathom-stream.1")).unwrap();
    assert!(stream.contains("parallel"), "{stream}");
}
