//! A job across nodes: the per-node agents, their stream, and Slurm, which
//! starts them and brings their stream back.
//!
//! - [`agent_stream`]: the records an agent writes, and their merge.
//! - [`node_agent`]: what an agent does on its node: find the step's
//!   ranks there, read each with a bound, write the records.
//! - [`slurm_step`]: a step's name, what `scontrol` says of it, and its
//!   tasks on this node.
//! - [`srun_labels`]: the agents' records taken back out of `srun
//!   --label` output.
//! - [`fanout`]: the front end: an agent on every node of a step through
//!   `srun`, their records merged into the readings of every rank, a node
//!   that does not answer named (Unix).
//!
//! The first four are also at the crate's root, where they were first.

pub mod agent_stream;
#[cfg(unix)]
pub mod fanout;
pub mod node_agent;
pub mod slurm_step;
pub mod srun_labels;
