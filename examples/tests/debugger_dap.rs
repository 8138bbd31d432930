//! VS Code's way into gdb and lldb, the Debug Adapter Protocol, with no
//! extension of mpidd's own: a DAP client written here (common/dap.rs,
//! JSON after `Content-Length` headers over the adapter's standard input
//! and output, as VS Code speaks it) drives
//!
//! - gdb's own DAP mode (`gdb -i=dap`, gdb 14 and later: Debian 13's gdb
//!   16, in the Debian 13 root, on a job of Debian 13's Open MPI 5 run
//!   there), with the module loaded by the documented .gdbinit line
//!   (`python import mpidd.gdb`) for the root's CPython 3.13;
//! - lldb's adapter (Debian 12's `lldb-vscode-14`, on a job of Debian 12's
//!   Open MPI), with the module loaded by `command script import
//!   mpidd.lldb` in the attach request's `initCommands`.
//!
//! Each attaches to rank 0 of tests/openmpi/queues.c (stopped by itself),
//! sets a function breakpoint on `MPI_Recv`, continues, and at the stop
//! asks, as the Variables tree does, for the scopes and variables of the
//! frame of `main`, `MPI_Recv`'s caller: its `MPI_Comm` variables' values
//! are the decoded communicators (`mpidd_dup size 4, rank 0`, which
//! expand to their members, `size` 4 and so on), the
//! elements of its `MPI_Request` array the receives it posted, and a
//! watch of `(MPI_Comm) &ompi_mpi_comm_world` is `MPI_COMM_WORLD size 4,
//! rank 0`. The Debug Console's `mpi queues -json` (an `evaluate` in the
//! `repl` context) returns the rank's queues, which must be what the rank
//! wrote down it posted. The adapter then detaches and the job completes.

mod common;

use std::path::Path;
use std::process::Command;

use common::dap::{variable, Dap};
use common::debian_root::{in_root, root};
use common::mpich_job::gcore;
use common::ob1_checks;
use common::ompi_job::OmpiJob;
use common::python_module::module_site;
use serde_json::{json, Value};

/// `initialize`, as VS Code sends it.
fn initialize(dap: &mut Dap) {
    dap.request(
        "initialize",
        json!({
            "clientID": "mpidd-test",
            "adapterID": "mpidd-test",
            "linesStartAt1": true,
            "columnsStartAt1": true,
            "pathFormat": "path",
            "supportsVariableType": true,
        }),
    );
}

/// The stop at `MPI_Recv`: initialize, attach (`attach` holds what the
/// adapter needs), the breakpoint, continue, and the stack of the thread
/// that hit it. Returns the frame id of `main`. `keep_sigstop` is the
/// debugger's command, given in the Debug Console, that keeps the SIGSTOP
/// the rank stopped itself with from being delivered again when it is
/// continued (a rank a person attaches to is running, or hung, instead).
fn stop_in_mpi_recv(dap: &mut Dap, attach: Value, keep_sigstop: &str) -> i64 {
    initialize(dap);
    // VS Code's order: the attach, the breakpoints (and here the signal's
    // handling) once the adapter is initialized, then configurationDone
    // (gdb attaches only then; lldb has attached, and continues the
    // process then).
    let attach_seq = dap.send("attach", attach);
    dap.wait_event("initialized", |_| true);
    dap.request(
        "setFunctionBreakpoints",
        json!({ "breakpoints": [{ "name": "MPI_Recv" }] }),
    );
    let handle = dap.request(
        "evaluate",
        json!({ "expression": keep_sigstop, "context": "repl" }),
    );
    assert!(
        !handle["result"].as_str().unwrap_or("").contains("rror"),
        "{handle:#}"
    );
    dap.request("configurationDone", json!({}));
    let response = dap.response(attach_seq, "attach");
    assert_eq!(response["success"], true, "{response:#}\n{}", dap.report());
    // gdb stops the process it attached to (reason "attach"): continued,
    // the rank returns from its SIGSTOP and calls MPI_Recv. (lldb has
    // continued it at configurationDone.)
    let stopped = loop {
        let stopped = dap.wait_event("stopped", |_| true);
        match stopped["body"]["reason"].as_str() {
            Some("breakpoint") => break stopped,
            Some("attach" | "entry") => {}
            _ => panic!("an unexpected stop: {stopped}\n{}", dap.report()),
        }
        let thread = stopped["body"]["threadId"].clone();
        dap.request("continue", json!({ "threadId": thread }));
    };
    let thread = stopped["body"]["threadId"].clone();
    main_frame(dap, thread, "MPI_Recv")
}

/// The id of the frame of `main` in the stack of `thread`, whose newest
/// frame is in `newest` (a function's name, or a part of it).
fn main_frame(dap: &mut Dap, thread: Value, newest: &str) -> i64 {
    let stack = dap.request("stackTrace", json!({ "threadId": thread, "levels": 20 }));
    let frames = stack["stackFrames"].as_array().expect("stackFrames");
    assert!(
        frames
            .first()
            .is_some_and(|f| f["name"].as_str().unwrap().contains(newest)),
        "the stop is not in {newest}: {frames:#?}\n{}",
        dap.report()
    );
    let main = frames
        .iter()
        .find(|f| {
            let name = f["name"].as_str().unwrap();
            name == "main" || name.starts_with("main(") || name.starts_with("main ")
        })
        .unwrap_or_else(|| panic!("no frame of main in {frames:#?}"));
    main["id"].as_i64().unwrap()
}

/// How an adapter shows a value whose summary the module gave: gdb's
/// shows the printer's text alone; lldb-vscode shows the value (a pointer,
/// Open MPI's handles) and then the summary.
#[derive(Clone, Copy)]
enum Shown {
    Summary,
    ValueThenSummary,
}

impl Shown {
    fn check(self, what: &str, var: &Value, summary: &str) {
        let value = var["value"]
            .as_str()
            .or_else(|| var["result"].as_str())
            .unwrap_or_else(|| panic!("{what}: no value in {var:#}"));
        let ok = match self {
            Shown::Summary => value == summary,
            Shown::ValueThenSummary => value
                .strip_suffix(summary)
                .and_then(|v| v.strip_suffix(' '))
                .is_some_and(|v| v.starts_with("0x")),
        };
        assert!(ok, "{what} shows {value:?}, not the decoded {summary:?}");
        assert!(
            var["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("MPI_Comm") || t.starts_with("MPI_Request")),
            "{what}: {var:#}"
        );
    }
}

/// What the Variables tree, a watch and the Debug Console show at the
/// stop in `main` of rank 0 (`frame`); `repl` is how the adapter's console
/// takes a debugger command.
fn check_stop(dap: &mut Dap, frame: i64, job: &OmpiJob, shown: Shown, repl: &str) {
    let locals = dap.locals(frame);
    // The program's communicators (queues.c's header).
    for (name, summary) in [
        ("dup", "mpidd_dup size 4, rank 0"),
        ("split", "mpidd_split_even size 2, rank 0"),
    ] {
        shown.check(name, variable(&locals, name), summary);
    }
    // The communicator expands to its members (lldb's synthetic children,
    // the gdb printer's children in DAP mode).
    {
        let dup = variable(&locals, "dup")["variablesReference"].clone();
        assert_ne!(dup, 0, "dup does not expand: {locals:#?}");
        let members = dap.request("variables", json!({ "variablesReference": dup }));
        let members = members["variables"].as_array().expect("the members of dup");
        for (name, value) in [
            ("name", "\"mpidd_dup\""),
            ("size", "4"),
            ("rank", "0"),
            ("state", "\"live\""),
        ] {
            // (lldb-vscode 14 puts a space before a char array's text.)
            let shown = variable(members, name)["value"].as_str().unwrap_or("");
            assert_eq!(shown.trim_start(), value, "{members:#?}");
        }
    }
    // recvs[], expanded: each receive rank 0 wrote down it posted.
    let recvs = variable(&locals, "recvs")["variablesReference"].clone();
    let recvs = dap.request("variables", json!({ "variablesReference": recvs }));
    let recvs = recvs["variables"]
        .as_array()
        .expect("the elements of recvs");
    let posted = job.posted(0);
    let posted: Vec<Vec<&str>> = posted
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w[0] == "recv")
        .collect();
    assert_eq!((recvs.len(), posted.len()), (3, 3), "{recvs:#?}");
    for (var, words) in recvs.iter().zip(&posted) {
        // recv COMM SOURCE TAG BYTES BUFFER REQUEST
        let any = |w: &str, name: &str| {
            if w == "-1" {
                name.to_string()
            } else {
                w.to_string()
            }
        };
        let summary = format!(
            "MPI_Request {} receive, peer {}, tag {}, on {}, pending",
            words[6],
            any(words[2], "MPI_ANY_SOURCE"),
            any(words[3], "MPI_ANY_TAG"),
            words[1]
        );
        shown.check("an element of recvs", var, &summary);
    }
    // A watch of the predefined communicator (a macro of mpi.h, which the
    // program's debug info does not hold).
    let world = dap.request(
        "evaluate",
        json!({ "expression": "(MPI_Comm) &ompi_mpi_comm_world", "frameId": frame, "context": "watch" }),
    );
    shown.check("MPI_COMM_WORLD", &world, "MPI_COMM_WORLD size 4, rank 0");
    // The Debug Console.
    let queues = dap.request(
        "evaluate",
        json!({ "expression": format!("{repl}mpi queues -json"), "frameId": frame, "context": "repl" }),
    );
    let text = console_output(&queues);
    let q: Value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("mpi queues -json gave no JSON ({e}):\n{text}"));
    ob1_checks::check_rank(0, &q, &job.posted(0));
    let queues = dap.request(
        "evaluate",
        json!({ "expression": format!("{repl}mpi queues"), "frameId": frame, "context": "repl" }),
    );
    let text = console_output(&queues);
    let first = text.lines().next().unwrap_or("");
    assert!(
        first.starts_with("decoder ompi-"),
        "the provenance line: {text}"
    );
    for expected in ["mpidd_dup", "mpidd_split_even", "MPI_COMM_WORLD"] {
        assert!(text.contains(expected), "no {expected} in:\n{text}");
    }
}

/// What the Debug Console shows of a command: lldb-vscode echoes the
/// command first, after `(lldb) `.
fn console_output(evaluated: &Value) -> String {
    let text = evaluated["result"].as_str().expect("a result");
    text.lines()
        .filter(|l| !l.starts_with("(lldb) "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// tests/openmpi/queues.c built with the Debian 13 root's mpicc.openmpi and
/// run there by its mpirun.openmpi (4 ranks, ob1 over shared memory), in a
/// fresh directory `name` seen at the same path inside the root, as is
/// `site`.
fn start_in_debian13(root: &Path, name: &str, site: &Path) -> OmpiJob {
    let dir = common::scratch::fresh_dir(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/openmpi/queues.c");
    let copy = dir.join("queues.c");
    std::fs::copy(&src, &copy).unwrap();
    let exe = dir.join("queues");
    let out = in_root(root, &[&dir])
        .args(["mpicc.openmpi", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.openmpi in the Debian 13 root failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The module's directory is seen by the job's namespace, which gdb
    // enters.
    let mut mpirun = in_root(root, &[&dir, site]);
    mpirun.args([
        "mpirun.openmpi",
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,sm",
        "--mca",
        "pml",
        "ob1",
    ]);
    OmpiJob::launch(mpirun, &exe, dir)
}

/// Debian 13's gdb in its DAP mode, attached to rank 0 of a job of Debian
/// 13's Open MPI 5.0.7 (stripped, read through its shipped profile).
#[test]
fn gdb_dap_shows_decoded_handles_and_mpi_queues() {
    let root = root(
        "MPIDD_DEBIAN13_ROOT",
        "debian13",
        &[
            "usr/bin/gdb",
            "usr/bin/mpirun.openmpi",
            "usr/bin/python3.13",
        ],
    );
    let site = module_site();
    let job = start_in_debian13(&root, "dap-gdb", site);
    // The user's ~/.gdbinit: the wheel's directory on gdb's sys.path (where
    // pip would have put it), then the documented line.
    let init = job.dir.join("gdbinit");
    std::fs::write(
        &init,
        format!(
            "python import sys; sys.path.insert(0, {:?})\npython import mpidd.gdb\n",
            site.display().to_string()
        ),
    )
    .unwrap();
    // gdb runs where the rank runs, in its mount namespace and root (as
    // on a Debian 13 machine): a gdb in another namespace of the same root
    // would read the rank's files as `target:` files, through the kernel's
    // view of the rank, and Debian 13's gdb places their sections wrongly
    // then.
    let mut gdb = Command::new("nsenter");
    gdb.args([
        "--target",
        &job.pid(0).to_string(),
        "--mount",
        "--root",
        "--wd",
    ])
    .args([
        "env",
        "-i",
        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/root",
    ])
    .args(["gdb", "-nx", "-x"])
    .arg(&init)
    .arg("-i=dap");
    let mut dap = Dap::start(gdb);
    let exe = job.dir.join("queues");
    let frame = stop_in_mpi_recv(
        &mut dap,
        json!({ "program": exe, "pid": job.pid(0) }),
        "handle SIGSTOP nostop noprint nopass",
    );
    check_stop(&mut dap, frame, &job, Shown::Summary, "");
    dap.disconnect();
    assert_eq!(
        job.finish(),
        0,
        "the job completes once detached and continued"
    );
}

/// Where Debian 12's lldb 14 keeps its Python package (see
/// lldb_module.rs): lldb-vscode is given it on PYTHONPATH too.
const LLDB_PYTHON: &str = "/usr/lib/llvm-14/lib/python3.11/dist-packages";

/// Debian 12's lldb-vscode-14 attached to rank 0 of a job of Debian 12's
/// Open MPI 4.1 (stripped, read through its shipped profile), the module
/// imported by the attach request's initCommands; then the same on the
/// rank's core (attach with `coreFile`).
#[test]
fn lldb_dap_shows_decoded_handles_and_mpi_queues() {
    let adapter = Path::new("/usr/bin/lldb-vscode-14");
    assert!(
        adapter.exists() && Path::new(LLDB_PYTHON).join("lldb").exists(),
        "lldb-vscode-14 is missing: apt-get install lldb-14 python3-lldb-14 (scripts/test.sh does)"
    );
    let site = module_site();
    let job = OmpiJob::start_on(common::ompi_job::OmpiBuild::Debian, "dap-lldb", "queues");
    // The core of rank 0 as it stopped itself, for the second session.
    let core = gcore(&job.dir, job.pid(0));
    let lldb = || {
        let mut lldb = Command::new(adapter);
        lldb.env("PYTHONPATH", LLDB_PYTHON);
        Dap::start(lldb)
    };
    // The user's ~/.lldbinit, as initCommands: the wheel's directory on
    // lldb's sys.path (where pip would have put it), then the documented
    // line.
    let init = json!([
        format!(
            "script import sys; sys.path.insert(0, {:?})",
            site.display().to_string()
        ),
        "command script import mpidd.lldb",
    ]);
    let exe = job.dir.join("queues");
    let mut dap = lldb();
    let frame = stop_in_mpi_recv(
        &mut dap,
        json!({ "program": exe, "pid": job.pid(0), "initCommands": init }),
        "`process handle -p false -s false -n false SIGSTOP",
    );
    check_stop(&mut dap, frame, &job, Shown::ValueThenSummary, "`");
    dap.disconnect();
    // The core, opened as launch.json's attach with coreFile does: the
    // same variables and queues at its stop, in raise(SIGSTOP).
    let mut dap = lldb();
    initialize(&mut dap);
    let attach = dap.send(
        "attach",
        json!({ "program": exe, "coreFile": core, "initCommands": init, "stopOnEntry": true }),
    );
    dap.wait_event("initialized", |_| true);
    dap.request("configurationDone", json!({}));
    let response = dap.response(attach, "attach");
    assert_eq!(response["success"], true, "{response:#}\n{}", dap.report());
    dap.wait_event("stopped", |_| true);
    let frame = main_frame(&mut dap, json!(job.pid(0)), "");
    check_stop(&mut dap, frame, &job, Shown::ValueThenSummary, "`");
    // lldb-vscode 14 answers a disconnect from a core with bytes that are
    // not UTF-8 (a freed string): VS Code's end of the session is the end
    // of its input.
    dap.close();
    assert_eq!(
        job.finish(),
        0,
        "the job completes once detached and continued"
    );
}
