//! STAND-IN until the job-render branch lands.
use crate::model::JobReport;
/// stand-in
#[derive(Debug, thiserror::Error)]
#[error("stand-in")]
pub struct RenderError;
/// stand-in
pub fn to_svg(_report: &JobReport) -> Result<String, RenderError> {
    Err(RenderError)
}
