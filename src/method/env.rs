//! The controller host's environment, kept with every stored run: what the machine is and the
//! kernel settings that shape network performance. The agents' own facts are in each report.

use fathom_advisor::read;
use fathom_advisor::settings::BUFFER_SYSCTLS;
use serde_json::{json, Map, Value};
use std::path::Path;

/// Kernel settings that change throughput or latency, beyond the socket buffers' (the advisor's
/// [`BUFFER_SYSCTLS`]), read from /proc/sys.
const SYSCTLS: &[&str] = &[
    "net.ipv4.tcp_mem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.core.default_qdisc",
    "net.core.netdev_max_backlog",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_autocorking",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.tcp_no_metrics_save",
];

/// This host's environment as a JSON object.
pub fn collect() -> Value {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let names = BUFFER_SYSCTLS.iter().chain(SYSCTLS).copied();
    let sysctls: Map<String, Value> = read::sysctls(Path::new("/"), names)
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(name, v)| (name, Value::String(v)))
        .collect();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    json!({
        "fathom_version": env!("CARGO_PKG_VERSION"),
        "hostname": read("/proc/sys/kernel/hostname"),
        "kernel": read("/proc/sys/kernel/osrelease"),
        "cpu_model": field("model name"),
        "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "memory_bytes": mem_kb * 1024,
        "sysctls": sysctls,
    })
}

/// The environment as (name, value) rows for a report page: nested objects flattened with dots.
pub fn rows(env: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    flatten("", env, &mut out);
    out
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out);
            }
        }
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_the_machine_and_flattens_for_pages() {
        let env = collect();
        assert!(!env["kernel"].as_str().unwrap().is_empty());
        assert!(env["sysctls"]["net.core.rmem_max"].is_string());
        let rows = rows(&env);
        assert!(rows.iter().any(|(k, _)| k == "sysctls.net.core.rmem_max"));
        assert!(rows
            .iter()
            .any(|(k, v)| k == "cpus" && v.parse::<u32>().is_ok()));
    }
}
