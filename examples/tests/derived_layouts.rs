//! The layouts `mpidd handle` derives for an MPICH library without debug
//! info (`mpihandles::derive_mpich_layouts`, made for Intel MPI), checked
//! where the truth is known: on a core of a rank of the reference MPICH
//! 4.0.2 (debug build; scripts/build-ref-mpich.sh), every member derived
//! must be where the library's DWARF puts it, and every size its size.

mod common;

use mpidd_read::{CoreTarget, Layouts, Target};

use common::hung_job::{HangMpi, HungJob};
use common::job_checks::one_at_a_time;

#[test]
fn derived_layouts_agree_with_the_reference_mpichs_dwarf() {
    let _serial = one_at_a_time();
    let job = HungJob::start_on(HangMpi::ReferenceMpich, "derived-layouts", "hang_ring");
    let cores = job.gcore_all("cores");
    let pid = job.pid(2);
    let core = CoreTarget::open(&cores.join(format!("core.{pid}")), None, None)
        .unwrap_or_else(|e| panic!("open rank 2's core: {e}"));
    let derived = mpihandles::derive_mpich_layouts(core.memory(), core.symbols())
        .unwrap_or_else(|e| panic!("the reference MPICH's layouts are derived: {e}"));
    let dwarf = core.layouts();
    let mut compared = 0;
    for (ty, members) in [
        (
            "MPIR_Object_alloc_t",
            &[
                "avail",
                "initialized",
                "indirect",
                "indirect_size",
                "kind",
                "size",
                "direct",
                "direct_size",
            ][..],
        ),
        (
            "MPIR_Comm",
            &[
                "handle",
                "ref_count",
                "name",
                "remote_size",
                "rank",
                "local_size",
                "context_id",
                "recvcontext_id",
            ][..],
        ),
        ("MPIR_Group", &["handle", "ref_count", "size", "rank"][..]),
        ("MPIR_Request", &["handle", "ref_count"][..]),
        ("MPIR_Handle_common", &["handle", "ref_count", "next"][..]),
    ] {
        assert_eq!(
            derived.table.size_of(ty).ok(),
            dwarf.size_of(ty).ok(),
            "sizeof {ty}"
        );
        for m in members {
            let ours = derived.table.member(ty, m).unwrap_or_else(|e| {
                panic!("{ty}.{m} derived: {e}\nchecked: {:#?}", derived.checked)
            });
            let truth = dwarf
                .member(ty, m)
                .unwrap_or_else(|e| panic!("{ty}.{m} in DWARF: {e}"));
            assert_eq!(ours.offset, truth.offset, "{ty}.{m}'s offset");
            assert_eq!(ours.size, truth.size, "{ty}.{m}'s size");
            compared += 1;
        }
    }
    assert_eq!(compared, 25);
    for (name, value) in [("MPIR_COMM", 1), ("MPIR_GROUP", 2), ("MPIR_REQUEST", 11)] {
        assert_eq!(
            derived.table.enum_value("MPII_Object_kind", name).ok(),
            dwarf.enum_value("MPII_Object_kind", name).ok(),
            "{name} = {value}"
        );
    }
}
