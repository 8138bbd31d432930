//! MPICH's message queues, read natively: one decoder per device.

pub(crate) mod ch3;
pub(crate) mod ch4;
pub(crate) mod common;
