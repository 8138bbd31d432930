//! The report page as a browser shows it: Debian's Chromium, headless,
//! opens the page of a hung job from a file, and its DOM and a screenshot
//! are checked: the graph is there with a node per rank, the page is not
//! blank, and the deadlocked edges are red.
//!
//! Chromium and Graphviz are required, not optional: without them this
//! test fails and says what to install, because a test that skips itself
//! proves nothing.

mod common;

use std::collections::HashSet;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mpidd_job::render_html::to_html;
use mpidd_job::render_svg::to_svg;
use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, JobReport};

use common::{blocked_in, head_to_head};

const CHROMIUM: &str = "/usr/bin/chromium";
const INSTALL: &str = "apt-get install chromium graphviz";

/// An eight-rank job on two hosts: 0 and 1 `MPI_Ssend` to each other, 2
/// and 3 wait on 0, 4 to 6 are in the barrier, 7 computes.
fn hung_job() -> JobReport {
    let mut readings = head_to_head(8);
    for r in 4..7 {
        readings.push(blocked_in(r, 8, "MPI_Barrier"));
    }
    readings.push(
        SyntheticRank::new(7, 8)
            .stack(&["_start", "main", "solver.c:118@compute"])
            .reading(),
    );
    for (i, r) in readings.iter_mut().enumerate() {
        r.host = Some(format!("node{}", 1 + i / 4));
    }
    analyze(&readings)
}

/// Runs a command to its end or to `timeout`, its output into files (a
/// DOM dump outgrows a pipe buffer), and returns its standard output.
fn run(cmd: &mut Command, dir: &Path, timeout: Duration) -> String {
    let out = dir.join("stdout");
    let err = dir.join("stderr");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(File::create(&out).unwrap())
        .stderr(File::create(&err).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}; install it: {INSTALL}"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} did not finish in {timeout:?}; stderr: {}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "{cmd:?} failed ({status}); stderr: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    std::fs::read_to_string(&out).unwrap()
}

/// Chromium, headless, with a profile of its own and nothing that goes
/// out to the network.
fn chromium(profile: &Path) -> Command {
    let mut c = Command::new(CHROMIUM);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// A screenshot of `url`, decoded to RGB rows.
fn screenshot(dir: &Path, name: &str, url: &str, size: &str) -> (u32, u32, Vec<[u8; 3]>) {
    let png = dir.join(format!("{name}.png"));
    let profile = tempfile::tempdir_in(dir).unwrap();
    run(
        chromium(profile.path())
            .arg(format!("--screenshot={}", png.display()))
            .arg(format!("--window-size={size}"))
            .arg(url),
        dir,
        Duration::from_secs(120),
    );
    assert!(png.exists(), "no screenshot at {}", png.display());
    if let Ok(keep) = std::env::var("MPIDD_KEEP_SCREENSHOTS") {
        let _ = std::fs::copy(&png, Path::new(&keep).join(format!("{name}.png")));
    }
    let mut decoder = png::Decoder::new(BufReader::new(File::open(&png).unwrap()));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// The red of deadlock edges (`#dc2626`), allowing for antialiasing.
fn is_red(p: &[u8; 3]) -> bool {
    p[0] > 170 && p[1] < 90 && p[2] < 90
}

#[test]
fn chromium_shows_the_deadlock() {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing; install it: {INSTALL}"
    );
    let report = hung_job();
    assert_eq!(report.cycles, vec![vec![0, 1]]);
    let svg = to_svg(&report).unwrap_or_else(|e| panic!("{e}; install it: {INSTALL}"));
    let html = to_html(&report, Some(&svg));

    let dir = tempfile::tempdir().unwrap();
    let page: PathBuf = dir.path().join("job.html");
    std::fs::write(&page, &html).unwrap();
    let graph: PathBuf = dir.path().join("graph.svg");
    std::fs::write(&graph, &svg).unwrap();
    // To look at the page by eye: MPIDD_KEEP_SCREENSHOTS=<dir>.
    if let Ok(keep) = std::env::var("MPIDD_KEEP_SCREENSHOTS") {
        let _ = std::fs::write(Path::new(&keep).join("job.html"), &html);
    }
    let url = |p: &Path| format!("file://{}", p.display());

    // The DOM as Chromium parsed it: the inline SVG is a real SVG element
    // with every rank's node, not text.
    let profile = tempfile::tempdir_in(dir.path()).unwrap();
    let dom = run(
        chromium(profile.path()).arg("--dump-dom").arg(url(&page)),
        dir.path(),
        Duration::from_secs(120),
    );
    assert!(dom.contains("<svg"), "no svg in the DOM: {dom}");
    assert_eq!(dom.matches("class=\"node\"").count(), report.ranks.len());
    assert_eq!(dom.matches("class=\"edge\"").count(), report.edges.len());
    assert!(dom.contains("DEADLOCK"), "{dom}");
    for r in 0..8 {
        assert!(dom.contains(&format!(">rank {r}</text>")), "rank {r}");
    }

    // The page: not blank, and the verdict's colour at the top.
    let (w, h, pixels) = screenshot(dir.path(), "page", &url(&page), "1200,1600");
    assert_eq!((w, h), (1200, 1600));
    let colours: HashSet<[u8; 3]> = pixels.iter().copied().collect();
    assert!(colours.len() > 100, "{} colours", colours.len());
    // The header's background (#fef2f2) near its top left corner.
    assert_eq!(pixels[(8 * w + 8) as usize], [0xfe, 0xf2, 0xf2]);
    let red = pixels.iter().filter(|p| is_red(p)).count();
    assert!(red > 500, "{red} red pixels");

    // The graph alone: the deadlocked ranks' edges and borders are red,
    // the waiting ranks blue.
    let (_, _, pixels) = screenshot(dir.path(), "graph", &url(&graph), "1000,800");
    let red = pixels.iter().filter(|p| is_red(p)).count();
    assert!(red > 300, "{red} red pixels in the graph");
    let blue = pixels.iter().filter(|p| **p == [0xdb, 0xea, 0xfe]).count();
    assert!(blue > 1000, "{blue} pixels of the waiting ranks' fill");
}
