//! docs/job-json.md lists every field of the job report's JSON: the
//! fields the code writes must be exactly the ones documented, so the
//! document cannot drift from the schema it describes.

use std::collections::BTreeSet;

use mpidd_job::synthetic::SyntheticRank;
use serde_json::Value;

/// The first-column field names of the table under `## heading`.
fn documented(doc: &str, heading: &str) -> BTreeSet<String> {
    let start = doc
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("docs/job-json.md has no section {heading}"));
    let section = &doc[start + heading.len() + 5..];
    let end = section.find("\n## ").unwrap_or(section.len());
    section[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

#[test]
fn the_documented_fields_are_the_written_ones() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/job-json.md"))
        .expect("read docs/job-json.md");
    let mut readings = vec![
        SyntheticRank::new(0, 2)
            .receive("MPI_COMM_WORLD", 1, Some(3))
            .unexpected("MPI_COMM_WORLD", 1, 4, 1 << 20, true)
            .stack(&["main", "MPI_Recv", "poll"])
            .reading(),
        SyntheticRank::new(1, 2)
            .receive("MPI_COMM_WORLD", 0, Some(3))
            .stack(&["main", "MPI_Ssend", "poll"])
            .reading(),
    ];
    // Only a rank whose launcher told it its job carries its PMIx
    // identity and its job's size; with a rank of the job missing, the
    // basis counts it.
    for (rank, r) in readings.iter_mut().enumerate() {
        r.pmix_namespace = Some("prterun-host-1@1".to_string());
        r.pmix_rank = Some(rank as i64);
        r.job_size = Some(3);
    }
    // Only a timed reading carries its timings.
    readings[0].timings = Some(Box::default());
    // Only a rank whose Python frames were read carries their version, its
    // mpi4py call and its statement, and only one whose interpreter shows
    // an exception carries that.
    readings[0].python = Some("3.11".to_string());
    readings[0].python_call = Some("Comm.recv".to_string());
    readings[0].python_statement = Some("data = comm.recv(source=1)".to_string());
    readings[0].python_exception = Some(mpidd_read::PythonException {
        type_name: "ValueError".to_string(),
        message: Some("bad input".to_string()),
        state: mpidd_read::ExceptionState::Raised,
        raised_at: Some(mpidd_read::PythonFrame {
            function: "check".to_string(),
            file: "job.py".to_string(),
            line: Some(12),
            last_of_call: true,
        }),
    });
    let report = serde_json::to_value(mpidd_job::analyze(&readings)).unwrap();
    assert!(report["ranks"][1].get("timings").is_none());
    assert_eq!(report["schema"], mpidd_job::SCHEMA);
    assert_eq!(keys(&report), documented(&doc, "Top level"));
    let rank = &report["ranks"][0];
    // Only a rank on its way out has a way_out: one in MPI_Finalize.
    let leaving = mpidd_job::analyze(&[SyntheticRank::new(0, 1)
        .stack(&["main", "MPI_Finalize", "poll"])
        .reading()]);
    let leaving = serde_json::to_value(leaving).unwrap();
    assert_eq!(leaving["ranks"][0]["way_out"], "finalize");
    assert!(rank.get("way_out").is_none());
    let mut rank_keys = keys(rank);
    rank_keys.extend(keys(&leaving["ranks"][0]));
    assert_eq!(rank_keys, documented(&doc, "rank"));
    let exception = &rank["python_exception"];
    assert_eq!(keys(exception), documented(&doc, "python exception"));
    assert_eq!(
        keys(&exception["raised_at"]),
        documented(&doc, "python frame")
    );
    let op = &rank["pending"][0];
    assert_eq!(keys(op), documented(&doc, "operation"));
    assert_eq!(keys(&rank["basis"]), documented(&doc, "rank basis"));
    assert_eq!(keys(&rank["timings"]), documented(&doc, "timings"));
    assert_eq!(keys(&report["basis"]), documented(&doc, "basis"));
    let edge_fields: BTreeSet<String> = [
        "from",
        "to",
        "kind",
        "communicator",
        "tag",
        "any_source",
        "any_of",
    ]
    .map(String::from)
    .into();
    assert!(doc.contains("`{from, to, kind, communicator, tag, any_source, any_of}`"));
    assert_eq!(keys(&report["edges"][0]), edge_fields);
    let finding = &report["findings"][0];
    assert!(doc.contains("`{kind, ranks, summary, operations: [{rank, operation}]}`"));
    assert_eq!(
        keys(finding),
        ["kind", "ranks", "summary", "operations"]
            .map(String::from)
            .into()
    );
    // Every finding kind the code can write is documented.
    for kind in mpidd_job::FindingKind::ALL {
        let kind = serde_json::to_value(kind).unwrap();
        let kind = kind.as_str().unwrap();
        assert!(
            doc.contains(&format!("| `{kind}` |")),
            "{kind} is not documented"
        );
    }
}
