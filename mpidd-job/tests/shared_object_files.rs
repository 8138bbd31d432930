//! One reader shares each object file among the ranks of a job (found,
//! mapped, placed and searched for its debug file once): every rank must
//! still get exactly what it gets when read alone, and two ranks share an
//! object only when it is the same file on disk.

use std::path::{Path, PathBuf};

use mpidd_job::synthetic_cores::{demo_job, write_hung_job, SyntheticJobCores, LIBC, LIBMPI};
use mpidd_job::{JobReader, RankReading, RankTarget, ReadOptions};
use mpidd_read::{CoreTargetOptions, FileSearch};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mpidd-shared-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn reader(job: &SyntheticJobCores) -> JobReader {
    JobReader::new(ReadOptions {
        layouts: Some(job.layouts.clone()),
        ..Default::default()
    })
}

/// Each target read by a reader of its own: nothing shared.
fn alone(job: &SyntheticJobCores, targets: &[RankTarget]) -> Vec<RankReading> {
    targets.iter().map(|t| reader(job).read_rank(t)).collect()
}

fn core_in(core: &Path, sysroot: Option<&Path>) -> RankTarget {
    RankTarget::Core {
        path: core.to_path_buf(),
        options: CoreTargetOptions {
            search: FileSearch {
                sysroot: sysroot.map(Path::to_path_buf),
                search_path: Vec::new(),
            },
            ..CoreTargetOptions::default()
        },
        host: None,
        world_rank: None,
    }
}

/// Copies the job's executable and libraries under `root`, at the paths
/// the cores recorded; `libmpi` is what goes where libmpi.so.12 was.
fn sysroot(job: &SyntheticJobCores, root: &Path, libmpi: &Path) {
    let at = root.join(job.dir.strip_prefix("/").unwrap());
    std::fs::create_dir_all(&at).unwrap();
    for name in ["app", LIBC] {
        std::fs::copy(job.dir.join(name), at.join(name)).unwrap();
    }
    std::fs::copy(libmpi, at.join(LIBMPI)).unwrap();
}

#[test]
fn one_reader_gives_every_rank_what_it_reads_alone() {
    let job = write_hung_job(&dir("same"), &demo_job()).unwrap();
    let targets: Vec<RankTarget> = job.cores.iter().map(RankTarget::core).collect();
    let shared = reader(&job).read_all(&targets, &|_, _| {});
    let each = alone(&job, &targets);
    assert_eq!(shared.len(), 6);
    for (s, a) in shared.iter().zip(&each) {
        assert!(s.queues.is_some(), "{}: {:?}", s.target, s.queues_unread);
        assert!(!s.threads.is_empty(), "{}: no stacks", s.target);
        assert!(s.errors.is_empty(), "{}: {:?}", s.target, s.errors);
        assert_eq!(s, a);
    }
    // Every rank's MPI_COMM_WORLD lists the same six world ranks: one copy
    // for the whole job, not one per rank.
    let worlds: Vec<_> = shared
        .iter()
        .map(|r| {
            let queues = r.queues.as_ref().expect("queues were read");
            let world = queues
                .communicators
                .iter()
                .find(|c| c.name == "MPI_COMM_WORLD");
            world
                .and_then(|c| c.group.clone())
                .expect("the world's group")
        })
        .collect();
    assert_eq!(&*worlds[0], &[0, 1, 2, 3, 4, 5]);
    assert!(worlds.iter().all(|w| std::sync::Arc::ptr_eq(w, &worlds[0])));
    let _ = std::fs::remove_dir_all(&job.dir);
}

#[test]
fn a_library_replaced_during_the_run_is_not_shared() {
    let job = write_hung_job(&dir("replaced"), &demo_job()).unwrap();
    let targets: Vec<RankTarget> = job.cores.iter().map(RankTarget::core).collect();
    let reader = reader(&job);
    let before = reader.read_rank(&targets[1]);
    assert!(before.queues.is_some(), "{:?}", before.queues_unread);
    let _ = reader.read_rank(&targets[0]);

    // Another file (a new inode) where libmpi.so.12 was: the C library,
    // which defines none of MPI's symbols.
    let lib = job.dir.join(LIBMPI);
    std::fs::remove_file(&lib).unwrap();
    std::fs::copy(job.dir.join(LIBC), &lib).unwrap();

    let after = reader.read_rank(&targets[1]);
    assert_eq!(after, alone(&job, &targets[1..2])[0]);
    assert_ne!(after, before, "rank 1 read the replaced library's symbols");
    assert!(after.queues.is_none(), "queues read without MPI's symbols");
    let _ = std::fs::remove_dir_all(&job.dir);
}

#[test]
fn the_same_recorded_path_under_two_sysroots_is_two_objects() {
    let job = write_hung_job(&dir("sysroots"), &demo_job()).unwrap();
    let roots = dir("sysroots-roots");
    let (good, other) = (roots.join("good"), roots.join("other"));
    sysroot(&job, &good, &job.dir.join(LIBMPI));
    sysroot(&job, &other, &job.dir.join(LIBC));

    let targets = [
        core_in(&job.cores[0], Some(&good)),
        core_in(&job.cores[1], Some(&other)),
        core_in(&job.cores[2], Some(&good)),
        core_in(&job.cores[1], Some(&good)),
    ];
    let shared = reader(&job).read_all(&targets, &|_, _| {});
    assert_eq!(shared, alone(&job, &targets));
    assert!(shared[0].queues.is_some(), "{:?}", shared[0].queues_unread);
    assert!(
        shared[1].queues.is_none(),
        "rank 1 got the other sysroot's libmpi"
    );
    assert!(shared[3].queues.is_some(), "{:?}", shared[3].queues_unread);
    let _ = std::fs::remove_dir_all(&roots);
    let _ = std::fs::remove_dir_all(&job.dir);
}
