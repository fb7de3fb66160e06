//! `k8s:svc=NAME[,ns=NS]` or `k8s:selector=LABELS[,ns=NS]`: the ready endpoints of a Service's
//! EndpointSlices (`discovery.k8s.io/v1`), listed once per look through the API server with
//! the pod's own service account; agents never talk to the API.
//!
//! The API server is `KUBERNETES_SERVICE_HOST`:`KUBERNETES_SERVICE_PORT` (what every pod is
//! given); the token, CA and namespace are read from the service account's directory,
//! `/var/run/secrets/kubernetes.io/serviceaccount`, or the one `FATHOM_K8S_SA_DIR` names. An
//! endpoint's port is the slice's port named `control` (the slice's only port if none is so
//! named); its group in per-group results is its zone (`group=node`: its node). An agent is
//! named by its pod (the endpoint's target), or by its node with `names=node`, a name that
//! stays when the DaemonSet's pods are replaced (a mesh's pairs and metrics keep their series).

use super::capped::Capped;
use super::{Agent, Error, Found, SourceError};
use crate::hostlist::MAX_HOSTS;
use serde::Deserialize;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The environment variable naming the service account directory (for tests).
pub const SA_DIR_ENV: &str = "FATHOM_K8S_SA_DIR";
/// The service account directory of a pod.
pub const SA_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The name of the Service port that is the agents' control port.
pub const PORT_NAME: &str = "control";
/// Slices asked for per page.
const PAGE: &str = "100";
/// Most slices a page may hold (the server returns at most the `limit` asked for).
const MAX_SLICES: usize = 100;
/// Most endpoints in one slice (Kubernetes' own maximum).
const MAX_ENDPOINTS: usize = 1000;
/// Most addresses of one endpoint, and ports of one slice (Kubernetes' maxima).
const MAX_ITEMS: usize = 100;
/// Largest page read: 100 slices of 1,000 endpoints of 300 bytes each fit.
const MAX_PAGE_BYTES: u64 = 32 << 20;
/// Most pages one look reads.
const MAX_PAGES: usize = 10_000;

/// Which endpoints, where, and how to group them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The label selector (`kubernetes.io/service-name=NAME` for `svc=NAME`).
    pub selector: String,
    /// The namespace (none: the service account's).
    pub namespace: Option<String>,
    /// Group by node rather than zone.
    pub by_node: bool,
    /// Name each agent by its node rather than its pod.
    pub names_by_node: bool,
}

impl std::str::FromStr for Query {
    type Err = SourceError;

    fn from_str(s: &str) -> Result<Query, SourceError> {
        let (mut selector, mut namespace) = (None::<String>, None);
        let (mut by_node, mut names_by_node) = (false, false);
        let mut in_selector = false;
        for item in s.split(',') {
            match item.split_once('=') {
                Some(("svc", n)) if !n.is_empty() => {
                    selector = Some(format!("kubernetes.io/service-name={n}"));
                    in_selector = false;
                }
                Some(("selector", l)) if !l.is_empty() => {
                    selector = Some(l.to_string());
                    in_selector = true;
                }
                Some(("ns", n)) if !n.is_empty() => namespace = Some(n.to_string()),
                Some(("group", g)) if g == "zone" || g == "node" => by_node = g == "node",
                Some(("names", n)) if n == "pod" || n == "node" => names_by_node = n == "node",
                _ if in_selector && !item.is_empty() => {
                    if let Some(l) = selector.as_mut() {
                        l.extend([",", item]);
                    }
                }
                _ => {
                    return Err(SourceError::K8sItem {
                        query: s.into(),
                        item: item.into(),
                    })
                }
            }
        }
        let selector = selector.ok_or_else(|| SourceError::K8sSelector(s.into()))?;
        Ok(Query {
            selector,
            namespace,
            by_node,
            names_by_node,
        })
    }
}

/// A page of `EndpointSliceList`, only the fields used.
#[derive(Deserialize, Default)]
#[serde(default)]
struct List {
    items: Capped<Slice, MAX_SLICES>,
    metadata: ListMeta,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ListMeta {
    #[serde(rename = "continue")]
    next: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Slice {
    endpoints: Capped<Endpoint, MAX_ENDPOINTS>,
    ports: Capped<Port, MAX_ITEMS>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Port {
    name: Option<String>,
    port: Option<u16>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Endpoint {
    addresses: Capped<String, MAX_ITEMS>,
    conditions: Conditions,
    hostname: Option<String>,
    node_name: Option<String>,
    zone: Option<String>,
    target_ref: Option<TargetRef>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Conditions {
    ready: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TargetRef {
    name: Option<String>,
}

impl Query {
    /// Lists the endpoints once, every page; an endpoint in several slices counts once, and
    /// more than [`MAX_HOSTS`] endpoints are an error.
    pub fn list(&self) -> Result<Found, Error> {
        let api = Api::in_cluster()?;
        let ns = self.namespace.as_deref().unwrap_or(&api.namespace);
        let path = format!("/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices");
        let mut found = Found::default();
        let mut seen = Seen::default();
        let mut next = None;
        for _ in 0..MAX_PAGES {
            let page = api.page(&path, &self.selector, next.as_deref())?;
            for slice in &page.items.0 {
                self.add(slice, &mut found, &mut seen)?;
            }
            next = page.metadata.next.filter(|c| !c.is_empty());
            if next.is_none() {
                return Ok(found);
            }
        }
        Err(Error::Runtime(format!(
            "k8s: {path}: more than {MAX_PAGES} pages"
        )))
    }

    /// Adds a slice's endpoints to `found`; an error past [`MAX_HOSTS`] endpoints.
    fn add(&self, slice: &Slice, found: &mut Found, seen: &mut Seen) -> Result<(), Error> {
        let port = match slice.ports.0.as_slice() {
            [only] => only.port,
            ports => ports
                .iter()
                .find(|p| p.name.as_deref() == Some(PORT_NAME))
                .and_then(|p| p.port),
        };
        for e in &slice.endpoints.0 {
            let Some(ip) = e.addresses.0.first() else {
                continue;
            };
            let addr = match (port, ip.contains(':')) {
                (Some(p), true) => format!("[{ip}]:{p}"),
                (Some(p), false) => format!("{ip}:{p}"),
                (None, true) => format!("[{ip}]"),
                (None, false) => ip.clone(),
            };
            let node = e.node_name.clone().filter(|_| self.names_by_node);
            let name = node
                .or_else(|| e.target_ref.as_ref().and_then(|t| t.name.clone()))
                .or_else(|| e.hostname.clone())
                .unwrap_or_else(|| addr.clone());
            if seen.addrs.contains(&addr) || seen.not_ready.contains(&name) {
                continue;
            }
            if found.ready.len() + found.not_ready.len() >= MAX_HOSTS {
                return Err(Error::Runtime(format!(
                    "k8s: more than {MAX_HOSTS} endpoints; select fewer (selector=LABELS)"
                )));
            }
            if e.conditions.ready == Some(false) {
                seen.not_ready.insert(name.clone());
                found.not_ready.push(name);
                continue;
            }
            seen.addrs.insert(addr.clone());
            let group = if self.by_node { &e.node_name } else { &e.zone };
            found.ready.push(Agent {
                name,
                addr,
                group: group.clone(),
            });
        }
        Ok(())
    }
}

/// What one look has listed so far: ready agents by address, not-ready ones by name.
#[derive(Default)]
struct Seen {
    addrs: HashSet<String>,
    not_ready: HashSet<String>,
}

/// The API server as the pod's service account reaches it.
struct Api {
    base: String,
    token: String,
    namespace: String,
    http: ureq::Agent,
}

impl Api {
    /// From the pod's environment and service account directory.
    fn in_cluster() -> Result<Api, Error> {
        let host = std::env::var("KUBERNETES_SERVICE_HOST").map_err(|_| {
            Error::Runtime(
                "k8s: KUBERNETES_SERVICE_HOST is not set; run the controller in a pod".into(),
            )
        })?;
        let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|_| "443".into());
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host
        };
        let dir = std::env::var_os(SA_DIR_ENV).map_or_else(|| PathBuf::from(SA_DIR), PathBuf::from);
        let read = |file: &str| {
            let path = dir.join(file);
            std::fs::read(&path)
                .map_err(|e| Error::Runtime(format!("k8s: {}: {e}", path.display())))
        };
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).trim().to_string();
        Ok(Api {
            base: format!("https://{host}:{port}"),
            token: text(read("token")?),
            namespace: text(read("namespace")?),
            http: client(&read("ca.crt")?)?,
        })
    }

    /// One page of the list at `path`.
    fn page(&self, path: &str, selector: &str, next: Option<&str>) -> Result<List, Error> {
        let url = format!("{}{path}", self.base);
        let fail = |e: String| Error::Runtime(format!("k8s: {url}: {e}"));
        let mut req = self
            .http
            .get(&url)
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("Accept", "application/json")
            .query("labelSelector", selector)
            .query("limit", PAGE);
        if let Some(c) = next {
            req = req.query("continue", c);
        }
        let mut resp = req.call().map_err(|e| fail(e.to_string()))?;
        let status = resp.status();
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_PAGE_BYTES)
            .read_to_string()
            .map_err(|e| fail(e.to_string()))?;
        if !status.is_success() {
            return Err(fail(format!("{status}: {}", api_message(&body))));
        }
        serde_json::from_str(&body).map_err(|e| fail(format!("not an EndpointSliceList: {e}")))
    }
}

/// The `message` of a Kubernetes `Status` reply, else the reply.
fn api_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message")?.as_str().map(str::to_string))
        .unwrap_or_else(|| body.chars().take(200).collect())
}

/// An HTTPS client that trusts only the cluster's CA.
fn client(ca_pem: &[u8]) -> Result<ureq::Agent, Error> {
    use ureq::tls::{parse_pem, PemItem, RootCerts, TlsConfig, TlsProvider};
    let certs: Vec<_> = parse_pem(ca_pem)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(Error::Runtime("k8s: ca.crt holds no certificate".into()));
    }
    let tls = TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .root_certs(RootCerts::new_with_certs(&certs))
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .build();
    Ok(ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(15)))
        .build()
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries() {
        let q: Query = "svc=fathom-agents,ns=perf".parse().unwrap();
        assert_eq!(q.selector, "kubernetes.io/service-name=fathom-agents");
        assert_eq!(q.namespace.as_deref(), Some("perf"));
        let q: Query = "selector=app=fathom,tier=agent,group=node".parse().unwrap();
        assert_eq!(
            (q.selector.as_str(), q.by_node),
            ("app=fathom,tier=agent", true)
        );
        assert!(!q.names_by_node);
        let q: Query = "svc=a,names=node".parse().unwrap();
        assert!(q.names_by_node && !q.by_node);
        assert!("svc=a,names=ip".parse::<Query>().is_err());
        assert!("ns=perf".parse::<Query>().is_err());
        assert!("svc=a,colour=blue".parse::<Query>().is_err());
    }

    #[test]
    fn ready_endpoints_with_the_control_port() {
        let slice: Slice = serde_json::from_str(
            r#"{"ports":[{"name":"data","port":6000},{"name":"control","port":5301}],
                "endpoints":[
                  {"addresses":["10.0.0.1"],"conditions":{"ready":true},"zone":"a",
                   "targetRef":{"kind":"Pod","name":"agent-1"}},
                  {"addresses":["10.0.0.2"],"conditions":{"ready":false},
                   "targetRef":{"name":"agent-2"}},
                  {"addresses":["fd00::3"],"nodeName":"n3"}]}"#,
        )
        .unwrap();
        let (mut found, mut seen) = (Found::default(), Seen::default());
        let q: Query = "svc=x".parse().unwrap();
        q.add(&slice, &mut found, &mut seen).unwrap();
        q.add(&slice, &mut found, &mut seen).unwrap();
        let addrs: Vec<_> = found.ready.iter().map(|a| a.addr.as_str()).collect();
        assert_eq!(addrs, ["10.0.0.1:5301", "[fd00::3]:5301"]);
        assert_eq!(found.ready[0].name, "agent-1");
        assert_eq!(found.ready[0].group.as_deref(), Some("a"));
        assert_eq!(found.not_ready, ["agent-2"]);
        let q: Query = "svc=x,names=node".parse().unwrap();
        let (mut found, mut seen) = (Found::default(), Seen::default());
        q.add(&slice, &mut found, &mut seen).unwrap();
        let names: Vec<_> = found.ready.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["agent-1", "n3"],
            "by node where the endpoint names one"
        );
    }

    /// A 12 MB page of empty endpoints took the controller to 521 MB: a slice holds at most
    /// 1,000 endpoints, and reading stops at the first one past that.
    #[test]
    fn a_page_of_millions_of_empty_endpoints_is_refused() {
        let page = format!(
            r#"{{"items":[{{"endpoints":[{}{{}}]}}]}}"#,
            "{},".repeat(4_000_000)
        );
        let e = serde_json::from_str::<List>(&page).err().expect("refused");
        assert!(e.to_string().contains("more than 1000 elements"), "{e}");
    }

    /// Endpoints are de-duplicated by hash (80,000 took 4.4 s when each was compared with every
    /// one before it) and capped like the host lists, at 100,000.
    #[test]
    fn endpoints_are_deduplicated_in_linear_time_and_capped() {
        let endpoint = |i: usize| Endpoint {
            addresses: Capped(vec![format!(
                "10.{}.{}.{}",
                i >> 16,
                (i >> 8) & 255,
                i & 255
            )]),
            ..Endpoint::default()
        };
        let slice = |from: usize| Slice {
            endpoints: Capped((from..from + MAX_ENDPOINTS).map(endpoint).collect()),
            ..Slice::default()
        };
        let q: Query = "svc=x".parse().unwrap();
        let (mut found, mut seen) = (Found::default(), Seen::default());
        let start = std::time::Instant::now();
        for n in 0..MAX_HOSTS / MAX_ENDPOINTS {
            q.add(&slice(n * MAX_ENDPOINTS), &mut found, &mut seen)
                .unwrap();
            q.add(&slice(n * MAX_ENDPOINTS), &mut found, &mut seen)
                .unwrap();
        }
        let took = start.elapsed();
        assert_eq!(found.ready.len(), MAX_HOSTS);
        assert!(took.as_secs() < 30, "{took:?} for 100,000 endpoints");
        let e = q.add(&slice(MAX_HOSTS), &mut found, &mut seen).unwrap_err();
        assert!(e.to_string().contains("more than 100000 endpoints"), "{e}");
    }
}
