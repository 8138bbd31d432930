//! Seeds of the `ompi_handles` target: an Open MPI process with an object
//! of most kinds, sound or with loops (a class its own parent, a looping
//! info list), with queries that resolve each, laid out with the synthetic
//! layout or with the reference Open MPI's.

use std::path::Path;

use mpidd_fuzz::{limits, ompi_handles, Cursor, Process};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{Availability, Details, Topology};

use crate::common::{check, encoded, oracle_under, write_real, write_synthetic, Result};
use crate::handles::query;

/// What an `ompi_handles` seed is made of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OmpiScenario {
    /// Well formed.
    Sound,
    /// A class that is its own parent and an info list that loops.
    Loops,
}

/// Every scenario, by the label its seeds are named after.
const OMPI_SCENARIOS: [(&str, OmpiScenario); 2] = [
    ("sound", OmpiScenario::Sound),
    ("loops", OmpiScenario::Loops),
];

/// An `ompi_handles` seed: a synthetic Open MPI process laid out by
/// `values` (for `abi`'s pointer width) with an object of most kinds, and
/// queries that resolve each by pointer and by Fortran INTEGER.
fn ompi_seed(
    abi: TargetAbi,
    values: &ompi_handles::Values,
    scenario: OmpiScenario,
) -> Result<Vec<u8>> {
    use mpihandles::{CommSpec, HandleKind as K, Ompi, SyntheticOmpi, OMPI_SYMBOLS};
    let word = abi.address_bytes() as u64;
    let layouts = ompi_handles::table(values, word);
    let mut s = SyntheticOmpi::new(abi, layouts.clone());
    let world = s.world();
    let cart = s.comm(&CommSpec {
        name: "cart".to_string(),
        rank: 1,
        members: vec![3, 2, 1, 0],
        cart: Some((vec![2, 2], vec![1, 1], vec![0, 1])),
        attributes: vec![(21, 0x1234)],
        ..CommSpec::default()
    });
    let inter = s.comm(&CommSpec {
        name: "inter".to_string(),
        members: vec![1, 3],
        remote: Some(vec![0, 2]),
        ..CommSpec::default()
    });
    let int = s.predefined_type("MPI_INT", 4);
    // MPI_Type_contiguous(3, MPI_INT): MPI_COMBINER_CONTIGUOUS is 2.
    let contig = s.derived_type("contig", 2, &[3], &[], &[int], (12, 0, 12));
    let info = s.info(&[("key", "value"), ("other", "2")]);
    let recv = s.receive(cart, 2, 5);
    if scenario == OmpiScenario::Loops {
        let cyclic = s.class("cyclic_t", &[]);
        s.put(cyclic, "opal_class_t", "cls_parent", cyclic.0);
        let next = |t: &mpidd_read::LayoutTable, ty: &str, m: &str| {
            mpidd_read::Layouts::member(t, ty, m).map_or(0, |m| m.offset)
        };
        let sentinel = info.0
            + next(&layouts, "ompi_info_t", "super")
            + next(&layouts, "opal_info_t", "super")
            + next(&layouts, "opal_list_t", "opal_list_sentinel");
        // The sentinel's next is the first entry: point it at the sentinel's
        // own next field's owner, a loop of one.
        let item_next = next(&layouts, "opal_list_item_t", "opal_list_next");
        let first = s.alloc(64);
        s.put(
            TargetAddr(sentinel),
            "opal_list_item_t",
            "opal_list_next",
            first.0,
        );
        s.int_at(TargetAddr(first.0 + item_next), word, first.0);
    }
    let (memory, symbols, _) = s.finish();
    let p = Process { memory, symbols };
    let mut seed = encoded(&p, OMPI_SYMBOLS);
    ompi_handles::encode(values, word, &mut seed);
    let queries: Vec<(K, u8, u64, u64)> = vec![
        (K::Comm, 0, world.0, 0),
        (K::Comm, 0, cart.0, 0),
        (K::Comm, 0, inter.0, 0),
        (K::Comm, 1, 1, 0),
        (K::Group, 1, 0, 0),
        (K::Datatype, 0, contig.0, 0),
        (K::Datatype, 1, 0, 0),
        (K::Info, 0, info.0, 0),
        (K::Request, 0, recv.0, 0),
        (K::Group, 0, cart.0, 0),
        (K::Datatype, 2, recv.0, int.0),
        (K::Status, 2, recv.0, 0),
    ];
    seed.push(queries.len() as u8);
    for &(k, call, v, dt) in &queries {
        query(k, call, v, &dt.to_le_bytes(), &mut seed);
    }

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, OMPI_SYMBOLS);
    let types = ompi_handles::table(&ompi_handles::parse(&mut c, word), word);
    let ompi = Ompi::from_parts(&back, &back, &types, limits())?;
    check(
        ompi.implementation_name() == "Open MPI 4.1.4 (ob1)",
        "the version string and the PML",
    )?;
    let v = ompi.resolve(K::Comm, cart.0 as i64)?;
    check(
        matches!(&v.details, Details::Comm(d) if matches!(d.topology.value(), Some(Topology::Cartesian { .. }))),
        "a Cartesian communicator",
    )?;
    let v = ompi.resolve(K::Datatype, contig.0 as i64)?;
    check(
        matches!(&v.details, Details::Datatype(d) if d.type_map.value().is_some()),
        "a contiguous datatype's type map",
    )?;
    let v = ompi.resolve(K::Info, info.0 as i64)?;
    let entries = match &v.details {
        Details::Info(d) => d.entries.clone(),
        _ => Availability::not_available("not an info"),
    };
    match scenario {
        OmpiScenario::Sound => check(
            entries.value().is_some_and(|e| e.len() == 2),
            "two info pairs",
        )?,
        OmpiScenario::Loops => check(entries.value().is_none(), "a looping info list")?,
    }
    Ok(seed)
}

/// The `ompi_handles` seeds of every scenario for each ABI, laid out with
/// the synthetic layout.
pub fn ompi_handles_synthetic(out: &Path) -> Result<()> {
    write_synthetic(out, "ompi_handles", &OMPI_SCENARIOS, |abi, scenario| {
        let values = ompi_handles::defaults(abi.address_bytes() as u64);
        ompi_seed(abi, &values, scenario)
    })
}

/// The `ompi_handles` seeds laid out with the reference Open MPI's own
/// sizes, offsets and widths (x86_64), read from the objects' DWARF.
pub fn ompi_handles_real(out: &Path, prefix: &Path) -> Result<()> {
    let oracle = oracle_under(
        prefix,
        &[
            ("libmpi", "lib/libmpi.so.40"),
            ("libopen-pal", "lib/libopen-pal.so.40"),
            ("mca_io_ompio", "lib/openmpi/mca_io_ompio.so"),
        ],
    );
    let (table, _) = mpidd_read::LayoutTable::record(&oracle, &|l| mpihandles::ompi_ask_layouts(l));
    // 4.1 has no 5.0-only types (`opal_cstring_t`, `c_index`): judged by
    // the decoders' own rule of what they cannot do without.
    let unanswered = mpihandles::ompi_missing_layouts(&table);
    if !unanswered.is_empty() {
        return Err(format!(
            "the objects' DWARF lacks {} of the Open MPI handle layouts; first: {}",
            unanswered.len(),
            unanswered[0]
        )
        .into());
    }
    let mut values = ompi_handles::values_of(&table);
    // Enumerators are kept as the synthetic layout numbers them.
    for (v, d) in values.iter_mut().zip(ompi_handles::defaults(8)) {
        if v.is_none() {
            *v = d;
        }
    }
    write_real(out, "ompi_handles", &OMPI_SCENARIOS, |scenario| {
        ompi_seed(TargetAbi::X86_64, &values, scenario)
    })
}
