//! The persistent layout cache on a real rank: a `gcore` core of the
//! reference MPICH job (tests/mpich/queues.c, rank 0). The first read
//! resolves the decoder's layouts from libmpi.so's DWARF and keeps them
//! under the library's build-id (as binutils' readelf reads it); later
//! reads take them from there and give the same queues. Entries of another
//! build, corrupt entries and concurrent writers are each checked.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::mpich_job::{gcore, mpidd, ref_mpich, Job};

/// One core for every test of this binary: the job is stopped while it is
/// taken, then ended. The core and the executable are kept in a directory
/// of their own (the job's ends with the job), where `--search-path`
/// finds the executable.
fn rank_core() -> &'static Path {
    static CORE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CORE.get_or_init(|| {
        let job = Job::start("layout-cache-job", &[]);
        let core = gcore(&job.dir, job.pid(0));
        let kept = common::scratch::fresh_dir("layout-cache-rank0");
        std::fs::copy(&core, kept.join("rank0.core")).expect("copy the rank's core");
        std::fs::copy(job.dir.join("queues"), kept.join("queues")).expect("copy the program");
        assert_eq!(job.finish(), 0, "the job completes once continued");
        kept.join("rank0.core")
    })
}

/// `--core CORE --search-path ITS_DIR`.
fn core_args() -> [std::ffi::OsString; 4] {
    let core = rank_core();
    [
        "--core".into(),
        core.into(),
        "--search-path".into(),
        core.parent().expect("the core's directory").into(),
    ]
}

/// The build-id of the reference libmpi.so, as binutils reads it.
fn libmpi_build_id() -> String {
    let lib = ref_mpich().join("lib/libmpi.so");
    let out = Command::new("readelf")
        .arg("-n")
        .arg(&lib)
        .output()
        .expect("run readelf (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("readelf shows no build-id for {}:\n{text}", lib.display()))
        .trim()
        .to_string()
}

fn fresh_cache(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-test-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `mpidd queues --core CORE --json --verbose` with the cache in `cache`.
fn queues(cache: &Path, extra: &[&str]) -> Output {
    mpidd()
        .env("MPIDD_CACHE_DIR", cache)
        .args(["queues", "--json", "--verbose"])
        .args(core_args())
        .args(extra)
        .output()
        .expect("run mpidd")
}

fn ok(out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "mpidd failed: {stderr}");
    (stdout, stderr)
}

const FROM_CACHE: &str = "the layouts come from the layout cache";

/// Sanity of what is compared: rank 0 of queues.c has its receives posted.
fn assert_rank0_queues(json: &str) {
    let v: serde_json::Value = serde_json::from_str(json).expect("queues JSON");
    let world = v["communicators"]
        .as_array()
        .expect("communicators")
        .iter()
        .find(|c| c["name"] == "MPI_COMM_WORLD")
        .expect("MPI_COMM_WORLD");
    assert_eq!(world["size"], 4, "{world}");
    assert!(
        json.contains("\"desired_tag\""),
        "no pending operation read: {json}"
    );
}

#[test]
fn the_second_read_takes_the_layouts_from_the_cache_and_reads_the_same() {
    let cache = fresh_cache("warm");
    let (uncached, _) = ok(&queues(&cache, &["--no-cache"]));
    assert!(
        !cache.exists(),
        "--no-cache wrote to the cache at {}",
        cache.display()
    );
    assert_rank0_queues(&uncached);

    let (cold, cold_err) = ok(&queues(&cache, &[]));
    assert!(!cold_err.contains(FROM_CACHE), "{cold_err}");
    let entry = cache.join(format!("{}.json", libmpi_build_id()));
    assert!(
        entry.exists(),
        "no entry {} after the first read; the cache holds {:?}",
        entry.display(),
        std::fs::read_dir(&cache).map(|d| d.count())
    );

    // The symbol tables of the large objects (the debug build's libmpi,
    // libc's debug file) are kept beside the layouts.
    assert!(
        !symbol_indexes(&cache).is_empty(),
        "no symbol index in {}",
        cache.join("symbols").display()
    );

    let (warm, warm_err) = ok(&queues(&cache, &[]));
    assert!(warm_err.contains(FROM_CACHE), "{warm_err}");
    assert_eq!(cold, uncached);
    assert_eq!(warm, uncached);

    let listing = mpidd()
        .env("MPIDD_CACHE_DIR", &cache)
        .arg("cache")
        .output()
        .expect("run mpidd cache");
    let (listing, _) = ok(&listing);
    assert!(listing.contains("1 entry"), "{listing}");
    assert!(listing.contains("MPICH 4.0.2 libmpi.so"), "{listing}");
    assert!(listing.contains(&libmpi_build_id()), "{listing}");

    let cleared = mpidd()
        .env("MPIDD_CACHE_DIR", &cache)
        .args(["cache", "clear"])
        .output()
        .expect("run mpidd cache clear");
    let (cleared, _) = ok(&cleared);
    assert!(cleared.contains("removed 1 entry"), "{cleared}");
    assert!(!entry.exists());
    assert!(
        !cache.join("symbols").exists(),
        "cache clear left the symbol indexes"
    );
}

/// The symbol indexes in the cache `cache`.
fn symbol_indexes(cache: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache.join("symbols"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| p.extension().is_some_and(|x| x == "names"));
    found.sort();
    found
}

/// Symbol indexes that were made for other files (each one's bytes moved
/// to the next one's name), cut short or emptied are never used: the
/// reads give what a read without any cache gives.
#[test]
fn a_symbol_index_of_another_file_or_cut_short_is_never_used() {
    let cache = fresh_cache("symbol-indexes");
    let (uncached, _) = ok(&queues(&cache, &["--no-cache"]));
    ok(&queues(&cache, &[]));
    let indexes = symbol_indexes(&cache);
    assert!(indexes.len() >= 2, "fewer than two indexes: {indexes:?}");
    let contents: Vec<Vec<u8>> = indexes.iter().map(|p| std::fs::read(p).unwrap()).collect();
    for (i, path) in indexes.iter().enumerate() {
        std::fs::write(path, &contents[(i + 1) % contents.len()]).unwrap();
    }
    let (moved, _) = ok(&queues(&cache, &[]));
    assert_eq!(moved, uncached);

    for (path, bytes) in symbol_indexes(&cache).iter().zip(&contents) {
        std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
    }
    let (cut, _) = ok(&queues(&cache, &[]));
    assert_eq!(cut, uncached);
    for path in symbol_indexes(&cache) {
        std::fs::write(path, b"").unwrap();
    }
    let (empty, _) = ok(&queues(&cache, &[]));
    assert_eq!(empty, uncached);
}

/// An entry made for another build is not used even under this build's
/// file name: its layouts are shifted, and the read must still be right.
#[test]
fn an_entry_of_another_build_is_never_used() {
    let cache = fresh_cache("other-build");
    let (expected, _) = ok(&queues(&cache, &[]));
    let entry = cache.join(format!("{}.json", libmpi_build_id()));
    let text = std::fs::read_to_string(&entry).expect("the entry");
    let mut profile: serde_json::Value = serde_json::from_str(&text).expect("entry JSON");
    let other = "0123456789abcdef0123456789abcdef01234567";
    profile["identity"]["objects"][0]["build_ids"] = serde_json::json!([other]);
    // Were it used, every member would be read 8 bytes off.
    for ty in profile["layouts"]
        .as_object_mut()
        .expect("layouts")
        .values_mut()
    {
        if let Some(members) = ty.get_mut("members").and_then(|m| m.as_object_mut()) {
            for m in members.values_mut() {
                if let Some(off) = m["offset"].as_u64() {
                    m["offset"] = serde_json::json!(off + 8);
                }
            }
        }
    }
    std::fs::write(&entry, serde_json::to_string(&profile).unwrap()).unwrap();

    let (read, err) = ok(&queues(&cache, &[]));
    assert!(!err.contains(FROM_CACHE), "{err}");
    assert!(
        err.contains("ignoring the layout cache entry") && err.contains("not made for build-id"),
        "no warning about the foreign entry: {err}"
    );
    assert_eq!(read, expected);
    // Rebuilt for this build.
    let (again, err) = ok(&queues(&cache, &[]));
    assert!(err.contains(FROM_CACHE), "{err}");
    assert_eq!(again, expected);
}

#[test]
fn a_corrupt_entry_is_reported_in_one_line_and_rebuilt() {
    let cache = fresh_cache("corrupt");
    let (expected, _) = ok(&queues(&cache, &[]));
    let entry = cache.join(format!("{}.json", libmpi_build_id()));
    let text = std::fs::read(&entry).expect("the entry");
    std::fs::write(&entry, &text[..text.len() / 2]).unwrap();

    let (read, err) = ok(&queues(&cache, &[]));
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("layout cache entry"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("rebuilt"), "{err}");
    assert_eq!(read, expected);
    let (again, err) = ok(&queues(&cache, &[]));
    assert!(err.contains(FROM_CACHE), "{err}");
    assert_eq!(again, expected);
}

#[test]
fn runs_writing_the_cache_at_once_leave_a_valid_entry() {
    let cache = fresh_cache("concurrent");
    let runs: Vec<_> = (0..6)
        .map(|_| {
            mpidd()
                .env("MPIDD_CACHE_DIR", &cache)
                .args(["queues", "--json"])
                .args(core_args())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start mpidd")
        })
        .collect();
    let outputs: Vec<Output> = runs
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait for mpidd"))
        .collect();
    let first = ok(&outputs[0]).0;
    for out in &outputs {
        let (stdout, stderr) = ok(out);
        assert_eq!(stdout, first);
        assert!(!stderr.contains("warning"), "{stderr}");
    }
    let mut names: Vec<String> = std::fs::read_dir(&cache)
        .expect("the cache")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [format!("{}.json", libmpi_build_id()), "symbols".to_string()],
        "one entry, the symbol indexes, and no leftover temporary file"
    );
    let indexes = std::fs::read_dir(cache.join("symbols"))
        .expect("the symbol indexes")
        .map(|e| e.unwrap().path())
        .collect::<Vec<_>>();
    assert!(
        indexes
            .iter()
            .all(|p| p.extension().is_some_and(|x| x == "names")),
        "a leftover temporary index: {indexes:?}"
    );
    let (warm, err) = ok(&queues(&cache, &[]));
    assert!(err.contains(FROM_CACHE), "{err}");
    assert_eq!(warm, first);
}

#[test]
fn mpidd_job_fills_and_uses_the_cache() {
    let cache = fresh_cache("job");
    let job = |cache: &Path| {
        mpidd()
            .env("MPIDD_CACHE_DIR", cache)
            .args(["job", "--json", "--no-stacks"])
            .args(core_args())
            .output()
            .expect("run mpidd job")
    };
    let (cold, _) = ok(&job(&cache));
    assert!(cache.join(format!("{}.json", libmpi_build_id())).exists());
    let (warm, err) = ok(&job(&cache));
    assert!(!err.contains("warning"), "{err}");
    // The same report, but for what each rank's queues rest on: the DWARF
    // cold, the cache entry warm.
    let mut cold: serde_json::Value = serde_json::from_str(&cold).expect("job JSON");
    let mut v: serde_json::Value = serde_json::from_str(&warm).expect("job JSON");
    let provenance = |report: &mut serde_json::Value| -> String {
        let queues = &mut report["ranks"][0]["basis"]["queues"];
        let p = queues["provenance"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        queues["provenance"] = serde_json::Value::Null;
        p
    };
    let (from_dwarf, from_cache) = (provenance(&mut cold), provenance(&mut v));
    assert!(
        from_dwarf.ends_with("layouts from its DWARF"),
        "{from_dwarf}"
    );
    assert!(
        from_cache.contains(&format!(
            "layouts from the layout cache ({}",
            cache.join(format!("{}.json", libmpi_build_id())).display()
        )),
        "{from_cache}"
    );
    assert_eq!(v, cold);
    let rank = &v["ranks"][0];
    assert!(
        rank["errors"].as_array().is_none_or(|e| e.is_empty()),
        "{rank}"
    );
}

/// What DWARF said of the frames a job's stacks named is kept beside the
/// symbol indexes for the very DWARF file (libc's debug file, the debug
/// build's libmpi), and a later run names the same frames from it: the
/// stacks are those a run without any cache gives. Kept files made for
/// other files (each one's bytes moved to the next one's name) are not
/// used.
#[test]
fn stacks_named_from_kept_frames_are_those_the_dwarf_gives() {
    let cache = fresh_cache("kept-frames");
    let job = |extra: &[&str]| {
        let out = mpidd()
            .env("MPIDD_CACHE_DIR", &cache)
            .args(["job", "--json"])
            .args(core_args())
            .args(extra)
            .output()
            .expect("run mpidd job");
        let (stdout, _) = ok(&out);
        let report: serde_json::Value = serde_json::from_str(&stdout).expect("job JSON");
        report["ranks"][0]["threads"].clone()
    };
    let uncached = job(&["--no-cache"]);
    // The frames DWARF names: with a source line, in the program and in
    // libc (from its compressed debug file).
    let frames: Vec<&serde_json::Value> = uncached
        .as_array()
        .expect("threads")
        .iter()
        .flat_map(|t| t["frames"].as_array().into_iter().flatten())
        .collect();
    for object in ["queues", "libc.so"] {
        assert!(
            frames
                .iter()
                .any(|f| f["object"].as_str().is_some_and(|o| o.contains(object))
                    && f["line"].is_u64()),
            "no frame of {object} with a line: {uncached}"
        );
    }
    assert_eq!(job(&[]), uncached, "the cold run");
    let kept: Vec<PathBuf> = std::fs::read_dir(cache.join("symbols"))
        .expect("the symbols folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "frames"))
        .collect();
    assert!(!kept.is_empty(), "no frames kept in {}", cache.display());
    assert_eq!(job(&[]), uncached, "the warm run, from the kept frames");

    let mut all: Vec<PathBuf> = std::fs::read_dir(cache.join("symbols"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    all.sort();
    let contents: Vec<Vec<u8>> = all.iter().map(|p| std::fs::read(p).unwrap()).collect();
    for (i, path) in all.iter().enumerate() {
        std::fs::write(path, &contents[(i + 1) % contents.len()]).unwrap();
    }
    assert_eq!(job(&[]), uncached, "kept files moved to other files' names");
}
