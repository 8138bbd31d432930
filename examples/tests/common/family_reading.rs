//! What mpidd says when an Open MPI library no profile names is read
//! through the release family a shipped profile declares: on standard
//! error of `mpidd queues`, and in what each rank of a `mpidd job` report
//! rests on. The family is chosen by the version the library states and
//! believed only after the check on the process, and both must be said.

use serde_json::Value;

/// A family and the shipped profile that declares it: `family` as mpidd
/// names it ("Open MPI 4.1.0 up to 4.2"), `profile` the profile's version.
pub struct FamilyRead<'a> {
    pub family: &'a str,
    pub profile: &'a str,
    /// The version the library states.
    pub stated: &'a str,
}

impl FamilyRead<'_> {
    /// mpidd's note on standard error says the layouts of libmpi come
    /// from the family, chosen by the stated version, checked on the
    /// process.
    pub fn assert_note(&self, err: &str) {
        for part in [
            "the layouts of libmpi come from the family",
            self.family,
            &format!("profile of Open MPI {}", self.profile),
            &format!("states version {}", self.stated),
            "checked on the process",
        ] {
            assert!(
                err.contains(part),
                "{part:?} missing from what mpidd said: {err}"
            );
        }
    }

    /// Each rank of a `mpidd job` report was read by ob1's decoder on
    /// the family's layouts, chosen by the stated version and checked on
    /// the process.
    pub fn assert_job_rests_on(&self, report: &Value) {
        let want = [
            format!("layouts from the family {}", self.family),
            format!("of the profile of Open MPI {} (", self.profile),
            format!(
                "chosen by the version it states, {}, and checked on the process",
                self.stated
            ),
            "on libmpi.so.40".to_string(),
        ];
        let ranks = report["ranks"].as_array().expect("ranks");
        assert!(!ranks.is_empty(), "no rank in the report");
        for (r, rank) in ranks.iter().enumerate() {
            let queues = &rank["basis"]["queues"];
            assert_eq!(
                queues["by"], "native Open MPI ob1 decoder",
                "rank {r}: {queues:#}"
            );
            let provenance = queues["provenance"].as_str().unwrap_or("");
            for part in &want {
                assert!(
                    provenance.contains(part.as_str()),
                    "rank {r}: {part:?} missing from what its queues rest on: {queues:#}"
                );
            }
        }
    }
}
