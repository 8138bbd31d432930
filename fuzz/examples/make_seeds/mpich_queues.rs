//! Seeds of the `mpich_queues` target: an MPICH CH3 process with two
//! communicators, receives posted and unexpected and two pending sends,
//! well formed or broken (a looping list, an unmapped head, a long list,
//! no send queue), laid out with the synthetic offsets or with a real
//! MPICH's.

use std::collections::BTreeMap;
use std::path::Path;

use mpidd_fuzz::{limits, mpich, names, Cursor, Process};
use mpidd_read::{SymbolTable, SyntheticMemory, TargetParts, TypeOracle};
use mpidd_types::{TargetAbi, TargetAddr};
use mpiq_core::{DecodeError, Layouts, MpichCh3, QueueDecoder};

use crate::common::{check, encoded, write_real, write_synthetic, Result};
use crate::objects::Heap;

/// Offsets and sizes by (type, member), as the mpich layout format lists
/// them.
type Offsets = BTreeMap<(&'static str, Option<&'static str>), u64>;

/// The synthetic MPICH's offsets and sizes ([`mpich::DEFAULT`]).
fn default_offsets() -> Offsets {
    mpich::DEFAULT
        .iter()
        .map(|&(t, m, v)| ((t, m), v))
        .collect()
}

/// What a synthetic MPICH process holds besides its communicators.
#[derive(Clone, Copy)]
enum Scenario {
    WellFormed,
    LoopingPosted,
    UnmappedHead,
    LongList,
    NoSendQueue,
}

/// An MPICH CH3 process laid out with `o`: two communicators (the world,
/// with its world ranks in the connection table, and a duplicate with a
/// group), posted and unexpected receives, and two pending sends, one of a
/// builtin datatype and one of a datatype in the direct pool.
fn mpich_process(abi: TargetAbi, o: &Offsets, scenario: Scenario) -> Process {
    let w = abi.address_bytes() as u64;
    let off = |t: &'static str, m: &'static str| o[&(t, Some(m))];
    let size = |t: &'static str| o[&(t, None)];
    let (globals_base, heap_base) = if w == 4 {
        (0x0804_0000, 0x0900_0000)
    } else {
        (0x5555_0000_0000, 0x7f00_0000_0000)
    };
    let mut g = Heap::new(abi, globals_base);
    let mut h = Heap::new(abi, heap_base);

    let list = g.alloc(size("MPIR_Comm_list"));
    let posted_ptr = g.alloc(w);
    let posted_head = g.alloc(w);
    let unexpected_ptr = g.alloc(w);
    let unexpected_head = g.alloc(w);
    let sendq_head = g.alloc(w);
    let version = g.text("4.0.2");
    let device = g.text("ch3:nemesis");
    let datatype_direct = g.alloc(4 * size("MPIR_Datatype"));
    // Direct datatype 1: a pair of doubles, 16 bytes.
    g.put(
        datatype_direct + size("MPIR_Datatype") + off("MPIR_Datatype", "size"),
        16,
        w as usize,
    );
    g.word(posted_ptr, posted_head);
    g.word(unexpected_ptr, unexpected_head);
    g.put(list + off("MPIR_Comm_list", "sequence_number"), 7, 4);

    // World ranks 5 and 9, so a wrong translation cannot pass by luck.
    let vcs = h.alloc(2 * size("MPIDI_VC"));
    h.put(vcs + off("MPIDI_VC", "pg_rank"), 5, 4);
    h.put(vcs + size("MPIDI_VC") + off("MPIDI_VC", "pg_rank"), 9, 4);
    let vcrt = h.alloc(off("MPIDI_VCRT", "vcr_table") + 2 * w);
    h.put(vcrt + off("MPIDI_VCRT", "size"), 2, 4);
    h.word(vcrt + off("MPIDI_VCRT", "vcr_table"), vcs);
    h.word(
        vcrt + off("MPIDI_VCRT", "vcr_table") + w,
        vcs + size("MPIDI_VC"),
    );
    let pmap = h.alloc(2 * size("MPII_Group_pmap_t"));
    h.put(pmap + off("MPII_Group_pmap_t", "lpid"), 9, 8);
    h.put(
        pmap + size("MPII_Group_pmap_t") + off("MPII_Group_pmap_t", "lpid"),
        5,
        8,
    );
    let group = h.alloc(size("MPIR_Group"));
    h.put(group + off("MPIR_Group", "size"), 2, 4);
    h.word(group + off("MPIR_Group", "lrank_to_lpid"), pmap);

    let comm_vcrt = off("MPIR_Comm", "dev") + off("MPIDI_CH3I_comm_t", "vcrt");
    let comms: Vec<u64> = (0..2).map(|_| h.alloc(size("MPIR_Comm"))).collect();
    for (i, (&c, name)) in comms.iter().zip(["MPI_COMM_WORLD", "dup"]).enumerate() {
        let at = (c + off("MPIR_Comm", "name") - h.base) as usize;
        h.bytes[at..at + name.len()].copy_from_slice(name.as_bytes());
        let context = 4 * i as u64;
        h.put(c + off("MPIR_Comm", "context_id"), context, 2);
        h.put(c + off("MPIR_Comm", "recvcontext_id"), context, 2);
        h.put(c + off("MPIR_Comm", "remote_size"), 2, 4);
        h.put(c + off("MPIR_Comm", "rank"), 1, 4);
        h.put(c + off("MPIR_Comm", "local_size"), 2, 4);
        h.put(c + off("MPIR_Comm", "comm_kind"), 0, 4);
        h.word(c + comm_vcrt, vcrt);
        if i == 1 {
            h.word(c + off("MPIR_Comm", "local_group"), group);
        }
        let next = comms.get(i + 1).copied().unwrap_or(0);
        h.word(c + off("MPIR_Comm", "comm_next"), next);
    }
    g.word(list + off("MPIR_Comm_list", "head"), comms[0]);

    let req_size = size("MPIR_Request");
    let dev = off("MPIR_Request", "dev");
    let parts = dev + off("MPIDI_Request", "match") + off("MPIDI_Message_match", "parts");
    let part = |m| parts + off("MPIDI_Message_match_parts_t", m);
    let mpi_int = 0x4c00_0405;
    let request = |h: &mut Heap, tag: i64, rank: i64, context: u64, eager: u64, dtype: u64| {
        let r = h.alloc(req_size);
        h.put(r + off("MPIR_Request", "cc"), u64::from(eager == 0), 4);
        h.put(r + part("tag"), tag as u64, 4);
        h.put(r + part("rank"), rank as u64, 2);
        h.put(r + part("context_id"), context, 2);
        h.word(r + dev + off("MPIDI_Request", "user_buf"), 0xb0f0);
        h.word(r + dev + off("MPIDI_Request", "user_count"), 10);
        h.put(r + dev + off("MPIDI_Request", "datatype"), dtype, 4);
        h.word(r + dev + off("MPIDI_Request", "recv_data_sz"), eager);
        h.word(
            r + dev + off("MPIDI_Request", "tmpbuf"),
            if eager > 0 { 0xda7a } else { 0 },
        );
        // MPIDI_REQUEST_EAGER_MSG (1) or _RNDV_MSG (2) in dev.state.
        h.put(
            r + dev + off("MPIDI_Request", "state"),
            if eager > 0 { 1 } else { 2 },
            4,
        );
        r
    };
    let chain = |h: &mut Heap, reqs: &[u64], looping: bool| {
        for (i, &r) in reqs.iter().enumerate() {
            let next = match reqs.get(i + 1) {
                Some(&n) => n,
                None if looping => reqs[0],
                None => 0,
            };
            h.word(r + off("MPIR_Request", "next"), next);
        }
        reqs.first().copied().unwrap_or(0)
    };
    let posted_count = if matches!(scenario, Scenario::LongList) {
        12
    } else {
        2
    };
    let posted: Vec<u64> = (0..posted_count)
        .map(|i| match i {
            // MPICH's MPI_ANY_SOURCE is -2, its MPI_ANY_TAG -1.
            1 => request(&mut h, -1, -2, 0, 0, mpi_int),
            _ => request(&mut h, 11 + i, 0, 4 * (i as u64 % 2), 0, mpi_int),
        })
        .collect();
    let looping = matches!(scenario, Scenario::LoopingPosted);
    let first = chain(&mut h, &posted, looping);
    g.word(posted_head, first);
    let unexpected = [request(&mut h, 99, 0, 0, 20, mpi_int)];
    let first = chain(&mut h, &unexpected, false);
    let head = if matches!(scenario, Scenario::UnmappedHead) {
        0xdead_0000
    } else {
        first
    };
    g.word(unexpected_head, head);

    let sendq_size = size("MPIR_Sendq");
    let sends: Vec<u64> = [(44, mpi_int), (45, 0x8c00_0001)]
        .iter()
        .map(|&(tag, dtype)| {
            let sreq = request(&mut h, tag, 0, 0, 0, dtype);
            let s = h.alloc(sendq_size);
            h.word(s + off("MPIR_Sendq", "sreq"), sreq);
            h.put(s + off("MPIR_Sendq", "tag"), tag as u64, 4);
            h.put(s + off("MPIR_Sendq", "rank"), 0, 4);
            h.put(s + off("MPIR_Sendq", "context_id"), 0, 4);
            s
        })
        .collect();
    h.word(sends[0] + off("MPIR_Sendq", "next"), sends[1]);
    g.word(sendq_head, sends[0]);

    let mut memory = SyntheticMemory::new(abi);
    memory.map(TargetAddr(g.base), g.bytes);
    memory.map(TargetAddr(h.base), h.bytes);
    let mut symbols = SymbolTable::new();
    let object = "/synthetic/libmpi.so.12";
    let mut globals = vec![
        ("MPIR_All_communicators", list),
        ("MPID_Recvq_posted_head_ptr", posted_ptr),
        ("MPID_Recvq_unexpected_head_ptr", unexpected_ptr),
        ("MPIR_Datatype_direct", datatype_direct),
        ("MPII_Version_string", version),
        ("MPII_Version_device", device),
    ];
    if !matches!(scenario, Scenario::NoSendQueue) {
        globals.push(("MPIR_Sendq_head", sendq_head));
    }
    for (name, addr) in globals {
        symbols.insert(object, name, TargetAddr(addr), w);
    }
    Process { memory, symbols }
}

/// The `mpich_queues` seed of `scenario` laid out with `o` for `abi`,
/// checked to read as the scenario intends.
fn mpich_seed(abi: TargetAbi, o: &Offsets, scenario: Scenario) -> Result<Vec<u8>> {
    let p = mpich_process(abi, o, scenario);
    let mut seed = encoded(&p, names::MPICH);
    let values: Vec<Option<u64>> = mpich::DEFAULT
        .iter()
        .map(|&(t, m, _)| o.get(&(t, m)).copied())
        .collect();
    mpich::encode(&values, &mut seed);

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, names::MPICH);
    let types = mpich::parse(&mut c);
    let target = TargetParts {
        memory: &back,
        symbols: &back,
        layouts: &types,
    };
    let read = MpichCh3::new(&target, "4.0.2", "ch3:nemesis")?.read_queues(&target, &limits());
    match (scenario, read) {
        (Scenario::LoopingPosted, Err(DecodeError::Cycle { .. })) => {}
        (Scenario::UnmappedHead, Err(DecodeError::Read(_))) => {}
        (Scenario::WellFormed | Scenario::LongList | Scenario::NoSendQueue, Ok(q)) => {
            let world = &q.communicators[0];
            check(
                q.communicators.len() == 2,
                "the MPICH seed has 2 communicators",
            )?;
            check(
                world.group.as_deref() == Some(&[5, 9][..]),
                "world ranks from the VCRT",
            )?;
            check(
                q.communicators[1].group.as_deref() == Some(&[9, 5][..]),
                "world ranks from the group",
            )?;
            check(
                !world.pending_receives.operations().is_empty(),
                "posted receives",
            )?;
            check(
                world.unexpected_messages.operations().len() == 1,
                "an unexpected message",
            )?;
            let sends = world.pending_sends.operations();
            match scenario {
                Scenario::NoSendQueue => check(sends.is_empty(), "no send queue")?,
                _ => check(
                    sends.len() == 2 && sends[1].desired_length == 160,
                    "two sends, the second 10 direct-pool datatypes of 16 bytes",
                )?,
            }
        }
        (_, other) => return Err(format!("an MPICH seed read as {other:?}").into()),
    }
    Ok(seed)
}

/// Every scenario, by the label its seeds are named after.
const SCENARIOS: [(&str, Scenario); 5] = [
    ("well-formed", Scenario::WellFormed),
    ("looping-posted", Scenario::LoopingPosted),
    ("unmapped-head", Scenario::UnmappedHead),
    ("long-list", Scenario::LongList),
    ("no-send-queue", Scenario::NoSendQueue),
];

/// The `mpich_queues` seeds of every scenario for each ABI, laid out with
/// the synthetic offsets.
pub fn mpich_synthetic(out: &Path) -> Result<()> {
    let o = default_offsets();
    write_synthetic(out, "mpich_queues", &SCENARIOS, |abi, scenario| {
        mpich_seed(abi, &o, scenario)
    })
}

/// The same processes, laid out with the offsets of a real MPICH (the
/// x86_64 reference build), read from its DWARF with the type oracle.
pub fn mpich_real(out: &Path, lib: &Path) -> Result<()> {
    let mut oracle = TypeOracle::new();
    oracle.add_object("libmpi", lib, None);
    let mut o = Offsets::new();
    for &(t, m, _) in mpich::DEFAULT {
        let v = match m {
            Some(m) => oracle.member_offset(t, m),
            None => oracle.size_of(t),
        };
        o.insert(
            (t, m),
            v.map_err(|e| format!("{} has no {t}/{m:?}: {e}", lib.display()))?,
        );
    }
    write_real(out, "mpich_queues", &SCENARIOS, |scenario| {
        mpich_seed(TargetAbi::X86_64, &o, scenario)
    })
}
