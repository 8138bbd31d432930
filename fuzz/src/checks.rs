//! What the targets assert of every answer, whatever the input: writes
//! that touch only their own variable, handle views within the limits and
//! the same when asked twice, and queue readings that serialize, read the
//! same twice and equal themselves.

use std::fmt::Debug;

use mpidd_read::{Limits, SyntheticMemory, Target};
use mpidd_types::TargetAddr;
use mpihandles::{Availability, Details, HandleError, HandleKind, HandleView, Topology};
use mpiq_core::model::ProcessQueues;
use mpiq_core::{compare, detect, QueueDecoder};

/// Fails unless `after` differs from `before` only in the `len` bytes at
/// `at`: the debugger's writes must touch their own variable and nothing
/// else.
pub fn assert_only_changed(
    before: &SyntheticMemory,
    after: &SyntheticMemory,
    at: TargetAddr,
    len: u64,
) {
    let segments: Vec<_> = before.segments().zip(after.segments()).collect();
    assert_eq!(
        segments.len(),
        before.segments().count(),
        "a write mapped or unmapped memory"
    );
    for ((a, old), (b, new)) in segments {
        assert_eq!((a, old.len()), (b, new.len()), "a write moved a segment");
        for (i, (x, y)) in old.iter().zip(new).enumerate() {
            let addr = a.0.wrapping_add(i as u64);
            let inside = addr.wrapping_sub(at.0) < len;
            assert!(
                x == y || inside,
                "a write changed {addr:#x}, outside {at} + {len}"
            );
        }
    }
}

/// Fails if `a` is a list longer than `max`.
pub fn within<T>(a: &Availability<Vec<T>>, max: u64) {
    if let Some(v) = a.value() {
        assert!(v.len() as u64 <= max, "a list longer than the limits allow");
    }
}

/// Fails unless `v` is a view of `kind` that serializes and whose lists
/// stay within `limits`: a communicator's attributes within
/// `max_attributes` (a list for MPICH, a hash table for Open MPI).
pub fn check_view(v: &HandleView, kind: HandleKind, limits: &Limits, max_attributes: u64) {
    assert_eq!(v.kind, kind, "a view of another kind");
    let _ = serde_json::to_string(v).expect("a view serializes");
    match &v.details {
        Details::Comm(c) => {
            within(&c.local_world_ranks, limits.max_table_entries);
            within(&c.remote_world_ranks, limits.max_table_entries);
            within(&c.attributes, max_attributes);
            if let Some(Topology::Cartesian { ndims, dims, .. }) = c.topology.value() {
                assert!(dims.len() as u64 <= limits.max_table_entries);
                assert_eq!(dims.len(), usize::try_from(*ndims).unwrap_or(0));
            }
        }
        Details::Group(g) => within(&g.world_ranks, limits.max_table_entries),
        Details::Info(i) => within(&i.entries, limits.max_list_len),
        _ => {}
    }
}

/// The same answer twice: the resolver keeps no state between calls that
/// changes an answer, and the memory does not change.
pub fn same<T: PartialEq + Debug>(a: &Result<T, HandleError>, b: &Result<T, HandleError>) {
    match (a, b) {
        (Ok(x), Ok(y)) => assert_eq!(x, y, "resolving twice gave two answers"),
        (Err(x), Err(y)) => assert_eq!(x.to_string(), y.to_string()),
        _ => panic!("resolving twice gave a view and an error"),
    }
}

/// Fails unless `q` serializes and `compare` finds nothing between it and
/// itself.
pub fn assert_consistent(q: &ProcessQueues) {
    let _ = serde_json::to_string(q).expect("the queues serialize");
    assert!(
        compare::compare(q, q).is_empty(),
        "a reading differs from itself"
    );
}

/// Reads `target`'s queues with `decoder`; a reading passes `check`, and a
/// second one (from what the decoder cached, if anything) must equal it,
/// or the target fails with `differs`.
pub fn read_twice(
    decoder: &dyn QueueDecoder,
    target: &dyn Target,
    limits: &Limits,
    check: impl Fn(&ProcessQueues),
    differs: &str,
) {
    if let Ok(first) = decoder.read_queues(target, limits) {
        check(&first);
        let again = decoder
            .read_queues(target, limits)
            .expect("unchanged memory reads the same the second time");
        assert_eq!(first, again, "{differs}");
    }
}

/// Reads `target`'s queues with the decoder detection finds, if any; a
/// reading passes `check`.
pub fn read_detected(target: &dyn Target, limits: &Limits, check: impl Fn(&ProcessQueues)) {
    if let Ok(reader) = detect(target, limits) {
        if let Ok(q) = reader.read_queues() {
            check(&q);
        }
    }
}
