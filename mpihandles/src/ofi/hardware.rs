//! The providers that match tagged messages outside the memory mpidd
//! reads: what can be said of an endpoint of theirs, in one line.

/// For a provider that matches tagged messages in its NIC or in a library
/// of its own, the one line that says where its posted receives and
/// unexpected messages are, and so why no reading of the rank shows
/// them; `None` for a provider whose queues are software of libfabric's.
///
/// The provider is named as libfabric names it (`fi_provider.name`, as
/// [`read_ofi_provider_name`](super::read_ofi_provider_name) reads it from
/// the rank).
///
/// ```
/// assert!(mpihandles::ofi_hardware_matching("cxi").unwrap().contains("NIC"));
/// assert_eq!(mpihandles::ofi_hardware_matching("shm"), None);
/// ```
pub fn ofi_hardware_matching(provider: &str) -> Option<&'static str> {
    Some(match provider {
        "cxi" => {
            "HPE Slingshot's cxi provider matches tagged messages in the NIC: its posted \
             receives and unexpected messages are in the NIC's match lists (and the unexpected \
             ones' data in the NIC's overflow buffers), not in the rank's memory, so neither a \
             live reading nor a core shows them; only the MPI library's own requests can"
        }
        "psm2" => {
            "the psm2 provider hands tagged matching to Intel's PSM2 library (Omni-Path): its \
             posted receives and unexpected messages are in PSM2's own queues and the NIC's, \
             not in libfabric's, and mpidd has no layouts of PSM2; only the MPI library's own \
             requests can be shown"
        }
        "psm3" => {
            "the psm3 provider hands tagged matching to its PSM3 engine: its posted receives \
             and unexpected messages are in PSM3's own queues (and, with a NIC that offloads \
             matching, the NIC's), not in libfabric's, and mpidd has no layouts of PSM3; only \
             the MPI library's own requests can be shown"
        }
        "opx" => {
            "the opx provider (Omni-Path Express) matches tagged messages in its own queues, \
             which mpidd has no layouts of; only the MPI library's own requests can be shown"
        }
        _ => return None,
    })
}
