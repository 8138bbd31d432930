//! STAND-IN until the job-render branch lands.
use crate::model::JobReport;
/// stand-in
pub fn to_dot(_report: &JobReport) -> String {
    String::new()
}
