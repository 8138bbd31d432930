//! TEMPORARY until the stacks branch lands.
use serde::{Deserialize, Serialize};
/// tmp
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadStack {
    /// tmp
    pub tid: i32,
    /// tmp
    pub frames: Vec<Frame>,
    /// tmp
    pub truncated: bool,
    /// tmp
    pub error: Option<String>,
}
/// tmp
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// tmp
    pub pc: u64,
    /// tmp
    pub function: Option<String>,
    /// tmp
    pub offset: u64,
    /// tmp
    pub object: Option<String>,
    /// tmp
    pub file: Option<String>,
    /// tmp
    pub line: Option<u32>,
}
