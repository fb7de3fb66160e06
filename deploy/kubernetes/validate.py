#!/usr/bin/env python3
"""Checks deploy/kubernetes offline: renders the base and every overlay, validates each resource
against the Kubernetes API schemas (the kubernetes-validate package, strict), and asserts the
security invariants the manifests promise. Exits 1 naming every failure.

A PodMonitor (monitoring.coreos.com/v1, a CRD of the Prometheus Operator, which
kubernetes-validate does not know) is validated against the cloudcoil-models-prometheus-operator
package from PyPI: pydantic models generated from the operator's CRD schemas (types, required
fields, enums, the duration pattern). Those models ignore unknown fields, so a field they drop
in a round trip is reported as unknown, as `kubectl apply --validate=strict` would refuse it.

Debian has no kustomize package, so the rendering here is kustomize's subset these manifests use:
a kustomization's `resources` (files, or directories holding a kustomization), `images` (name,
newName, newTag) and `patches` given by path, each a strategic-merge patch of maps only (a patch holding a list is refused:
kustomize merges lists by key, which this does not imitate). Every YAML file in a kustomization's
directory must be one of its resources or patches. When `kubectl` is on PATH, each directory is
also rendered by `kubectl kustomize` and must give the same resources.

Usage: deploy/kubernetes/validate.py [KUBERNETES_VERSION...]  (default: 1.27.0 and 1.37.0, the
oldest and newest versions checked)
"""

import copy
import pathlib
import shutil
import subprocess
import sys

import kubernetes_validate
import pydantic
import yaml
from cloudcoil.models.prometheus_operator.v1 import PodMonitor

ROOT = pathlib.Path(__file__).resolve().parent
FAILURES = []


def fail(where, what):
    FAILURES.append(f"{where}: {what}")


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def key(doc):
    meta = doc.get("metadata", {})
    return (doc.get("apiVersion"), doc.get("kind"), meta.get("namespace"), meta.get("name"))


def merge(base, patch, where):
    """Strategic merge of maps; lists in a patch are refused."""
    for k, v in patch.items():
        if isinstance(v, list):
            fail(where, f"patch field {k!r} is a list: this renderer merges maps only")
        elif isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v, where)
        else:
            base[k] = copy.deepcopy(v)


def render(directory):
    """The resources a kustomization directory renders to, in order."""
    kfile = directory / "kustomization.yaml"
    (kust,) = load_all(kfile)
    listed = set()
    docs = []
    for res in kust.get("resources", []):
        path = (directory / res).resolve()
        listed.add(path)
        if path.is_dir():
            docs += render(path)
        elif path.is_file():
            docs += load_all(path)
        else:
            fail(kfile, f"resource {res!r} does not exist")
    for patch in kust.get("patches", []):
        if set(patch) != {"path"}:
            fail(kfile, f"patch {patch!r}: only `path:` patches are rendered here")
            continue
        path = (directory / patch["path"]).resolve()
        listed.add(path)
        (p,) = load_all(path)
        targets = [d for d in docs if key(d) == key(p)]
        if len(targets) != 1:
            fail(path, f"patches {key(p)}, which the resources hold {len(targets)} times")
            continue
        merge(targets[0], p, path)
    for image in kust.get("images", []):
        set_image(docs, image)
    for stray in directory.glob("*.yaml"):
        if stray.resolve() not in listed and stray.name != "kustomization.yaml":
            fail(kfile, f"{stray.name} is neither a resource nor a patch")
    for k in ("namespace", "namePrefix", "nameSuffix", "commonLabels", "labels", "components"):
        if k in kust:
            fail(kfile, f"{k!r} is not rendered here")
    return docs


def set_image(docs, image):
    """Kustomize's `images` entry: containers running `name` (any tag) get newName:newTag."""
    name = image["name"]
    new = f"{image.get('newName', name)}:{image['newTag']}" if "newTag" in image else image.get("newName", name)
    for doc in docs:
        for c in pod_spec(doc).get("containers", []):
            if c["image"] == name or c["image"].startswith(f"{name}:"):
                c["image"] = new


def kubectl_agrees(directory, docs):
    out = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        fail(directory, f"kubectl kustomize failed: {out.stderr.strip()}")
        return
    theirs = sorted(yaml.safe_load_all(out.stdout), key=lambda d: str(key(d)))
    ours = sorted(docs, key=lambda d: str(key(d)))
    if theirs != ours:
        fail(directory, "kubectl kustomize renders other resources than this script")


def pod_spec(doc):
    spec = doc.get("spec", {})
    return spec.get("template", {}).get("spec", {})


def validate_crd(doc):
    """A PodMonitor against the operator's schema: the errors found, as text."""
    try:
        model = PodMonitor.model_validate(doc)
    except pydantic.ValidationError as e:
        return [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()]
    kept = model.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return [f"unknown field {path}" for path in dropped(doc, kept, "")]


def dropped(doc, kept, path):
    """The paths of `doc` that `kept` (its round trip through a model) lost."""
    if isinstance(doc, dict) and isinstance(kept, dict):
        for k, v in doc.items():
            if k not in kept:
                yield f"{path}{k}"
            else:
                yield from dropped(v, kept[k], f"{path}{k}.")
    elif isinstance(doc, list) and isinstance(kept, list):
        for i, (d, k) in enumerate(zip(doc, kept)):
            yield from dropped(d, k, f"{path[:-1]}[{i}].")


def validate(name, doc, version):
    if doc["kind"] == "PodMonitor":
        errors = validate_crd(doc)
    else:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
            errors = []
        except kubernetes_validate.ValidationError as e:
            errors = [e.message]
    for e in errors:
        fail(name, f"{doc['kind']}/{doc['metadata']['name']} ({version}): {e}")


def check_invariants(name, docs):
    """The promises the README makes about these manifests."""
    kinds = {d["kind"] for d in docs}
    for cluster_wide in ("ClusterRole", "ClusterRoleBinding"):
        if cluster_wide in kinds:
            fail(name, f"holds a {cluster_wide}")
    for doc in docs:
        where = f"{name}: {doc['kind']}/{doc['metadata']['name']}"
        if doc["kind"] in ("Role", "ClusterRole"):
            # Discovery (crates/cluster/src/discover/k8s.rs) only lists EndpointSlices.
            allowed = {("discovery.k8s.io", "endpointslices")}
            for rule in doc.get("rules", []):
                pairs = {(g, r) for g in rule.get("apiGroups", []) for r in rule.get("resources", [])}
                if not pairs <= allowed or set(rule.get("verbs", [])) - {"list"}:
                    fail(where, f"grants more than list on endpointslices: {rule}")
        if doc["kind"] == "RoleBinding" and doc["roleRef"]["kind"] != "Role":
            fail(where, "binds a cluster-wide role")
        if doc["kind"] in ("DaemonSet", "Job"):
            check_pod(where, doc)
            check_account(where, doc, docs)
        if doc["kind"] == "DaemonSet":
            check_mesh(where, doc, docs)
        if doc["kind"] == "Job" and doc["spec"].get("backoffLimit") != 0:
            fail(where, "backoffLimit is not 0: a failed test would run again")
        if doc["kind"] == "PodMonitor":
            check_monitor(where, doc, docs)


def check_account(where, doc, docs):
    """A pod that gets a token gets one of its own account, bound to a Role here."""
    pod = pod_spec(doc)
    if pod.get("automountServiceAccountToken") is False:
        return
    account = pod.get("serviceAccountName", "default")
    if account == "default":
        fail(where, "gets the default service account's token")
    bound = [
        d for d in docs
        if d["kind"] == "RoleBinding"
        and any(s.get("kind") == "ServiceAccount" and s.get("name") == account for s in d.get("subjects", []))
    ]
    if not bound:
        fail(where, f"gets a token of service account {account}, which no RoleBinding here binds")


def arg(container, flag):
    """The value after `flag` in a container's args."""
    args = container.get("args", [])
    return next((args[i + 1] for i in range(len(args) - 1) if args[i] == flag), None)


def check_mesh(where, doc, docs):
    """The agents' mesh file is a ConfigMap's key mounted where --mesh reads it, and the
    --metrics port is the container's port named metrics."""
    pod = pod_spec(doc)
    for c in pod.get("containers", []):
        mesh = arg(c, "--mesh")
        if mesh is None:
            fail(where, f"container {c['name']}: runs no mesh (--mesh)")
            continue
        directory, _, file = mesh.rpartition("/")
        mounts = [m["name"] for m in c.get("volumeMounts", []) if m["mountPath"] == directory]
        sources = [
            src["configMap"]
            for v in pod.get("volumes", []) if v["name"] in mounts
            for src in v.get("projected", {}).get("sources", []) + [v] if "configMap" in src
        ]
        maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
        if not any(
            any(i["path"] == file for i in s.get("items", [])) and file in maps.get(s["name"], {}).get("data", {})
            for s in sources
        ):
            fail(where, f"container {c['name']}: --mesh {mesh} is no ConfigMap's key mounted there")
        metrics = (arg(c, "--metrics") or "").rpartition(":")[2]
        if not any(p.get("name") == "metrics" and str(p["containerPort"]) == metrics for p in c.get("ports", [])):
            fail(where, f"container {c['name']}: --metrics port {metrics or '(none)'} is not its port named metrics")


def check_monitor(where, doc, docs):
    """The PodMonitor selects the agents' pods and scrapes a port they name."""
    want = doc["spec"]["selector"].get("matchLabels", {})
    pods = [
        d["spec"]["template"] for d in docs
        if d["kind"] == "DaemonSet" and want.items() <= d["spec"]["template"]["metadata"]["labels"].items()
    ]
    if not pods:
        fail(where, f"selects no agents' pods ({want})")
    names = {p.get("name") for t in pods for c in t["spec"]["containers"] for p in c.get("ports", [])}
    for e in doc["spec"].get("podMetricsEndpoints", []):
        if e.get("port") not in names:
            fail(where, f"scrapes port {e.get('port')!r}, which the agents do not name")


def check_pod(where, doc):
    pod = pod_spec(doc)
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True or psc.get("runAsUser", 0) == 0:
        fail(where, "does not run as a non-root user")
    if psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        fail(where, "no RuntimeDefault seccomp profile")
    for c in pod.get("containers", []):
        sc = c.get("securityContext", {})
        if sc.get("readOnlyRootFilesystem") is not True:
            fail(where, f"container {c['name']}: root file system is writable")
        if sc.get("allowPrivilegeEscalation") is not False:
            fail(where, f"container {c['name']}: privilege escalation allowed")
        if sc.get("capabilities", {}).get("drop") != ["ALL"] or sc["capabilities"].get("add"):
            fail(where, f"container {c['name']}: capabilities not all dropped")
        res = c.get("resources", {})
        if {"cpu", "memory"} - set(res.get("requests", {})) or "memory" not in res.get("limits", {}):
            fail(where, f"container {c['name']}: no cpu and memory requests and memory limit")
        if "privileged" in sc and sc["privileged"] is not False:
            fail(where, f"container {c['name']}: privileged")


def main():
    versions = sys.argv[1:] or ["1.27.0", "1.37.0"]
    dirs = [ROOT / "base"] + sorted(p for p in (ROOT / "overlays").iterdir() if p.is_dir())
    use_kubectl = shutil.which("kubectl") is not None
    for directory in dirs:
        name = str(directory.relative_to(ROOT))
        docs = render(directory)
        for doc in docs:
            for version in versions if doc["kind"] != "PodMonitor" else ["monitoring.coreos.com/v1"]:
                validate(name, doc, version)
        check_invariants(name, docs)
        if use_kubectl:
            kubectl_agrees(directory, docs)
        crd = any(d["kind"] == "PodMonitor" for d in docs)
        print(
            f"{name}: {len(docs)} resources rendered and validated against Kubernetes {', '.join(versions)}"
            + (", the PodMonitor against the Prometheus Operator's schema (cloudcoil-models-prometheus-operator)" if crd else "")
        )
    if not use_kubectl:
        print("kubectl not found: renderings not compared with kubectl kustomize")
    for f in FAILURES:
        print(f"FAILED {f}", file=sys.stderr)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
