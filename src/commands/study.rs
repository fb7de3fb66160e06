//! `fathom study NAME`: one of the classic studies — its sweeps run and stored, then a table,
//! plots and an HTML page written to a directory, and the findings computed from the data.

use super::output::write_stdout;
use super::report::write_page;
use crate::cli::method::StudyArgs;
use crate::method::iterate::Rule;
use crate::method::{env, sweep, Recorder};
use crate::testbed::Testbed;
use crate::Failure;
use fathom_report::html::{Html, Page, Section};
use fathom_report::json::Json;
use fathom_report::plot::{self, ImageFormat};
use fathom_report::series::Series;
use fathom_report::study::StudyDocument;
use fathom_report::table::Table;
use fathom_report::Exporter;
use fathom_study::{Study, SweepSpec};
use std::path::{Path, PathBuf};

/// Runs a study (or lists them); `argv` is the command line after the program name, kept with
/// every run and series the study stores.
pub fn run(a: &StudyArgs, argv: &[String]) -> Result<(), Failure> {
    if a.list {
        write_stdout(fathom_study::list_text().as_bytes());
        return Ok(());
    }
    let name = a.name.as_deref().unwrap_or_default();
    let study = fathom_study::find(name).ok_or_else(|| {
        let names: Vec<&str> = fathom_study::all().iter().map(|s| s.name).collect();
        Failure::Usage(format!(
            "no study '{name}'; the studies are: {}",
            names.join(", ")
        ))
    })?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let specs = (study.sweeps)(a.quick, cpus);
    let dir = a
        .output
        .clone()
        .unwrap_or_else(|| default_dir(Path::new("."), study.name));
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    let rec = Recorder::open_required(&a.store, argv)?;
    let wan = a.lab.as_deref().unwrap_or("delay=0ms");
    let lab = if a.lab.is_some() || study.needs_lab {
        Some(StudyLab::up(wan, None)?)
    } else {
        None
    };
    // The IPsec lab, made when a sweep first asks for it (or why it cannot be).
    let mut ipsec_lab: Option<Result<StudyLab, NoIpsec>> = None;
    let mut all = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        eprintln!("== {} ({}/{})", spec.title, i + 1, specs.len());
        let on = match &spec.ipsec {
            Some(alg) => ipsec_lab
                .get_or_insert_with(|| StudyLab::up(wan, Some(alg)).map_err(NoIpsec::lab))
                .as_ref()
                .map(Some),
            None => Ok(lab.as_ref()),
        };
        let s = run_sweep(spec, on, &rec, a.resume)?;
        let done = s.complete;
        all.push(s);
        if !done {
            return Err(Failure::Runtime(format!(
                "the study stopped before it finished; run it again with --resume to continue ({} of {} sweeps ran)",
                i, specs.len()
            )));
        }
    }
    drop(lab);
    drop(ipsec_lab);
    let findings = fathom_study::findings(study, &all);
    let files = write_outputs(study, &specs, &all, &findings, &dir, a.quick)?;
    let out = if a.json {
        let doc = StudyDocument::new(study.name, a.quick, findings, all, files);
        Json.export(&doc)
    } else {
        summary_text(study, &all, &findings, &dir).into_bytes()
    };
    write_stdout(&out);
    Ok(())
}

/// Runs one of the study's sweeps on the embedded agent, or between the study lab's hosts; an
/// IPsec sweep whose lab could not be made (`Err`, why) records that instead of running.
fn run_sweep(
    spec: &SweepSpec,
    lab: Result<Option<&StudyLab>, &NoIpsec>,
    rec: &Recorder,
    resume: bool,
) -> Result<Series, Failure> {
    let kind = spec.kind.descriptor();
    let mut base: Vec<String> = kind.flags.iter().map(|f| f.to_string()).collect();
    base.extend(spec.args.iter().cloned());
    if let Ok(Some(l)) = lab {
        base.extend(["--lab".to_string(), l.name.clone()]);
        if !spec
            .args
            .iter()
            .any(|a| a == "--server" || a == "--clients")
        {
            base.extend(["--server", "h2", "--clients", "h1"].map(String::from));
        }
    }
    let rule = Rule {
        max: spec.iterations.max(1),
        min: spec.iterations.max(1),
        confidence: None,
    };
    let mut axes = spec.axes.clone();
    if let (Some(search), Some(last)) = (&spec.search, axes.last_mut()) {
        last.values = (1..=search.max.max(1)).map(|n| n.to_string()).collect();
    }
    let sp = sweep::prepare(kind.command, &base, axes, Some(rule))?;
    let lab = match (lab, &spec.ipsec) {
        (Err(why), Some(alg)) => return Ok(unavailable(&sp, rec.command(), alg, why)),
        (Err(why), None) => return Err(Failure::Runtime(why.to_string())),
        (Ok(lab), _) => lab,
    };
    let bed = Testbed::for_plan(&sp.common, &sp.points[0].plan)?;
    let mut s = match &spec.search {
        Some(search) => sweep::search(&sp, &bed, rec, resume, &|s: &Series| search.next(s))?,
        None => sweep::execute(&sp, &bed, rec, resume)?,
    };
    if let Some((suite, datapath)) = lab.and_then(|l| l.ipsec) {
        let path = ["--ipsec", suite.name(), "--ipsec-datapath", datapath.name()];
        s.args.extend(path.map(String::from));
    }
    Ok(s)
}

/// The series of a sweep that cannot run here: its one point says why, and its options record
/// the IPsec algorithm asked for.
fn unavailable(sp: &sweep::SweepPlan, command: &[String], alg: &str, reason: &NoIpsec) -> Series {
    let mut s = sweep::new_series(sp, command);
    s.args.extend(["--ipsec".to_string(), alg.to_string()]);
    s.axes.iter_mut().for_each(|a| a.values.truncate(1));
    s.points.push(fathom_report::series::Point {
        params: sp.points[0].params.clone(),
        error: Some(format!("{}: {reason}", fathom_study::UNAVAILABLE)),
        ..Default::default()
    });
    s.complete = true;
    s
}

/// The table file, one SVG and PNG chart per sweep (plus latency charts for request/response),
/// and the HTML page. Returns the files written.
fn write_outputs(
    study: &Study,
    specs: &[SweepSpec],
    all: &[Series],
    findings: &[String],
    dir: &Path,
    quick: bool,
) -> Result<Vec<String>, Failure> {
    let mut files = Vec::new();
    let mut write = |name: String, bytes: &[u8]| -> Result<(), Failure> {
        let path = dir.join(&name);
        std::fs::write(&path, bytes)
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
        files.push(path.display().to_string());
        Ok(())
    };
    write(
        format!("{}.txt", study.name),
        summary_text(study, all, findings, dir).as_bytes(),
    )?;
    for (i, (spec, s)) in specs.iter().zip(all).enumerate() {
        if !s.points.iter().any(|p| p.metric(&spec.metric).is_some()) {
            continue;
        }
        let mut charts: Vec<_> = std::iter::once(spec.metric.as_str())
            .chain(extra_charts(spec))
            .map(|m| {
                (
                    format!("{}-{m}", i + 1),
                    plot::sweep_chart(s, &spec.x_axis, m),
                )
            })
            .collect();
        if s.points
            .iter()
            .any(|p| p.metric("latency_p50_us").is_some())
        {
            charts.push((
                format!("{}-latency", i + 1),
                plot::latency_chart(s, &spec.x_axis),
            ));
        }
        for (stem, chart) in charts {
            let mut chart = chart.map_err(|e| Failure::Runtime(e.to_string()))?;
            chart.notes = fathom_report::about::series_lines(s);
            for (ext, f) in [("svg", ImageFormat::Svg), ("png", ImageFormat::Png)] {
                let bytes = plot::render(&chart, f, 960, 540)
                    .map_err(|e| Failure::Runtime(e.to_string()))?;
                write(format!("{stem}.{ext}"), &bytes)?;
            }
        }
    }
    let page = page(study, specs, all, findings, quick);
    let index = dir.join("index.html");
    write_page(&index, &Html.export(&page))?;
    files.push(index.display().to_string());
    Ok(files)
}

/// The study's HTML page: its findings, a section per sweep, the environment it ran in.
fn page(
    study: &Study,
    specs: &[SweepSpec],
    all: &[Series],
    findings: &[String],
    quick: bool,
) -> Page {
    let env_rows = all
        .first()
        .and_then(|s| s.points.iter().flat_map(|p| p.runs.first()).next().copied())
        .map(|_| env::rows(&env::collect()))
        .unwrap_or_default();
    Page {
        title: format!(
            "fathom study: {}{}",
            study.name,
            if quick { " (quick)" } else { "" }
        ),
        subtitle: format!("{} — after the {}", study.question, study.source),
        findings: findings.to_vec(),
        sections: specs
            .iter()
            .zip(all)
            .map(|(spec, s)| Section::Series {
                title: format!("{} [{}]", spec.title, s.id.as_deref().unwrap_or("-")),
                series: s.clone(),
                x_axis: spec.x_axis.clone(),
                more_charts: extra_charts(spec).map(str::to_string).collect(),
            })
            .collect(),
        environment: env_rows,
    }
}

/// The figures a sweep is charted by after its main one (latency has a chart of its own).
fn extra_charts(spec: &SweepSpec) -> impl Iterator<Item = &str> {
    spec.more_metrics
        .iter()
        .map(String::as_str)
        .filter(|m| !m.starts_with("latency_"))
}

/// The tables of every sweep, then the findings, then where the files are.
fn summary_text(study: &Study, all: &[Series], findings: &[String], dir: &Path) -> String {
    let mut out = format!("fathom study {}: {}\n\n", study.name, study.question);
    for s in all {
        out.push_str(&String::from_utf8_lossy(&Table.export(s)));
        out.push('\n');
    }
    out.push_str("Findings:\n");
    for f in findings {
        out.push_str(&format!("  - {f}\n"));
    }
    out.push_str(&format!(
        "\nTable, plots and page: {}/index.html\n",
        dir.display()
    ));
    out
}

/// A two-host lab (h1 – WAN emulator – h2) for the studies that need distance, or that `--lab`
/// asks to run across a WAN link; its agents serve file copies below a scratch directory.
/// Removed when dropped, also after a failure or Ctrl-C.
struct StudyLab {
    name: String,
    files: PathBuf,
    /// With IPsec: the suite and where ESP runs.
    ipsec: Option<(fathom_lab::ipsec::Suite, fathom_lab::ipsec::Datapath)>,
}

impl StudyLab {
    /// Two hosts joined by the WAN emulator with `wan`, and with `ipsec` (a suite's name) IPsec
    /// between them. A bad `wan` is a usage error.
    fn up(wan: &str, ipsec: Option<&str>) -> Result<StudyLab, Failure> {
        let pid = std::process::id();
        let name = format!("study{}{pid}", if ipsec.is_some() { "i" } else { "" });
        let ipsec = ipsec
            .map(|alg| ipsec_options(alg, &name))
            .transpose()
            .map_err(|e| Failure::Runtime(e.to_string()))?;
        let topo = fathom_lab::Topology::split(2, None, None, None, wan)
            .map_err(|e| Failure::Usage(format!("--lab {wan}: {e}")))?;
        let exe = std::env::current_exe().map_err(|e| Failure::Runtime(e.to_string()))?;
        let files = std::env::temp_dir().join(format!("fathom-study-files-{name}"));
        std::fs::create_dir_all(&files)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", files.display())))?;
        let mut agent = fathom_lab::AgentCommand::fathom(&exe);
        agent
            .args
            .extend(["--files-root".into(), files.to_string_lossy().into_owned()]);
        let opts = fathom_lab::UpOptions {
            ipsec: ipsec.clone(),
            ..fathom_lab::UpOptions::new(&name, agent)
        };
        let with = ipsec.as_ref().map_or(String::new(), |i| {
            format!(", IPsec {} with ESP in {}", i.suite, i.datapath.name())
        });
        eprintln!("fathom: building lab {name}: h1 - WAN emulator ({wan}) - h2{with}");
        if let Err(e) = fathom_lab::Lab::up(&topo, &opts) {
            let _ = std::fs::remove_dir_all(&files);
            return Err(Failure::Runtime(format!(
                "this study needs a lab (root and ip netns): {e}"
            )));
        }
        let ipsec = ipsec.map(|i| (i.suite, i.datapath));
        Ok(StudyLab { name, files, ipsec })
    }
}

/// Why a study's IPsec sweeps cannot run here; each records it instead of running.
#[derive(Debug, thiserror::Error)]
enum NoIpsec {
    /// The study's suite is not one the lab knows.
    #[error(transparent)]
    Suite(#[from] fathom_lab::ipsec::UnknownName),
    /// strongSwan or an ESP datapath is missing here (the lab's words, without the
    /// `--ipsec ALG: ` they start with).
    #[error("{}", without_prefix(alg, source))]
    Host {
        /// The suite's name.
        alg: String,
        /// The lab's refusal.
        source: fathom_lab::Error,
    },
    /// The lab could not be made, in the failure's words.
    #[error("{0}")]
    Lab(String),
}

impl NoIpsec {
    /// A study lab that could not be made.
    fn lab(f: Failure) -> NoIpsec {
        NoIpsec::Lab(match f {
            Failure::Usage(s) | Failure::Runtime(s) => s,
            Failure::Reported => "it failed".to_string(),
        })
    }
}

/// `e`'s message without the `--ipsec ALG: ` it starts with.
fn without_prefix(alg: &str, e: &fathom_lab::Error) -> String {
    let said = e.to_string();
    let prefix = format!("--ipsec {alg}: ");
    said.strip_prefix(&prefix).unwrap_or(&said).to_string()
}

/// The IPsec options of study lab `name` with suite `alg`, or why this machine cannot run it.
fn ipsec_options(alg: &str, name: &str) -> Result<fathom_lab::ipsec::IpsecOptions, NoIpsec> {
    let suite = fathom_lab::ipsec::Suite::parse(alg)?;
    let host = |source| NoIpsec::Host {
        alg: alg.to_string(),
        source,
    };
    fathom_lab::ipsec::check_packages().map_err(host)?;
    let probe_ns = format!("fl-{name}-ipsec-probe");
    let datapath = fathom_lab::ipsec::choose(suite, None, &probe_ns).map_err(host)?;
    Ok(fathom_lab::ipsec::IpsecOptions {
        suite,
        datapath,
        pairs: None,
        wrong_psk_host: None,
    })
}

impl Drop for StudyLab {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.files);
        if let Err(e) = fathom_lab::down(&self.name) {
            eprintln!(
                "fathom: warning: removing lab {}: {e}; run: fathom lab down --name {}",
                self.name, self.name
            );
        }
    }
}

/// `fathom-study-NAME` in `parent`, or, when that already holds a finished study (its
/// `index.html`), the first of `-2`, `-3`, ... that does not: an earlier study's pages are never
/// overwritten unless `-o` names their directory.
fn default_dir(parent: &Path, name: &str) -> PathBuf {
    let base = format!("fathom-study-{name}");
    (1..)
        .map(|n| match n {
            1 => parent.join(&base),
            _ => parent.join(format!("{base}-{n}")),
        })
        .find(|d| !d.join("index.html").exists())
        .unwrap_or_else(|| parent.join(&base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_study_is_not_overwritten_by_default() {
        let tmp = tempfile::tempdir().unwrap();
        let first = default_dir(tmp.path(), "write-size");
        assert_eq!(first, tmp.path().join("fathom-study-write-size"));
        std::fs::create_dir_all(&first).unwrap();
        assert_eq!(
            default_dir(tmp.path(), "write-size"),
            first,
            "unfinished: reused"
        );
        std::fs::write(first.join("index.html"), "done").unwrap();
        let second = default_dir(tmp.path(), "write-size");
        assert_eq!(second, tmp.path().join("fathom-study-write-size-2"));
    }
}
