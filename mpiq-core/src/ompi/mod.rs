//! Open MPI's message queues, read natively.

pub(crate) mod ob1;
