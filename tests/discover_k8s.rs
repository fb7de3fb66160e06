//! `--agents-from k8s:` end to end against a stand-in API server on loopback: HTTPS with a CA
//! made here, the service account's token checked, EndpointSlice lists served in pages with a
//! not-ready endpoint among them; the agents found run a real test with exact byte counts.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "stand-in-token";

/// The stand-in API server: its port, its service account directory, the requests it served.
struct ApiServer {
    port: u16,
    sa_dir: std::path::PathBuf,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.sa_dir);
    }
}

/// A CA, and a certificate for 127.0.0.1 signed by it: (CA PEM, server config).
fn tls() -> (String, Arc<rustls::ServerConfig>) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".into()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], der)
        .unwrap();
    (ca.pem(), Arc::new(config))
}

/// One EndpointSlice: `endpoints` (address, ready, pod, zone) on the control port `port`.
fn slice(port: u16, endpoints: &[(&str, bool, &str, &str)]) -> serde_json::Value {
    let eps: Vec<_> = endpoints
        .iter()
        .map(|(ip, ready, pod, zone)| {
            serde_json::json!({"addresses": [ip], "conditions": {"ready": ready},
                "zone": zone, "nodeName": format!("node-{pod}"),
                "targetRef": {"kind": "Pod", "name": pod}})
        })
        .collect();
    serde_json::json!({"addressType": "IPv4", "endpoints": eps,
        "ports": [{"name": "data", "port": 1, "protocol": "TCP"},
                  {"name": "control", "port": port, "protocol": "TCP"}]})
}

/// Starts the stand-in, serving `pages` (each page's `continue` is "page-N" of the next) for
/// at most 60 s.
fn api_server(pages: Vec<Vec<serde_json::Value>>) -> ApiServer {
    let (ca, config) = tls();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let sa_dir = std::path::PathBuf::from(format!(
        "{}/k8s-sa-{}-{port}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    ));
    std::fs::create_dir_all(&sa_dir).unwrap();
    for (file, text) in [
        ("ca.crt", ca.as_str()),
        ("token", TOKEN),
        ("namespace", "perf\n"),
    ] {
        std::fs::write(sa_dir.join(file), text).unwrap();
    }
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until {
            match listener.accept() {
                Ok((s, _)) => serve(s, &config, &pages, &seen),
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    ApiServer {
        port,
        sa_dir,
        requests,
    }
}

/// Answers one request on `tcp`: the page its `continue` names, or 401 without the token.
fn serve(
    tcp: TcpStream,
    config: &Arc<rustls::ServerConfig>,
    pages: &[Vec<serde_json::Value>],
    seen: &Mutex<Vec<String>>,
) {
    tcp.set_nonblocking(false).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let conn = rustls::ServerConnection::new(config.clone()).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
        match tls.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let authorized = head
        .lines()
        .any(|l| l.eq_ignore_ascii_case(&format!("authorization: Bearer {TOKEN}")));
    seen.lock().unwrap().push(target.clone());
    let page = target
        .split_once("continue=page-")
        .and_then(|(_, n)| n.split('&').next()?.parse::<usize>().ok())
        .unwrap_or(0);
    let (status, body) = if !authorized {
        (
            "401 Unauthorized",
            r#"{"kind":"Status","message":"Unauthorized"}"#.to_string(),
        )
    } else {
        let next = if page + 1 < pages.len() {
            format!("page-{}", page + 1)
        } else {
            String::new()
        };
        let list = serde_json::json!({"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1",
            "metadata": {"continue": next}, "items": pages.get(page).cloned().unwrap_or_default()});
        ("200 OK", list.to_string())
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tls.write_all(reply.as_bytes());
    let _ = tls.flush();
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

/// fathom with the pod's environment pointing at `api` (through `env`, bounded, by PID).
fn in_pod(api: &ApiServer, args: &[&str]) -> std::process::Output {
    let port = format!("KUBERNETES_SERVICE_PORT={}", api.port);
    let dir = format!("FATHOM_K8S_SA_DIR={}", api.sa_dir.display());
    let pod = [
        "KUBERNETES_SERVICE_HOST=127.0.0.1",
        &port,
        &dir,
        env!("CARGO_BIN_EXE_fathom"),
    ];
    run_program("env", &[&pod[..], args].concat(), 120)
}

/// Three agents, each in its own slice over three pages, and one endpoint not ready.
fn cluster(agents: &[Agent]) -> Vec<Vec<serde_json::Value>> {
    let port = |i: usize| agents[i].addr.port();
    vec![
        vec![slice(
            port(0),
            &[
                ("127.0.0.1", true, "fathom-agent-0", "zone-a"),
                ("127.0.0.9", false, "fathom-agent-down", "zone-b"),
            ],
        )],
        vec![slice(
            port(1),
            &[("127.0.0.1", true, "fathom-agent-1", "zone-a")],
        )],
        vec![slice(
            port(2),
            &[("127.0.0.1", true, "fathom-agent-2", "zone-b")],
        )],
    ]
}

#[test]
fn endpoint_slices_page_by_page_name_the_agents_of_a_real_test() {
    let (agents, _) = agents(3);
    let api = api_server(cluster(&agents));
    let args = words("stream --agents-from k8s:svc=fathom-agents --expect 3 -n 4M --json");
    let out = in_pod(&api, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    assert_valid(&j, "a stream across Kubernetes endpoints");
    assert_eq!(j["summary"]["bytes"].as_u64(), Some(4 << 20));
    assert_eq!(
        each_str(&j["hosts"], "name"),
        ["fathom-agent-0", "fathom-agent-1", "fathom-agent-2"]
    );
    assert_eq!(each_str(&j["groups"], "name"), ["zone-a", "zone-b"]);
    let requests = api.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3, "one look, three pages: {requests:?}");
    for r in &requests {
        assert!(
            r.starts_with("/apis/discovery.k8s.io/v1/namespaces/perf/endpointslices?"),
            "{r}"
        );
        assert!(
            r.contains("labelSelector=kubernetes.io%2Fservice-name%3Dfathom-agents"),
            "{r}"
        );
        assert!(r.contains("limit=100"), "{r}");
    }
    assert!(requests[2].contains("continue=page-2"), "{requests:?}");
}

#[test]
fn missing_endpoints_are_named_after_the_timeout_or_let_go_with_min_agents() {
    let (agents, _) = agents(3);
    let api = api_server(cluster(&agents));
    let base = words("stream --agents-from k8s:svc=fathom-agents,ns=perf,group=node --expect 4");
    let started = Instant::now();
    let out = in_pod(&api, &[&base[..], &["--discovery-timeout", "1s"]].concat());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("expected 4 agents, found 3; missing: fathom-agent-down (not ready)"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        api.requests.lock().unwrap().len() > 3,
        "it looked again while waiting"
    );
    let min = words("--discovery-timeout 500ms --min-agents 3 -n 1M --json");
    let out = in_pod(&api, &[&base[..], &min].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_says(&out, "going on with 3 (--min-agents 3)");
    let j = json(&out);
    assert_eq!(j["hosts"][1]["group"], "node-fathom-agent-1");
}

/// A mesh whose members come from the API: one LIST (three pages here) at the start and one per
/// `refresh`, never one per test or booking; members named by their nodes (`names=node`).
#[test]
fn a_mesh_lists_the_endpoints_once_per_refresh_not_per_probe() {
    let (agents, _) = agents(3);
    let api = api_server(cluster(&agents));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mesh.toml");
    std::fs::write(
        &file,
        "[mesh]\nname = \"k8s\"\n[members]\nfrom = \"k8s:svc=fathom-agents,names=node\"\n\
         refresh = \"3s\"\n[[test]]\ncommand = \"rr --size 64 -t 50ms --rate 100\"\n\
         every = \"3s\"\nsetup = \"2s\"\n",
    )
    .unwrap();
    let (file, db) = (file.to_str().unwrap(), dir.path().join("mesh.db"));
    let args = ["mesh", "run", file, "--for", "10s", "--json", "--store"];
    let out = in_pod(&api, &[&args[..], &[db.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let lists = api.requests.lock().unwrap().len() / 3;
    let counts = &doc["tests"][0]["counts"];
    let tried = counts["started"].as_u64().unwrap() + counts["skipped"].as_u64().unwrap();
    // 10 s at a refresh of 3 s: the first look and three more (a fourth if the end is late);
    // each of the 6 pairs tried about 3 times, each booked on both ends.
    assert!((3..=5).contains(&lists), "{lists} LISTs");
    assert!(
        tried as usize > 2 * lists,
        "{tried} tests, {lists} LISTs: {doc:#}"
    );
    let sources: std::collections::BTreeSet<&str> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["source"].as_str().unwrap())
        .collect();
    let nodes = [
        "node-fathom-agent-0",
        "node-fathom-agent-1",
        "node-fathom-agent-2",
    ];
    assert!(!sources.is_empty(), "nothing stored: {doc:#}");
    assert!(sources.iter().all(|s| nodes.contains(s)), "{doc:#}");
}

/// An agent under `serve --mesh` whose pod is not in its Service's endpoints yet (it is not
/// ready until it serves) keeps serving and joins later, rather than exiting.
#[test]
fn a_mesh_agent_not_listed_yet_keeps_serving() {
    let (agents, _) = agents(3);
    let api = api_server(cluster(&agents));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mesh.toml");
    std::fs::write(
        &file,
        "[members]\nfrom = \"k8s:svc=fathom-agents\"\n[[test]]\ncommand = \"rr -t 1s\"\nevery = \"10s\"\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fathom"))
        .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        .env("KUBERNETES_SERVICE_PORT", api.port.to_string())
        .env("FATHOM_K8S_SA_DIR", &api.sa_dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--mesh"])
        .arg(&file)
        .args(["--mesh-as", "fathom-agent-new", "--store"])
        .arg(dir.path().join("mesh.db"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(running, "the agent exited: {err}");
    assert!(
        err.contains("fathom-agent-new is not among the members found yet"),
        "{err}"
    );
}
