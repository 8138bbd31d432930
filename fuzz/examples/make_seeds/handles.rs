//! Seeds of the `handles` target: an MPICH process with objects of every
//! kind, well formed or broken (a looping free list or info list, a huge
//! group, a wild connection table), with queries that resolve each, laid
//! out with the synthetic layout or with a real MPICH's.

use std::path::Path;

use mpidd_fuzz::{handles, limits, Cursor, Process, HANDLE_SYMBOLS};
use mpidd_read::{ReadError, TypeOracle};
use mpidd_types::{TargetAbi, TargetAddr};
use mpihandles::{
    Availability, Details, HandleError, HandleKind, Mpich, ObjectState, RequestKind, Topology,
};

use crate::common::{check, encoded, write_real, write_synthetic, Result};
use crate::objects::{Objects, SpecLayout};

/// MPICH's handle pools, written through the layout.
impl Objects<'_> {
    /// The `i`th object of the array at `base`, given its handle.
    fn object(&mut self, base: u64, ty: &str, i: u64, handle: u32) -> u64 {
        let at = base + i * self.l.size(ty);
        self.set(at, ty, "handle", u64::from(handle));
        self.set(at, ty, "ref_count", 1);
        at
    }

    /// An initialized allocator under `name` for `direct` objects of `ty`.
    fn allocator(&mut self, name: &str, ty: &str, direct: u64) -> u64 {
        const A: &str = "MPIR_Object_alloc_t";
        let at = self.array(name, A, 1);
        self.set(at, A, "initialized", 1);
        self.set(at, A, "size", self.l.size(ty));
        self.set(at, A, "direct_size", direct);
        self.set(at, A, "num_allocated", direct);
        at
    }

    /// Links `free` (objects) on the allocator's free list.
    fn free_list(&mut self, alloc: u64, free: &[u64]) {
        const A: &str = "MPIR_Object_alloc_t";
        self.set(alloc, A, "avail", free.first().copied().unwrap_or(0));
        self.set(alloc, A, "num_avail", free.len() as u64);
        for (i, &obj) in free.iter().enumerate() {
            let next = free.get(i + 1).copied().unwrap_or(0);
            self.set(obj, "MPIR_Handle_common", "next", next);
        }
    }
}

/// What a synthetic MPICH handle process holds besides its well-formed
/// objects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HandleScenario {
    WellFormed,
    LoopingFreeList,
    LoopingInfo,
    HugeGroup,
    WildVcrt,
}

/// Every scenario, by the label its seeds are named after.
const HANDLE_SCENARIOS: [(&str, HandleScenario); 5] = [
    ("well-formed", HandleScenario::WellFormed),
    ("looping-free-list", HandleScenario::LoopingFreeList),
    ("looping-info", HandleScenario::LoopingInfo),
    ("huge-group", HandleScenario::HugeGroup),
    ("wild-vcrt", HandleScenario::WildVcrt),
];

/// The addresses a seed's queries name.
struct HandleAddrs {
    file: u64,
    status: u64,
}

// The handles of the objects the process holds.
const WORLD: u32 = 0x4400_0000;
const DUP: u32 = 0x8400_0000;
const FREED_COMM: u32 = 0x8400_0001;
const GROUP: u32 = 0x8800_0000;
const GROUP_INDIRECT: u32 = 0xc800_0001;
const MPI_INT: u32 = 0x4c00_0405;
const CONTIG: u32 = 0x8c00_0005;
const USER_ERRHANDLER: u32 = 0x9400_0000;
const USER_OP: u32 = 0x9800_0000;
const INFO: u32 = 0x9c00_0000;
const RECV: u32 = 0xac00_0000;
const SEND: u32 = 0xac00_0001;
const GREQ: u32 = 0xac00_0002;
const WIN: u32 = 0xa000_0000;
const TOPO_KEYVAL: u32 = 0x6400_0001;

/// An MPICH process with objects of every kind, laid out with `l`: the
/// world (world ranks through the connection table) and a duplicate with a
/// group and a Cartesian topology, a freed communicator, a group in an
/// indirect block, MPI_INT and a contiguous type of it, a user error
/// handler and operation, an info with two keys, a receive, a completed
/// send and a generalized request, a window, a ROMIO file with a Fortran
/// index, and a status.
fn handle_process(
    abi: TargetAbi,
    l: &SpecLayout,
    scenario: HandleScenario,
) -> (Process, HandleAddrs) {
    let w = abi.address_bytes() as u64;
    let base = if w == 4 {
        0x0804_0000
    } else {
        0x5555_0000_0000
    };
    let mut o = Objects::new(l, abi, base);
    let version = o.text("4.0.2");
    o.symbol("MPII_Version_string", version, 6);
    let device = o.text("ch3:nemesis");
    o.symbol("MPII_Version_device", device, 12);
    let process = o.array("MPIR_Process", "MPIR_Process_t", 1);
    o.set(process, "MPIR_Process_t", "rank", 1);
    let keyval_sym = o.h.alloc(4);
    o.h.put(keyval_sym, u64::from(TOPO_KEYVAL), 4);
    o.symbol("MPIR_Topology_keyval", keyval_sym, 4);

    // Error handlers: the four builtins, one user handler.
    const E: &str = "MPIR_Errhandler";
    let eh_builtin = o.array("MPIR_Errhandler_builtin", E, 4);
    let fatal = o.object(eh_builtin, E, 0, 0x5400_0000);
    for i in 1..4 {
        o.object(eh_builtin, E, i, 0x5400_0000 | i as u32);
    }
    let eh_direct = o.array("MPIR_Errhandler_direct", E, 2);
    o.allocator("MPIR_Errhandler_mem", E, 2);
    let user_eh = o.object(eh_direct, E, 0, USER_ERRHANDLER);
    o.set(user_eh, E, "language", l.en("MPIR_LANG__C"));
    o.set(user_eh, E, "kind", l.en("MPIR_COMM"));
    o.set(user_eh, E, "errfn", 0x4000);

    // Groups: MPI_GROUP_EMPTY, a direct group, an indirect block of 4.
    const G: &str = "MPIR_Group";
    let g_builtin = o.array("MPIR_Group_builtin", G, 1);
    let empty = o.object(g_builtin, G, 0, 0x4800_0000);
    o.set(empty, G, "rank", (-32766i32) as u32 as u64);
    let g_direct = o.array("MPIR_Group_direct", G, 4);
    let g_alloc = o.allocator("MPIR_Group_mem", G, 4);
    let group = o.object(g_direct, G, 0, GROUP);
    let pmap = l.size("MPII_Group_pmap_t");
    let map = o.h.alloc(2 * pmap);
    for (i, lpid) in [9u64, 5].into_iter().enumerate() {
        o.set(map + i as u64 * pmap, "MPII_Group_pmap_t", "lpid", lpid);
    }
    let group_size = if scenario == HandleScenario::HugeGroup {
        0x7fff_ffff
    } else {
        2
    };
    o.set(group, G, "size", group_size);
    o.set(group, G, "rank", 0);
    o.set(group, G, "lrank_to_lpid", map);
    let block = o.h.alloc(4 * l.size(G));
    let indirect = o.words(&[block]);
    o.set(g_alloc, "MPIR_Object_alloc_t", "indirect", indirect);
    o.set(g_alloc, "MPIR_Object_alloc_t", "indirect_size", 1);
    o.set(g_alloc, "MPIR_Object_alloc_t", "num_allocated", 8);
    let ig = o.object(block, G, 1, GROUP_INDIRECT);
    let map1 = o.h.alloc(pmap);
    o.set(map1, "MPII_Group_pmap_t", "lpid", 9);
    o.set(ig, G, "size", 1);
    o.set(ig, G, "rank", 0);
    o.set(ig, G, "lrank_to_lpid", map1);

    // Communicators: the world through the VCRT, a duplicate with the
    // group and a Cartesian topology, and a freed one.
    const C: &str = "MPIR_Comm";
    let c_builtin = o.array("MPIR_Comm_builtin", C, 3);
    let world = o.object(c_builtin, C, 0, WORLD);
    o.chars(world, C, "name", "MPI_COMM_WORLD");
    o.set(world, C, "rank", 1);
    o.set(world, C, "local_size", 2);
    o.set(world, C, "comm_kind", l.en("MPIR_COMM_KIND__INTRACOMM"));
    o.set(world, C, "errhandler", fatal);
    let vc_size = l.size("MPIDI_VC");
    let vcs = o.h.alloc(2 * vc_size);
    o.set(vcs, "MPIDI_VC", "lpid", 5);
    o.set(vcs + vc_size, "MPIDI_VC", "lpid", 9);
    let vcrt = o.h.alloc(l.size("MPIDI_VCRT") + 2 * w);
    o.set(vcrt, "MPIDI_VCRT", "size", 2);
    if let Some((off, _)) = l.entry("MPIDI_VCRT", Some("vcr_table")) {
        o.h.word(vcrt + off, vcs);
        o.h.word(vcrt + off + w, vcs + vc_size);
    }
    let vcrt_ptr = if scenario == HandleScenario::WildVcrt {
        0xdead_0000
    } else {
        vcrt
    };
    o.set(world, C, "dev.vcrt", vcrt_ptr);
    let c_direct = o.array("MPIR_Comm_direct", C, 4);
    let c_alloc = o.allocator("MPIR_Comm_mem", C, 4);
    let dup = o.object(c_direct, C, 0, DUP);
    o.chars(dup, C, "name", "dup of world");
    o.set(dup, C, "context_id", 4);
    o.set(dup, C, "recvcontext_id", 4);
    o.set(dup, C, "local_size", 2);
    o.set(dup, C, "comm_kind", l.en("MPIR_COMM_KIND__INTRACOMM"));
    o.set(dup, C, "local_group", group);
    o.set(dup, C, "errhandler", user_eh);
    const T: &str = "MPIR_Topology";
    let topo = o.h.alloc(l.size(T));
    o.set(topo, T, "kind", l.en("MPI_CART"));
    o.set(topo, T, "topo.cart.ndims", 2);
    let dims = o.ints(&[2, 1]);
    let periodic = o.ints(&[1, 0]);
    let position = o.ints(&[0, 0]);
    o.set(topo, T, "topo.cart.dims", dims);
    o.set(topo, T, "topo.cart.periodic", periodic);
    o.set(topo, T, "topo.cart.position", position);
    let keyval = o.h.alloc(l.size("MPII_Keyval"));
    o.set(keyval, "MPII_Keyval", "handle", u64::from(TOPO_KEYVAL));
    const A: &str = "MPIR_Attribute";
    let attr = o.h.alloc(l.size(A));
    o.set(attr, A, "keyval", keyval);
    o.set(attr, A, "attrType", l.en("MPIR_ATTR_PTR"));
    o.set(attr, A, "value", topo);
    o.set(dup, C, "attributes", attr);
    let freed = o.object(c_direct, C, 1, FREED_COMM);
    let free = if scenario == HandleScenario::LoopingFreeList {
        vec![freed, freed + l.size(C)]
    } else {
        vec![freed]
    };
    o.free_list(c_alloc, &free);
    if scenario == HandleScenario::LoopingFreeList {
        // The list's end, made a loop: 1 -> 2 -> 1.
        o.set(freed + l.size(C), "MPIR_Handle_common", "next", freed);
        o.set(c_alloc, "MPIR_Object_alloc_t", "num_avail", 8);
    }

    // Datatypes: MPI_INT, and a contiguous type of 4 of them.
    const D: &str = "MPIR_Datatype";
    let d_builtin = o.array("MPIR_Datatype_builtin", D, 8);
    let int = o.object(d_builtin, D, 5, MPI_INT);
    for m in ["size", "extent", "ub", "true_ub"] {
        o.set(int, D, m, 4);
    }
    o.set(int, D, "is_committed", 1);
    o.set(int, D, "is_contig", 1);
    o.chars(int, D, "name", "MPI_INT");
    let d_direct = o.array("MPIR_Datatype_direct", D, 8);
    o.allocator("MPIR_Datatype_mem", D, 8);
    let contig = o.object(d_direct, D, 5, CONTIG);
    for m in ["size", "extent", "ub", "true_ub"] {
        o.set(contig, D, m, 16);
    }
    o.set(contig, D, "is_committed", 1);
    o.set(contig, D, "is_contig", 1);
    const DC: &str = "MPIR_Datatype_contents";
    let header = l.size(DC);
    let types_at = header.div_ceil(16) * 16;
    let contents = o.h.alloc(types_at + 32);
    o.set(contents, DC, "combiner", l.en("MPI_COMBINER_CONTIGUOUS"));
    o.set(contents, DC, "nr_types", 1);
    o.set(contents, DC, "nr_ints", 1);
    o.h.put(contents + types_at, u64::from(MPI_INT), 4);
    o.h.put(contents + types_at + 16, 4, 4);
    o.set(contig, D, "contents", contents);

    // Operations: the builtins' empty slots, one user operation.
    const OP: &str = "MPIR_Op";
    o.array("MPIR_Op_builtin", OP, 16);
    let op_direct = o.array("MPIR_Op_direct", OP, 2);
    o.allocator("MPIR_Op_mem", OP, 2);
    let op = o.object(op_direct, OP, 0, USER_OP);
    o.set(op, OP, "kind", l.en("MPIR_OP_KIND__USER"));
    o.set(op, OP, "language", l.en("MPIR_LANG__C"));
    o.set(op, OP, "function", 0x4100);

    // Info: a head and two entries.
    const I: &str = "MPIR_Info";
    let i_builtin = o.array("MPIR_Info_builtin", I, 2);
    o.object(i_builtin, I, 1, 0x5c00_0001);
    let i_direct = o.array("MPIR_Info_direct", I, 4);
    o.allocator("MPIR_Info_mem", I, 4);
    let head = o.object(i_direct, I, 0, INFO);
    let e1 = o.object(i_direct, I, 1, INFO + 1);
    let e2 = o.object(i_direct, I, 2, INFO + 2);
    o.set(head, I, "next", e1);
    o.set(e1, I, "next", e2);
    if scenario == HandleScenario::LoopingInfo {
        o.set(e2, I, "next", e1);
    }
    for (e, k, v) in [(e1, "host", "node0"), (e2, "wdir", "/tmp")] {
        let k = o.text(k);
        let v = o.text(v);
        o.set(e, I, "key", k);
        o.set(e, I, "value", v);
    }

    // Requests: a receive on the world, a completed send, a generalized
    // request.
    const R: &str = "MPIR_Request";
    o.array("MPIR_Request_builtins", R, 0);
    let r_direct = o.array("MPIR_Request_direct", R, 4);
    o.allocator("MPIR_Request_mem", R, 4);
    let recv = o.object(r_direct, R, 0, RECV);
    o.set(recv, R, "kind", l.en("MPIR_REQUEST_KIND__RECV"));
    if let Some((cc, _)) = l.entry(R, Some("cc")) {
        o.set(recv, R, "cc_ptr", recv + cc);
    }
    o.set(recv, R, "cc", 1);
    o.set(recv, R, "comm", world);
    o.set(recv, R, "dev.match.parts.tag", 7);
    o.set(recv, R, "dev.match.parts.rank", 0);
    let send = o.object(r_direct, R, 1, SEND);
    o.set(send, R, "kind", l.en("MPIR_REQUEST_KIND__SEND"));
    if let Some((cc, _)) = l.entry(R, Some("cc")) {
        o.set(send, R, "cc_ptr", send + cc);
    }
    o.set(send, R, "comm", dup);
    o.set(send, R, "dev.match.parts.tag", 3);
    o.set(send, R, "dev.match.parts.rank", 1);
    if let Some((status, _)) = l.entry(R, Some("status")) {
        let s = send + status;
        o.set(s, "MPI_Status", "count_lo", 16);
        o.set(s, "MPI_Status", "MPI_SOURCE", 1);
        o.set(s, "MPI_Status", "MPI_TAG", 3);
    }
    let greq = o.object(r_direct, R, 2, GREQ);
    o.set(greq, R, "kind", l.en("MPIR_REQUEST_KIND__GREQUEST"));
    if let Some((cc, _)) = l.entry(R, Some("cc")) {
        o.set(greq, R, "cc_ptr", greq + cc);
    }
    o.set(greq, R, "cc", 1);
    const F: &str = "MPIR_Grequest_fns";
    let fns = o.h.alloc(l.size(F));
    o.set(fns, F, "U.C.query_fn", 0x4200);
    o.set(fns, F, "U.C.free_fn", 0x4210);
    o.set(fns, F, "U.C.cancel_fn", 0x4220);
    o.set(fns, F, "greq_lang", l.en("MPIR_LANG__C"));
    o.set(greq, R, "u.ureq.greq_fns", fns);

    // A window over the duplicate.
    const W: &str = "MPIR_Win";
    let w_direct = o.array("MPIR_Win_direct", W, 2);
    o.allocator("MPIR_Win_mem", W, 2);
    let win = o.object(w_direct, W, 0, WIN);
    o.chars(win, W, "name", "win0");
    o.set(win, W, "base", 0x7000);
    o.set(win, W, "size", 64);
    o.set(win, W, "disp_unit", 4);
    o.set(win, W, "comm_ptr", dup);
    o.set(win, W, "create_flavor", l.en("MPI_WIN_FLAVOR_CREATE"));

    // A ROMIO file, Fortran index 1.
    const FD: &str = "ADIOI_FileD";
    let file = o.h.alloc(l.size(FD));
    let name = o.text("/tmp/data");
    o.set(file, FD, "cookie", 2_487_376);
    o.set(file, FD, "comm", u64::from(DUP));
    o.set(file, FD, "filename", name);
    o.set(file, FD, "orig_access_mode", 1 | 8);
    o.set(file, FD, "info", u64::from(INFO));
    o.set(file, FD, "err_handler", 0x5400_0001);
    o.set(file, FD, "fortran_handle", 1);
    let table = o.words(&[0, file]);
    let table_sym = o.words(&[table]);
    o.symbol("ADIOI_Ftable", table_sym, w);
    let last = o.h.alloc(4);
    o.h.put(last, 1, 4);
    o.symbol("ADIOI_Ftable_ptr", last, 4);

    // A status in user memory: 16 bytes from rank 1, tag 3.
    let status = o.h.alloc(l.size("MPI_Status"));
    o.set(status, "MPI_Status", "count_lo", 16);
    o.set(status, "MPI_Status", "MPI_SOURCE", 1);
    o.set(status, "MPI_Status", "MPI_TAG", 3);

    (o.finish(), HandleAddrs { file, status })
}

/// One query of the `handles` and `ompi_handles` formats: `call` of
/// `kind` on `value`, with `datatype` (4 bytes for MPICH's handle, 8 for
/// Open MPI's pointer).
pub fn query(kind: HandleKind, call: u8, value: u64, datatype: &[u8], out: &mut Vec<u8>) {
    let k = HandleKind::ALL.iter().position(|&x| x == kind).unwrap_or(0) as u8;
    out.push(k + 10 * call);
    out.extend_from_slice(&value.to_le_bytes());
    out.extend_from_slice(datatype);
}

/// The `handles` seed of `scenario` laid out with `l` for `abi`, with
/// queries of every kind, checked to resolve as the scenario intends (the
/// members a `real` build may lay out otherwise are not checked).
fn handle_seed(
    abi: TargetAbi,
    l: &SpecLayout,
    scenario: HandleScenario,
    real: bool,
) -> Result<Vec<u8>> {
    let (p, a) = handle_process(abi, l, scenario);
    let mut seed = encoded(&p, HANDLE_SYMBOLS);
    let word = abi.address_bytes() as u64;
    l.spec.encode(&l.values, word, &mut seed);
    use HandleKind as K;
    let queries: Vec<(K, u8, u64, u32)> = vec![
        (K::Comm, 1, u64::from(WORLD), 0),
        (K::Comm, 1, u64::from(DUP), 0),
        (K::Comm, 1, u64::from(FREED_COMM), 0),
        (K::Comm, 1, 0x0400_0000, 0),
        (K::Comm, 0, u64::from(GROUP), 0),
        (K::Group, 1, u64::from(GROUP), 0),
        (K::Group, 2, u64::from(GROUP_INDIRECT), 0),
        (K::Group, 1, 0x4800_0000, 0),
        (K::Datatype, 1, u64::from(CONTIG), 0),
        (K::Datatype, 0, u64::from(MPI_INT), 0),
        (K::Errhandler, 1, u64::from(USER_ERRHANDLER), 0),
        (K::Errhandler, 1, 0x5400_0000, 0),
        (K::Op, 1, u64::from(USER_OP), 0),
        (K::Op, 1, 0x5800_0003, 0),
        (K::Info, 1, u64::from(INFO), 0),
        (K::Info, 1, 0x5c00_0001, 0),
        (K::Request, 1, u64::from(RECV), 0),
        (K::Request, 1, u64::from(SEND), 0),
        (K::Request, 1, u64::from(GREQ), 0),
        (K::Win, 1, u64::from(WIN), 0),
        (K::File, 0, a.file, 0),
        (K::File, 2, 1, 0),
        (K::Status, 3, a.status, 0),
        (K::Datatype, 3, a.status, MPI_INT),
    ];
    seed.push(queries.len() as u8);
    for &(k, call, v, dt) in &queries {
        query(k, call, v, &dt.to_le_bytes(), &mut seed);
    }

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, HANDLE_SYMBOLS);
    let types = handles::SPEC.read(&mut c, word);
    let mpich = Mpich::from_parts(&back, &back, &types, limits())?;
    check(
        mpich.implementation_name() == "MPICH 4.0.2 (ch3:nemesis)",
        "the version strings",
    )?;
    let resolve = |k: K, v: u32| mpich.resolve(k, i64::from(v as i32));
    let comm = |v: u32| -> Result<mpihandles::CommDetails> {
        match resolve(K::Comm, v)?.details {
            Details::Comm(c) => Ok(c),
            other => Err(format!("{v:#x} is not a communicator: {other:?}").into()),
        }
    };
    match scenario {
        HandleScenario::LoopingFreeList => {
            let e = resolve(K::Comm, DUP).err();
            check(
                matches!(e, Some(HandleError::Read(ReadError::Cycle { .. }))),
                "a looping free list is a cycle error",
            )?;
            return Ok(seed);
        }
        HandleScenario::LoopingInfo => {
            let e = resolve(K::Info, INFO).err();
            check(
                matches!(e, Some(HandleError::Read(ReadError::Cycle { .. }))),
                "a looping info list is a cycle error",
            )?;
            return Ok(seed);
        }
        HandleScenario::HugeGroup => {
            let v = resolve(K::Group, GROUP)?;
            let Details::Group(g) = &v.details else {
                return Err("not a group".into());
            };
            check(
                g.world_ranks
                    .reason()
                    .is_some_and(|r| r.contains("max_table_entries")),
                "a huge group's ranks are refused",
            )?;
            return Ok(seed);
        }
        HandleScenario::WildVcrt => {
            let world = comm(WORLD)?;
            check(
                world.local_world_ranks.reason().is_some(),
                "an unmapped VCRT gives no world ranks",
            )?;
            check(
                world.name.value().map(String::as_str) == Some("MPI_COMM_WORLD"),
                "the world's name, whatever its VCRT",
            )?;
            return Ok(seed);
        }
        HandleScenario::WellFormed => {}
    }
    let world = comm(WORLD)?;
    check(
        world.name.value().map(String::as_str) == Some("MPI_COMM_WORLD"),
        "the world's name",
    )?;
    check(
        world.local_world_ranks == Availability::Value(vec![5, 9]),
        "world ranks from the VCRT",
    )?;
    check(world.rank == Availability::Value(1), "the world rank")?;
    let dup = comm(DUP)?;
    check(
        dup.local_world_ranks == Availability::Value(vec![9, 5]),
        "world ranks from the group",
    )?;
    let freed = resolve(K::Comm, FREED_COMM)?;
    check(
        freed.state == Availability::Value(ObjectState::Freed),
        "a freed communicator",
    )?;
    let ig = resolve(K::Group, GROUP_INDIRECT)?;
    check(
        matches!(&ig.details, Details::Group(g) if g.world_ranks == Availability::Value(vec![9])),
        "a group in an indirect block",
    )?;
    let info = resolve(K::Info, INFO)?;
    check(
        matches!(&info.details, Details::Info(i) if i.entries.value().map(Vec::len) == Some(2)),
        "an info with two keys",
    )?;
    let status = mpich.status(TargetAddr(a.status), Some(i64::from(MPI_INT as i32)))?;
    check(
        status.source == 1 && status.elements == Availability::Value(4),
        "a status of 4 MPI_INTs from rank 1",
    )?;
    if real {
        // The real MPICH's members beyond these may differ from the
        // synthetic ones; what matters is that its offsets reach objects.
        return Ok(seed);
    }
    check(
        matches!(dup.topology, Availability::Value(Topology::Cartesian { ref dims, .. }) if dims == &[2, 1]),
        "a Cartesian topology",
    )?;
    let contig = resolve(K::Datatype, CONTIG)?;
    check(
        matches!(&contig.details, Details::Datatype(d)
            if d.constructor.value().is_some_and(|c| c.combiner == "MPI_COMBINER_CONTIGUOUS")),
        "a contiguous datatype",
    )?;
    let recv = resolve(K::Request, RECV)?;
    check(
        matches!(&recv.details, Details::Request(r)
            if r.request_kind == Availability::Value(RequestKind::Receive)
                && r.complete == Availability::Value(false)),
        "a pending receive",
    )?;
    let send = resolve(K::Request, SEND)?;
    check(
        matches!(&send.details, Details::Request(r)
            if r.status.value().is_some_and(|s| s.tag == 3)),
        "a completed send with its status",
    )?;
    let greq = resolve(K::Request, GREQ)?;
    check(
        matches!(&greq.details, Details::Request(r) if r.generalized.value().is_some()),
        "a generalized request",
    )?;
    let win = resolve(K::Win, WIN)?;
    check(
        matches!(&win.details, Details::Win(w) if w.name.value().map(String::as_str) == Some("win0")),
        "a window",
    )?;
    let file = mpich.resolve_fortran(K::File, 1)?;
    check(
        matches!(&file.details, Details::File(f) if f.filename.value().map(String::as_str) == Some("/tmp/data")),
        "a file by its Fortran index",
    )?;
    let op = resolve(K::Op, USER_OP)?;
    check(
        matches!(&op.details, Details::Op(o) if o.commutative == Availability::Value(true)),
        "a user operation",
    )?;
    let eh = resolve(K::Errhandler, USER_ERRHANDLER)?;
    check(
        matches!(&eh.details, Details::Errhandler(e) if e.user_function.value().is_some_and(Option::is_some)),
        "a user error handler",
    )?;
    Ok(seed)
}

/// The `handles` seeds of every scenario for each ABI, laid out with the
/// synthetic layout.
pub fn handles_synthetic(out: &Path) -> Result<()> {
    write_synthetic(out, "handles", &HANDLE_SCENARIOS, |abi, scenario| {
        let l = SpecLayout::synthetic(&handles::SPEC, abi.address_bytes() as u64);
        handle_seed(abi, &l, scenario, false)
    })
}

/// The handle seeds laid out with the x86_64 reference MPICH's own
/// offsets, widths and enumerator values, read from its DWARF; entries it
/// lacks are removed.
pub fn handles_real(out: &Path, lib: &Path) -> Result<()> {
    let mut oracle = TypeOracle::new();
    oracle.add_object("libmpi", lib, None);
    let (l, missing) = SpecLayout::from_oracle(&handles::SPEC, &oracle);
    if !missing.is_empty() {
        eprintln!(
            "   handles: the reference MPICH lacks {} of the synthetic entries: {}",
            missing.len(),
            missing.join(", ")
        );
    }
    write_real(out, "handles", &HANDLE_SCENARIOS, |scenario| {
        handle_seed(TargetAbi::X86_64, &l, scenario, true)
    })
}
