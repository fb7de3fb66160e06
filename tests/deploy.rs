//! The Kubernetes manifests (deploy/kubernetes): validated offline against the API schemas and
//! held to their security invariants by deploy/kubernetes/validate.py, whose checks are shown to
//! catch a broken manifest; and the image build script is valid shell whose static-binary check
//! refuses a dynamically linked one. (CI does not build the image: a static release build takes
//! about 18 minutes on the project's 2-core machine.)

mod common;
use common::run_program;
use std::path::{Path, PathBuf};

fn kubernetes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes")
}

/// Runs validate.py over the manifests in `dir`: (success, stdout and stderr).
fn validate(dir: &Path) -> (bool, String) {
    let script = dir.join("validate.py");
    let out = run_program("python3", &[script.to_str().expect("utf-8 path")], 120);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !text.contains("No module named"),
        "kubernetes-validate is missing: run scripts/install-test-deps.sh\n{text}"
    );
    (out.status.success(), text)
}

/// Copies the tree `from` into `to` (a handful of small files).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn manifests_validate_and_keep_their_security_invariants() {
    let (ok, text) = validate(&kubernetes_dir());
    assert!(ok, "{text}");
    assert!(text.contains("base: 8 resources"), "{text}");
    assert!(
        text.contains("overlays/host-network: 8 resources"),
        "{text}"
    );
}

#[test]
fn the_checks_catch_a_broken_manifest() {
    // Each change breaks one promise; validate.py must fail and name each.
    let breaks: [(&str, &str, &str, &str); 5] = [
        (
            "base/agent-daemonset.yaml",
            "automountServiceAccountToken: false",
            "automountServiceAccountToken: true",
            "service-account token",
        ),
        (
            "base/controller-rbac.yaml",
            "verbs: [\"get\", \"list\", \"watch\"]\n  - apiGroups: [\"\"]",
            "verbs: [\"get\", \"list\", \"watch\", \"create\"]\n  - apiGroups: [\"\"]",
            "more than get/list/watch",
        ),
        (
            "base/controller-rbac.yaml",
            "kind: Role\nmetadata",
            "kind: ClusterRole\nmetadata",
            "ClusterRole",
        ),
        (
            "base/controller-job.yaml",
            "readOnlyRootFilesystem: true",
            "readOnlyRootFilesystem: false",
            "root file system is writable",
        ),
        (
            "base/agent-daemonset.yaml",
            "        runAsUser: 65532",
            "        runAsUser: 0",
            "non-root",
        ),
    ];
    // All in one copy: validate.py names every failure it finds, and one run is enough.
    let scratch = tempfile::tempdir().expect("tempdir");
    let dir = scratch.path().join("kubernetes");
    copy_tree(&kubernetes_dir(), &dir);
    for (file, from, to, _) in breaks {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains(from), "{file} no longer holds {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
    }
    let (ok, out) = validate(&dir);
    assert!(!ok, "the broken manifests passed:\n{out}");
    for (file, _, to, named) in breaks {
        assert!(
            out.contains(named),
            "{file} with {to:?}: {named:?} not named:\n{out}"
        );
    }
}

#[test]
fn the_image_script_parses_and_refuses_a_dynamic_binary() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/build-image.sh");
    let script = script.to_str().expect("utf-8 path");
    let out = run_program("bash", &["-n", script], 30);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The test binary itself is linked against the system's shared libc.
    let me = std::env::current_exe().expect("current exe");
    let me = me.to_str().expect("utf-8 path");
    let out = run_program(script, &["--check-static", me], 30);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not statically linked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
