//! The Kubernetes manifests (deploy/kubernetes): validated offline against the API schemas (the
//! PodMonitor, a Prometheus Operator CRD, against the operator's schema from PyPI's
//! cloudcoil-models-prometheus-operator, see validate.py) and held to their security and wiring
//! invariants by deploy/kubernetes/validate.py, whose checks are shown to catch a broken
//! manifest; the mesh file in the ConfigMap passes `fathom mesh check`; and the image build
//! script is valid shell whose static-binary check refuses a dynamically linked one. (CI does not build the image: a static release build takes
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
    assert!(text.contains("base: 12 resources"), "{text}");
    assert!(
        text.contains("overlays/host-network: 12 resources"),
        "{text}"
    );
    assert!(
        text.contains("overlays/prometheus-operator: 13 resources")
            && text.contains("the PodMonitor against the Prometheus Operator's schema"),
        "{text}"
    );
}

/// The ConfigMap's mesh.toml, taken out of its YAML block.
fn mesh_file() -> String {
    let text = std::fs::read_to_string(kubernetes_dir().join("base/mesh-configmap.yaml"))
        .expect("read the ConfigMap");
    let block = text
        .split_once("  mesh.toml: |\n")
        .expect("a mesh.toml key")
        .1;
    block
        .lines()
        .take_while(|l| l.is_empty() || l.starts_with("    "))
        .map(|l| format!("{}\n", l.get(4..).unwrap_or("")))
        .collect()
}

#[test]
fn the_configmaps_mesh_file_passes_mesh_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("mesh.toml");
    std::fs::write(&file, mesh_file()).expect("write");
    let out = run_program(
        env!("CARGO_BIN_EXE_fathom"),
        &["mesh", "check", file.to_str().expect("utf-8 path")],
        30,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Away from a cluster the source cannot be looked at; the file is checked all the same.
    assert!(said.contains("(cannot look here: "), "{said}");
    assert!(
        said.contains("rr: `fathom rr --size 64 -t 1s --rate 10` every 30 s, normal, ring targets"),
        "{said}"
    );
    assert!(
        said.contains("stream: `fathom stream -t 5s` every 900 s, exclusive, rotate targets"),
        "{said}"
    );
}

#[test]
fn the_checks_catch_a_broken_manifest() {
    // Each change breaks one promise; validate.py must fail and name each.
    let breaks: [Break; 8] = [
        (
            "base/agent-daemonset.yaml",
            "serviceAccountName: fathom-agent",
            "serviceAccountName: default",
            "default service account",
        ),
        (
            "base/controller-rbac.yaml",
            "verbs: [\"list\"]",
            "verbs: [\"list\", \"watch\"]",
            "more than list on endpointslices",
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
        (
            "base/mesh-configmap.yaml",
            "  mesh.toml: |",
            "  mesh-file.toml: |",
            "--mesh /etc/fathom/mesh.toml is no ConfigMap's key mounted there",
        ),
        (
            "overlays/prometheus-operator/podmonitor.yaml",
            "interval: 30s",
            "interval: 30 seconds",
            "podMetricsEndpoints.0.interval: String should match pattern",
        ),
        (
            "overlays/prometheus-operator/podmonitor.yaml",
            "- port: metrics",
            "- port: metric",
            "scrapes port 'metric', which the agents do not name",
        ),
    ];
    // All in one copy: validate.py names every failure it finds, and one run is enough.
    assert_caught(&breaks);
    // An unknown field is found in a round trip through the operator's model, which a
    // PodMonitor failing its schema never makes: a copy of its own.
    assert_caught(&[(
        "overlays/prometheus-operator/podmonitor.yaml",
        "scrapeTimeout: 10s",
        "scrapeTimeOut: 10s",
        "unknown field spec.podMetricsEndpoints[0].scrapeTimeOut",
    )]);
}

/// A change that breaks a promise: (file, text, changed to, what validate.py must say).
type Break = (&'static str, &'static str, &'static str, &'static str);

/// Makes every change of `breaks` in one copy of the manifests; validate.py must fail naming
/// each.
fn assert_caught(breaks: &[Break]) {
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
