//! The Open MPI resolver on synthetic processes laid out by
//! [`SyntheticOmpi`] through a layout table, on little- and big-endian,
//! 32- and 64-bit targets: the kinds decode as laid out, and the cases a
//! corrupt or hostile target brings (loops in class chains and lists, huge
//! counts, pointers of the wrong kind or to nothing, missing layouts) give
//! typed errors or fields marked not available, never a panic or an
//! unbounded read.

use mpidd_read::{LayoutTable, Limits};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{
    Availability, CommSpec, Details, HandleError, HandleKind, Ompi, Peer, RequestKind,
    SyntheticOmpi, Topology,
};

const ABIS: [TargetAbi; 4] = [
    TargetAbi::X86_64,
    TargetAbi::POWERPC,
    TargetAbi::S390X,
    TargetAbi::ARMHF,
];

fn synth(abi: TargetAbi) -> SyntheticOmpi {
    SyntheticOmpi::new(abi, SyntheticOmpi::layouts(abi.address_bytes() as u64))
}

fn value<T: std::fmt::Debug>(a: &Availability<T>) -> &T {
    a.value().unwrap_or_else(|| panic!("not available: {a:?}"))
}

#[test]
fn every_kind_decodes_as_laid_out_on_four_abis() {
    for abi in ABIS {
        let mut s = synth(abi);
        let world = s.world();
        let cart = s.comm(&CommSpec {
            name: "cart".to_string(),
            rank: 2,
            members: vec![3, 2, 1, 0],
            cart: Some((vec![2, 2], vec![1, 0], vec![1, 0])),
            attributes: vec![(20, 0xdead), (3, 0xbeef)],
            ..CommSpec::default()
        });
        let inter = s.comm(&CommSpec {
            name: "inter".to_string(),
            rank: 0,
            members: vec![1, 3],
            remote: Some(vec![0, 2]),
            ..CommSpec::default()
        });
        let int = s.predefined_type("MPI_INT", 4);
        let chr = s.predefined_type("MPI_CHAR", 1);
        // struct { char c; int i; }: MPI_COMBINER_STRUCT is 11 in mpi.h.
        let strct = s.derived_type("rec", 11, &[2, 1, 1], &[0, 4], &[chr, int], (5, 0, 8));
        let info = s.info(&[("alpha", "1"), ("beta", "two")]);
        let recv = s.receive(cart, -1, 7);
        let (memory, symbols, layouts) = s.finish();
        let ompi = Ompi::from_parts(&memory, &symbols, &layouts, Limits::default()).unwrap();
        let comm = |addr: TargetAddr| match ompi.resolve(HandleKind::Comm, addr.0 as i64) {
            Ok(v) => v,
            Err(e) => panic!("{abi:?}: {e}"),
        };

        let v = comm(world);
        assert_eq!(
            v.predefined_name.as_deref(),
            Some("MPI_COMM_WORLD"),
            "{abi:?}"
        );
        assert!(v.implementation.starts_with("Open MPI 4.1.4 (ob1)"));
        let Details::Comm(d) = &v.details else {
            panic!()
        };
        assert_eq!(value(&d.local_world_ranks), &[0, 1, 2, 3]);
        assert_eq!(*value(&d.world_rank), 1);
        assert_eq!(*value(&v.fortran_index), 0);

        let v = comm(cart);
        let Details::Comm(d) = &v.details else {
            panic!()
        };
        assert_eq!(value(&d.name), "cart");
        assert_eq!(*value(&d.rank), 2);
        assert_eq!(*value(&d.size), 4);
        assert_eq!(value(&d.local_world_ranks), &[3, 2, 1, 0]);
        assert_eq!(
            value(&d.topology),
            &Topology::Cartesian {
                ndims: 2,
                dims: vec![2, 2],
                periods: vec![true, false],
                coords: vec![1, 0]
            }
        );
        let attrs = value(&d.attributes);
        assert_eq!(
            attrs
                .iter()
                .map(|a| (a.keyval, a.value, a.internal))
                .collect::<Vec<_>>(),
            [(3, 0xbeef, true), (20, 0xdead, false)],
            "by key; mpi.h's keys are Open MPI's own"
        );
        // The same object through its Fortran INTEGER.
        let f = *value(&v.fortran_index);
        assert_eq!(ompi.resolve_fortran(HandleKind::Comm, f).unwrap(), v);
        // Its group, by the reference the communicator gives.
        let group = value(&d.local_group).clone().unwrap();
        let mpihandles::CHandle::Pointer(g) = group.c_handle else {
            panic!()
        };
        let gv = ompi.resolve(HandleKind::Group, g.0 as i64).unwrap();
        let Details::Group(gd) = &gv.details else {
            panic!()
        };
        assert_eq!(*value(&gd.size), 4);
        assert_eq!(*value(&gd.rank), Some(2));
        assert_eq!(value(&gd.communicators).len(), 1);

        let v = comm(inter);
        let Details::Comm(d) = &v.details else {
            panic!()
        };
        assert_eq!(value(&d.local_world_ranks), &[1, 3]);
        assert_eq!(value(&d.remote_world_ranks), &[0, 2]);
        assert_eq!(*value(&d.remote_size), 2);

        let v = ompi.resolve(HandleKind::Datatype, strct.0 as i64).unwrap();
        let Details::Datatype(d) = &v.details else {
            panic!()
        };
        let c = value(&d.constructor);
        assert_eq!(c.combiner, "MPI_COMBINER_STRUCT");
        assert_eq!(c.integers, [2, 1, 1]);
        assert_eq!(c.addresses, [0, 4]);
        let map: Vec<(i64, &str)> = value(&d.type_map)
            .entries
            .iter()
            .map(|e| (e.offset, e.datatype.as_str()))
            .collect();
        assert_eq!(map, [(0, "MPI_CHAR"), (4, "MPI_INT")]);
        assert_eq!(value(&d.holes).len(), 1, "bytes 1..4");
        let v = ompi.resolve(HandleKind::Datatype, int.0 as i64).unwrap();
        assert_eq!(v.predefined_name.as_deref(), Some("MPI_INT"));

        let v = ompi.resolve(HandleKind::Info, info.0 as i64).unwrap();
        let Details::Info(d) = &v.details else {
            panic!()
        };
        let pairs: Vec<(&str, &str)> = value(&d.entries)
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_str()))
            .collect();
        assert_eq!(pairs, [("alpha", "1"), ("beta", "two")]);

        let v = ompi.resolve(HandleKind::Request, recv.0 as i64).unwrap();
        let Details::Request(d) = &v.details else {
            panic!()
        };
        assert_eq!(value(&d.request_kind), &RequestKind::Receive);
        assert_eq!(value(&d.peer), &Peer::AnySource);
        assert_eq!(value(&d.tag), &Some(7));
        assert_eq!(value(&d.complete), &false);
        assert!(v
            .fortran_index
            .reason()
            .unwrap()
            .contains("MPI_Request_c2f"));

        // A communicator is not a group, nor a datatype.
        for kind in [HandleKind::Group, HandleKind::Datatype] {
            let e = ompi.resolve(kind, cart.0 as i64).unwrap_err();
            assert!(
                matches!(e, HandleError::NotAnObject { .. })
                    && e.to_string().contains("ompi_communicator_t"),
                "{e}"
            );
        }
    }
}

#[test]
fn hostile_targets_give_errors_not_hangs() {
    let abi = TargetAbi::POWERPC;
    let layouts = SyntheticOmpi::layouts(4);
    let member = |ty: &str, m: &str| mpidd_read::Layouts::member(&layouts, ty, m).unwrap().offset;
    let mut s = synth(abi);
    let world = s.world();
    let looping = s.comm(&CommSpec {
        name: "looping".to_string(),
        members: vec![0],
        attributes: vec![(30, 1)],
        ..CommSpec::default()
    });
    let huge = s.comm(&CommSpec {
        name: "huge".to_string(),
        members: vec![0],
        ..CommSpec::default()
    });
    let info = s.info(&[("a", "1"), ("b", "2")]);
    // A class that is its own parent.
    let cyclic = s.class("cyclic_t", &[]);
    s.put(cyclic, "opal_class_t", "cls_parent", cyclic.0);
    let odd = s.object("ompi_group_t", "cyclic_t");
    // The info list's second entry points back at the first.
    let sentinel_next = info.0
        + member("ompi_info_t", "super")
        + member("opal_info_t", "super")
        + member("opal_list_t", "opal_list_sentinel")
        + member("opal_list_item_t", "opal_list_next");
    let (memory, symbols, _) = s.clone().finish();
    let first =
        mpidd_read::TargetMemory::read_u32(&memory, TargetAddr(sentinel_next), "x").unwrap();
    let second_next = u64::from(first) + member("opal_list_item_t", "opal_list_next");
    s.int_at(TargetAddr(second_next), 4, u64::from(first));
    drop((memory, symbols));
    // A hash table of 2^30 elements, and a group of 2^30 members.
    let keyhash = {
        let (m, _, _) = s.clone().finish();
        let at = looping.0 + member("ompi_communicator_t", "c_keyhash");
        mpidd_read::TargetMemory::read_u32(&m, TargetAddr(at), "x").unwrap()
    };
    s.put(
        TargetAddr(u64::from(keyhash)),
        "opal_hash_table_t",
        "ht_capacity",
        1 << 30,
    );
    let group = {
        let (m, _, _) = s.clone().finish();
        let at = huge.0 + member("ompi_communicator_t", "c_local_group");
        mpidd_read::TargetMemory::read_u32(&m, TargetAddr(at), "x").unwrap()
    };
    s.put(
        TargetAddr(u64::from(group)),
        "ompi_group_t",
        "grp_proc_count",
        1 << 30,
    );
    let (memory, symbols, layouts) = s.finish();
    let limits = Limits {
        max_table_entries: 1 << 16,
        max_list_len: 64,
        ..Limits::default()
    };
    let ompi = Ompi::from_parts(&memory, &symbols, &layouts, limits).unwrap();

    let e = ompi.resolve(HandleKind::Group, odd.0 as i64).unwrap_err();
    assert!(e.to_string().contains("cls_parent"), "a class loop: {e}");

    let v = ompi.resolve(HandleKind::Info, info.0 as i64).unwrap();
    let Details::Info(d) = &v.details else {
        panic!()
    };
    assert!(
        d.entries.reason().unwrap().contains("loop"),
        "{:?}",
        d.entries
    );

    let v = ompi.resolve(HandleKind::Comm, looping.0 as i64).unwrap();
    let Details::Comm(d) = &v.details else {
        panic!()
    };
    assert!(
        d.attributes.reason().unwrap().contains("max_table_entries"),
        "{:?}",
        d.attributes
    );

    let v = ompi.resolve(HandleKind::Comm, huge.0 as i64).unwrap();
    let Details::Comm(d) = &v.details else {
        panic!()
    };
    assert!(d
        .local_world_ranks
        .reason()
        .unwrap()
        .contains("max_table_entries"));

    // Pointers to nothing, negative values (beyond a 32-bit pointer given
    // sign-extended), Fortran INTEGERs out of range.
    let e = ompi.resolve(HandleKind::Comm, 0x10).unwrap_err();
    assert!(e.to_string().contains("cannot be read"), "{e}");
    assert!(matches!(
        ompi.resolve(HandleKind::Comm, i64::MIN),
        Err(HandleError::BadValue { .. })
    ));
    let e = ompi.resolve_fortran(HandleKind::Comm, 1000).unwrap_err();
    assert!(e.to_string().contains("past the"), "{e}");
    let e = ompi.resolve_fortran(HandleKind::Comm, -1).unwrap_err();
    assert!(matches!(e, HandleError::Fortran { .. }), "{e}");
    assert!(ompi.resolve(HandleKind::Comm, world.0 as i64).is_ok());
}

#[test]
fn a_layout_source_without_a_required_type_is_refused_naming_it() {
    let mut s = synth(TargetAbi::X86_64);
    s.world();
    let (memory, symbols, layouts) = s.finish();
    let mut json = serde_json::to_value(&layouts).unwrap();
    json.as_object_mut().unwrap().remove("ompi_group_t");
    let without: LayoutTable = serde_json::from_value(json).unwrap();
    let e = Ompi::from_parts(&memory, &symbols, &without, Limits::default())
        .err()
        .expect("refused");
    assert!(
        matches!(&e, HandleError::Layout(l) if l.type_name == "ompi_group_t"),
        "{e}"
    );
    // Without Open MPI's symbols, no Open MPI.
    let none = mpidd_read::SymbolTable::new();
    let e = Ompi::from_parts(&memory, &none, &layouts, Limits::default())
        .err()
        .expect("refused");
    assert!(e.to_string().contains("ompi_comm_f_to_c_table"), "{e}");
}
