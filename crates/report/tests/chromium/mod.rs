//! An HTML page loaded in Debian's headless Chromium, for the tests of fathom's HTML pages
//! (crates/report/tests/html.rs, and tests/mesh_report.rs by path): its console messages, a
//! screenshot and its pixels, the DOM as the browser built it. Chromium runs by its own PID
//! and is killed if it outlives [`CHROMIUM_TIMEOUT`].
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs Chromium (scripts/install-test-deps.sh).
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Chromium is killed after this long.
pub const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);
/// Screenshot size.
pub const WINDOW: (u32, u32) = (1200, 2000);

/// What a Chromium run left: its exit status, stdout (the DOM, when dumped) and stderr.
pub struct Browsed {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Browsed {
    /// Console messages (any level) and uncaught errors Chromium logged for the page.
    pub fn console(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
            .collect()
    }
}

/// `None` (with the reason printed) when Chromium is missing outside CI; panics in CI.
pub fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(CHROMIUM);
    if path.exists() {
        return Some(path);
    }
    let why = format!("{CHROMIUM} is missing: run scripts/install-test-deps.sh");
    assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// Loads `html` in headless Chromium and screenshots it to `shot`.
pub fn browse(bin: &Path, dir: &Path, html: &Path, shot: &Path) -> Browsed {
    let take = [
        format!("--window-size={},{}", WINDOW.0, WINDOW.1),
        format!("--screenshot={}", shot.display()),
    ];
    run(bin, dir, html, &take)
}

/// Loads `html` in headless Chromium and dumps the DOM it built (in `stdout`).
pub fn dom(bin: &Path, dir: &Path, html: &Path) -> Browsed {
    run(bin, dir, html, &["--dump-dom".to_string()])
}

/// Chromium on `html` with `take` (what to make of the page), in profile directory `dir`.
fn run(bin: &Path, dir: &Path, html: &Path, take: &[String]) -> Browsed {
    let stderr_path = dir.join("chromium.stderr");
    let stdout_path = dir.join("chromium.stdout");
    let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
    let stdout = std::fs::File::create(&stdout_path).expect("stdout file");
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(take)
        .arg(format!("file://{}", html.display()))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("chromium's status") {
            break s;
        }
        if start.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium (pid {}) ran over {CHROMIUM_TIMEOUT:?} and was killed",
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Browsed {
        ok: status.success(),
        stdout: std::fs::read_to_string(&stdout_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&stderr_path).unwrap_or_default(),
    }
}

/// A fresh scratch directory `name` under `tmp` (the test's CARGO_TARGET_TMPDIR).
pub fn scratch(tmp: &str, name: &str) -> PathBuf {
    let dir = Path::new(tmp).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// What a screenshot shows.
pub struct Pixels {
    /// Pixels with ink: some channel below 200 (text, rules, charts).
    pub inked: usize,
    /// Saturated pixels: channels over 80 apart (chart lines, coloured cells; text, rules
    /// and shading are grey).
    pub colored: usize,
}

/// Reads the PNG screenshot `bytes` (of [`WINDOW`]'s size) and counts its pixels.
pub fn pixels(bytes: &[u8]) -> Pixels {
    let mut reader = png::Decoder::new(bytes).read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("one frame");
    assert_eq!((info.width, info.height), WINDOW);
    let channels = info.color_type.samples();
    let px: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let inked = px
        .iter()
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count();
    let colored = px
        .iter()
        .filter(|p| {
            let (max, min) = (p[..3].iter().max().unwrap(), p[..3].iter().min().unwrap());
            max - min > 80
        })
        .count();
    Pixels { inked, colored }
}
