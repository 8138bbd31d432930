//! STAND-IN until the job-render branch lands.
use crate::model::JobReport;
/// stand-in
pub fn to_html(_report: &JobReport, _svg: Option<&str>) -> String {
    String::new()
}
