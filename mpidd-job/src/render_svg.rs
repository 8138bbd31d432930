//! The wait-for graph drawn as SVG by Graphviz's `dot`, run as a separate
//! process: a layout engine is not something to write again, and a child
//! process can be given a deadline and killed, which a library call
//! cannot.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::model::JobReport;
use crate::render_dot::to_dot;

/// How long [`to_svg`] lets `dot` run. The graph is bounded (see
/// [`render_dot`](crate::render_dot)), so a layout that takes longer is
/// stuck, not slow.
pub const DOT_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the graph could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// Graphviz is not installed (or `dot` is not on `PATH`).
    #[error(
        "Graphviz's `dot` was not found ({program}: {cause}); install Graphviz to draw the \
         graph: `apt-get install graphviz` (Debian, Ubuntu), `dnf install graphviz` (Fedora), \
         `brew install graphviz` (macOS)"
    )]
    GraphvizMissing {
        /// The program that was run.
        program: String,
        /// What starting it said: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// `dot` could not be started or talked to for another reason.
    #[error("running {program}: {cause}")]
    Io {
        /// The program that was run.
        program: String,
        /// What went wrong: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// `dot` ran past its deadline and was killed.
    #[error("{program} did not finish within {seconds} s and was killed")]
    Timeout {
        /// The program that was run.
        program: String,
        /// The deadline in seconds.
        seconds: u64,
    },
    /// `dot` failed.
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        /// The program that was run.
        program: String,
        /// How it exited.
        status: ExitStatus,
        /// What it wrote on its standard error (its last 4 KiB).
        stderr: String,
    },
    /// `dot` wrote something that is not UTF-8 text, so not an SVG.
    #[error("{program} wrote output that is not UTF-8")]
    NotUtf8 {
        /// The program that was run.
        program: String,
    },
}

/// The wait-for graph of `report` as an SVG document: [`to_dot`] drawn by
/// `dot -Tsvg` (from `PATH`) within [`DOT_TIMEOUT`].
pub fn to_svg(report: &JobReport) -> Result<String, RenderError> {
    dot_to_svg("dot", &to_dot(report), DOT_TIMEOUT)
}

/// Runs `program` (Graphviz's `dot`, or a path to it) with `-Tsvg` on the
/// DOT text `dot`, and returns the SVG it writes, killing it after
/// `timeout`.
pub fn dot_to_svg(program: &str, dot: &str, timeout: Duration) -> Result<String, RenderError> {
    let io = |cause| RenderError::Io {
        program: program.to_string(),
        cause,
    };
    let mut child = Command::new(program)
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                RenderError::GraphvizMissing {
                    program: program.to_string(),
                    cause: source,
                }
            } else {
                io(source)
            }
        })?;

    // Writing and reading happen on their own threads: dot may start
    // writing before it has read all its input, and with both pipes full
    // neither side would go on.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = dot.as_bytes().to_vec();
    let writer = thread::spawn(move || stdin.write_all(&input));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let err_reader = thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });

    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io)? {
            break status;
        }
        if Instant::now() >= deadline {
            // The threads are left to end on their own: a child of dot's
            // could keep the pipes open, and the deadline must hold.
            let _ = child.kill();
            let _ = child.wait();
            drop((writer, reader, err_reader));
            return Err(RenderError::Timeout {
                program: program.to_string(),
                seconds: timeout.as_secs(),
            });
        }
        thread::sleep(Duration::from_millis(10));
    };
    // A write error is dot having stopped reading: its status says why.
    let _ = writer.join();
    let out = reader
        .join()
        .unwrap_or_else(|_| Ok(Vec::new()))
        .map_err(io)?;
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        let tail = &err[err.len().saturating_sub(4096)..];
        return Err(RenderError::Failed {
            program: program.to_string(),
            status,
            stderr: String::from_utf8_lossy(tail).trim().to_string(),
        });
    }
    String::from_utf8(out).map_err(|_| RenderError::NotUtf8 {
        program: program.to_string(),
    })
}
