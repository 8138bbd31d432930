//! Seeds of the `ompi_ob1_queues` target: an Open MPI process with the ob1
//! PML, its communicators, posted receives, unexpected and out-of-order
//! fragments and a chunk of send requests, well formed or broken (looping
//! wildcard receives, too many receives for one peer, an unmapped chunk),
//! laid out with the synthetic layout or with the reference Open MPI's.

use std::path::Path;

use mpidd_fuzz::{limits, names, ob1, Cursor, Process};
use mpidd_read::TargetParts;
use mpidd_types::TargetAbi;
use mpiq_core::model::{OperationStatus, Protocol, Queue};
use mpiq_core::{DecodeError, OmpiOb1, QueueDecoder};

use crate::common::{check, encoded, oracle_under, write_real, write_synthetic, Result};
use crate::objects::{Objects, SpecLayout};

/// What a synthetic Open MPI ob1 process holds besides its well-formed
/// queues.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ob1Scenario {
    WellFormed,
    /// The world's wildcard receives loop back without reaching their
    /// list's sentinel.
    LoopingWild,
    /// Peer 1 has 200 receives posted for it, above the fuzz limit.
    LongSpecific,
    /// The send requests' free list names an unmapped chunk.
    UnmappedChunk,
}

/// Every scenario, by the label its seeds are named after.
const OB1_SCENARIOS: [(&str, Ob1Scenario); 4] = [
    ("well-formed", Ob1Scenario::WellFormed),
    ("looping-wild", Ob1Scenario::LoopingWild),
    ("long-specific", Ob1Scenario::LongSpecific),
    ("unmapped-chunk", Ob1Scenario::UnmappedChunk),
];

/// ob1's first-fragment header types (`pml_ob1_hdr.h`).
const HDR_MATCH: u64 = 0x41;
const HDR_RNDV: u64 = 0x42;
/// The class pointer every send request of the free list carries.
const SEND_CLASS: u64 = 0x0777_0000;

impl Objects<'_> {
    /// Links `items` into the `opal_list_t` at `list`, a ring through its
    /// sentinel.
    fn opal_list(&mut self, list: u64, items: &[u64]) {
        let (sentinel, _) = self
            .l
            .entry("opal_list_t", Some("opal_list_sentinel"))
            .expect("opal_list_t has its sentinel");
        let sentinel = list + sentinel;
        let mut ring = vec![sentinel];
        ring.extend_from_slice(items);
        for (i, &node) in ring.iter().enumerate() {
            let next = ring[(i + 1) % ring.len()];
            let prev = ring[(i + ring.len() - 1) % ring.len()];
            self.set(node, "opal_list_item_t", "opal_list_next", next);
            self.set(node, "opal_list_item_t", "opal_list_prev", prev);
        }
    }

    /// A posted receive of `count` ints.
    #[allow(clippy::too_many_arguments)]
    fn ob1_recv(&mut self, peer: i64, tag: i64, count: u64, seq: u64, int: u64) -> u64 {
        const R: &str = "mca_pml_ob1_recv_request_t";
        let at = self.h.alloc(self.l.size(R));
        let buffer = self.h.alloc(4 * count);
        self.set(
            at,
            R,
            "req_recv.req_base.req_ompi.req_state",
            self.l.en("OMPI_REQUEST_ACTIVE"),
        );
        self.set(at, R, "req_recv.req_base.req_datatype", int);
        self.set(at, R, "req_recv.req_base.req_addr", buffer);
        self.set(at, R, "req_recv.req_base.req_count", count);
        self.set(at, R, "req_recv.req_base.req_peer", peer as u64);
        self.set(at, R, "req_recv.req_base.req_tag", tag as u64);
        self.set(at, R, "req_recv.req_base.req_sequence", seq);
        at
    }

    /// A first fragment from `src` with one segment of `seg_len` bytes
    /// (headers included).
    fn ob1_frag(&mut self, hdr: u64, src: u64, tag: u64, seg_len: u64, msg_length: u64) -> u64 {
        const F: &str = "mca_pml_ob1_recv_frag_t";
        const S: &str = "mca_btl_base_segment_t";
        let at = self.h.alloc(self.l.size(F));
        let data = self.h.alloc(seg_len);
        self.set(at, F, "hdr.hdr_common.hdr_type", hdr);
        self.set(at, F, "hdr.hdr_match.hdr_src", src);
        self.set(at, F, "hdr.hdr_match.hdr_tag", tag);
        self.set(at, F, "hdr.hdr_match.hdr_seq", 1);
        if hdr == HDR_RNDV {
            self.set(at, F, "hdr.hdr_rndv.hdr_msg_length", msg_length);
        }
        self.set(at, F, "num_segments", 1);
        let (segments, _) = self.l.entry(F, Some("segments")).expect("segments");
        self.set(at + segments, S, "seg_addr", data);
        self.set(at + segments, S, "seg_len", seg_len);
        at
    }

    /// A communicator in `table` slot `slot`.
    #[allow(clippy::too_many_arguments)]
    fn ob1_comm(
        &mut self,
        table: u64,
        slot: u64,
        name: &str,
        context: u64,
        rank: u64,
        group: u64,
        pml: u64,
    ) -> u64 {
        const C: &str = "ompi_communicator_t";
        let at = self.h.alloc(self.l.size(C));
        self.chars(at, C, "c_name", name);
        self.set(at, C, "c_contextid", context);
        self.set(at, C, "c_my_rank", rank);
        self.set(at, C, "c_local_group", group);
        self.set(at, C, "c_pml_comm", pml);
        let w = self.h.abi.address_bytes() as u64;
        self.h.word(table + slot * w, at);
        at
    }

    /// An ompi_group_t of the procs at `procs` (pointers, or sentinels).
    fn ob1_group(&mut self, procs: &[u64]) -> u64 {
        const G: &str = "ompi_group_t";
        let at = self.h.alloc(self.l.size(G));
        let table = self.words(procs);
        self.set(at, G, "grp_proc_count", procs.len() as u64);
        self.set(at, G, "grp_proc_pointers", table);
        at
    }

    /// ob1's state of a communicator: its wildcard receives and its peers.
    fn ob1_pml_comm(&mut self, wild: &[u64], peers: &[u64]) -> u64 {
        const P: &str = "mca_pml_ob1_comm_t";
        let at = self.h.alloc(self.l.size(P));
        let (wild_at, _) = self.l.entry(P, Some("wild_receives")).expect("wild");
        self.opal_list(at + wild_at, wild);
        let table = self.words(peers);
        self.set(at, P, "procs", table);
        self.set(at, P, "num_procs", peers.len() as u64);
        at
    }

    /// One peer's state: receives posted for it, its unexpected
    /// fragments, and the head of its out-of-order ring.
    fn ob1_peer(&mut self, specific: &[u64], unexpected: &[u64], cant_match: u64) -> u64 {
        const P: &str = "mca_pml_ob1_comm_proc_t";
        let at = self.h.alloc(self.l.size(P));
        let (s, _) = self
            .l
            .entry(P, Some("specific_receives"))
            .expect("specific");
        let (u, _) = self
            .l
            .entry(P, Some("unexpected_frags"))
            .expect("unexpected");
        self.opal_list(at + s, specific);
        self.opal_list(at + u, unexpected);
        self.set(at, P, "frags_cant_match", cant_match);
        at
    }
}

/// An Open MPI process with the ob1 PML laid out with `l`: it is world
/// rank 1 of 4, with MPI_COMM_WORLD, MPI_COMM_SELF, a duplicate and a
/// split in a table with empty slots; posted receives (a wildcard one and
/// one for a peer on the world, one with MPI_ANY_TAG on the duplicate),
/// unexpected fragments (eager, rendezvous, and two out of order), and a
/// chunk of three send requests (one free, one eager send complete but not
/// waited for, one rendezvous pending).
fn ob1_process(abi: TargetAbi, l: &SpecLayout, scenario: Ob1Scenario) -> Process {
    let w = abi.address_bytes() as u64;
    let base = if w == 4 {
        0x0900_0000
    } else {
        0x7f00_1000_0000
    };
    let mut o = Objects::new(l, abi, base);
    let version = o.text("4.1.4");
    o.symbol("opal_version_string", version, 6);
    const PC: &str = "mca_pml_base_component_t";
    let component = o.array("mca_pml_base_selected_component", PC, 1);
    o.chars(component, PC, "pmlm_version.mca_component_name", "ob1");

    const DT: &str = "ompi_datatype_t";
    let int = o.h.alloc(l.size(DT));
    o.set(int, DT, "super.size", 4);

    // Procs 0 to 2 are ompi_proc_t; proc 3 was never contacted, so the
    // group holds its name as a sentinel (proc.h).
    const PR: &str = "ompi_proc_t";
    let mut procs = Vec::new();
    for vpid in 0..3 {
        let p = o.h.alloc(l.size(PR));
        o.set(p, PR, "super.proc_name.vpid", vpid);
        procs.push(p);
    }
    procs.push(if w == 8 { (3 << 32) | 1 } else { (3 << 1) | 1 });
    let world_group = o.ob1_group(&procs);
    let self_group = o.ob1_group(&procs[1..2]);
    let split_group = o.ob1_group(&[procs[1], procs[3]]);

    // MPI_COMM_WORLD's queues.
    let specific = o.ob1_recv(0, 11, 10, 1, int);
    let wild = o.ob1_recv(-1, 7, 3, 2, int);
    let eager = o.ob1_frag(HDR_MATCH, 0, 99, 14 + 20, 0);
    let rndv_hdr = l.size("mca_pml_ob1_rendezvous_hdr_t");
    let rndv = o.ob1_frag(HDR_RNDV, 2, 33, rndv_hdr, 1 << 20);
    // Out of order from peer 2: a ring of one head, whose range is a ring
    // of one more fragment.
    let head = o.ob1_frag(HDR_MATCH, 2, 50, 14 + 8, 0);
    let next_in_range = o.ob1_frag(HDR_MATCH, 2, 51, 14 + 8, 0);
    const F: &str = "mca_pml_ob1_recv_frag_t";
    o.set(head, F, "super.super.opal_list_next", head);
    o.set(head, F, "super.super.opal_list_prev", head);
    o.set(head, F, "range", next_in_range);
    o.set(
        next_in_range,
        F,
        "super.super.opal_list_next",
        next_in_range,
    );
    o.set(
        next_in_range,
        F,
        "super.super.opal_list_prev",
        next_in_range,
    );
    let mut wild_list = vec![wild];
    if scenario == Ob1Scenario::LoopingWild {
        let second = o.ob1_recv(-1, 8, 1, 3, int);
        wild_list.push(second);
    }
    let mut specific_1 = Vec::new();
    if scenario == Ob1Scenario::LongSpecific {
        for i in 0..200 {
            specific_1.push(o.ob1_recv(1, 1000 + i, 1, 10 + i as u64, int));
        }
    }
    let peer0 = o.ob1_peer(&[specific], &[eager], 0);
    let peer1 = o.ob1_peer(&specific_1, &[], 0);
    let peer2 = o.ob1_peer(&[], &[rndv], head);
    let world_pml = o.ob1_pml_comm(&wild_list, &[peer0, peer1, peer2, 0]);
    if scenario == Ob1Scenario::LoopingWild {
        // The second receive leads back to the first, not to the sentinel.
        o.set(wild_list[1], "opal_list_item_t", "opal_list_next", wild);
    }
    // The duplicate's: a receive from peer 3 with MPI_ANY_TAG.
    let any_tag = o.ob1_recv(3, -1, 5, 1, int);
    let dup_peer3 = o.ob1_peer(&[any_tag], &[], 0);
    let dup_pml = o.ob1_pml_comm(&[], &[0, 0, 0, dup_peer3]);
    let self_pml = o.ob1_pml_comm(&[], &[0]);
    let split_pml = o.ob1_pml_comm(&[], &[0, 0]);

    const PA: &str = "opal_pointer_array_t";
    let comms = o.array("ompi_mpi_communicators", PA, 1);
    let table = o.h.alloc(6 * w);
    o.set(comms, PA, "size", 6);
    o.set(comms, PA, "addr", table);
    let world = o.ob1_comm(table, 0, "MPI_COMM_WORLD", 0, 1, world_group, world_pml);
    o.ob1_comm(table, 1, "MPI_COMM_SELF", 1, 0, self_group, self_pml);
    let dup = o.ob1_comm(table, 3, "mpidd_dup", 3, 1, world_group, dup_pml);
    o.ob1_comm(table, 4, "mpidd_split_odd", 4, 0, split_group, split_pml);

    // The eager BTL to every peer: 4096 bytes, less ob1's header.
    const BTL: &str = "mca_btl_base_module_t";
    let btl = o.h.alloc(l.size(BTL));
    o.set(btl, BTL, "btl_eager_limit", 4096);
    const BB: &str = "mca_bml_base_btl_t";
    let bml_btl = o.h.alloc(l.size(BB));
    o.set(bml_btl, BB, "btl", btl);
    const EP: &str = "mca_bml_base_endpoint_t";
    let endpoint = o.h.alloc(l.size(EP));
    let (eager_at, _) = l.entry(EP, Some("btl_eager")).expect("btl_eager");
    const BA: &str = "mca_bml_base_btl_array_t";
    o.set(endpoint + eager_at, BA, "arr_size", 1);
    o.set(endpoint + eager_at, BA, "bml_btls", bml_btl);

    // The send requests' free list: one chunk of three.
    const FL: &str = "opal_free_list_t";
    const SR: &str = "mca_pml_ob1_send_request_t";
    let fl = o.array("mca_pml_base_send_requests", FL, 1);
    let stride = l.size(SR).div_ceil(8) * 8;
    let item = l.size("opal_free_list_item_t");
    let chunk = o.h.alloc(item.div_ceil(8) * 8 + 3 * stride);
    let (allocations, _) = l.entry(FL, Some("fl_allocations")).expect("allocations");
    if scenario == Ob1Scenario::UnmappedChunk {
        let (sentinel, _) = l
            .entry("opal_list_t", Some("opal_list_sentinel"))
            .expect("sentinel");
        o.opal_list(fl + allocations, &[]);
        o.set(
            fl + allocations + sentinel,
            "opal_list_item_t",
            "opal_list_next",
            0xdead_0000,
        );
    } else {
        o.opal_list(fl + allocations, &[chunk]);
    }
    o.set(fl, FL, "fl_num_allocated", 3);
    o.set(fl, FL, "fl_num_per_alloc", 3);
    o.set(fl, FL, "fl_frag_size", l.size(SR));
    o.set(fl, FL, "fl_frag_alignment", 8);
    o.set(fl, FL, "fl_frag_class", SEND_CLASS);
    let first = chunk + item.div_ceil(8) * 8;
    let sends: Vec<u64> = (0..3).map(|i| first + i * stride).collect();
    for &s in &sends {
        o.set(s, "opal_object_t", "obj_class", SEND_CLASS);
        o.set(
            s,
            SR,
            "req_send.req_base.req_ompi.req_state",
            l.en("OMPI_REQUEST_INVALID"),
        );
    }
    let send = |o: &mut Objects<'_>, s: u64, comm: u64, peer: u64, tag: u64, bytes: u64| {
        let buffer = o.h.alloc(16);
        o.set(
            s,
            SR,
            "req_send.req_base.req_ompi.req_state",
            l.en("OMPI_REQUEST_ACTIVE"),
        );
        o.set(
            s,
            SR,
            "req_send.req_base.req_ompi.req_type",
            l.en("OMPI_REQUEST_PML"),
        );
        o.set(
            s,
            SR,
            "req_send.req_base.req_type",
            l.en("MCA_PML_REQUEST_SEND"),
        );
        o.set(s, SR, "req_send.req_base.req_comm", comm);
        o.set(s, SR, "req_send.req_base.req_datatype", int);
        o.set(s, SR, "req_send.req_base.req_addr", buffer);
        o.set(s, SR, "req_send.req_addr", buffer);
        o.set(s, SR, "req_send.req_base.req_count", bytes / 4);
        o.set(s, SR, "req_send.req_base.req_peer", peer);
        o.set(s, SR, "req_send.req_base.req_tag", tag);
        o.set(s, SR, "req_send.req_bytes_packed", bytes);
        o.set(
            s,
            SR,
            "req_send.req_send_mode",
            l.en("MCA_PML_BASE_SEND_STANDARD"),
        );
        o.set(s, SR, "req_endpoint", endpoint);
    };
    send(&mut o, sends[1], dup, 2, 44, 2000);
    o.set(sends[1], SR, "req_send.req_base.req_ompi.req_complete", 1);
    o.set(sends[1], SR, "req_send.req_base.req_pml_complete", 1);
    send(&mut o, sends[2], world, 3, 33, 1 << 20);

    o.finish()
}

/// The `ompi_ob1_queues` seed of `scenario` laid out with `l` for `abi`,
/// checked to read as the scenario intends.
fn ob1_seed(abi: TargetAbi, l: &SpecLayout, scenario: Ob1Scenario) -> Result<Vec<u8>> {
    let p = ob1_process(abi, l, scenario);
    let mut seed = encoded(&p, names::OB1);
    let word = abi.address_bytes() as u64;
    l.spec.encode(&l.values, word, &mut seed);

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, names::OB1);
    let types = ob1::SPEC.read(&mut c, word);
    let target = TargetParts {
        memory: &back,
        symbols: &back,
        layouts: &types,
    };
    let read = OmpiOb1::new(&target, &limits())?.read_queues(&target, &limits());
    let q = match (scenario, read) {
        (Ob1Scenario::UnmappedChunk, Err(DecodeError::Read(_))) => return Ok(seed),
        (Ob1Scenario::UnmappedChunk, other) => {
            return Err(format!("an unmapped chunk read as {other:?}").into())
        }
        (_, read) => read?,
    };
    let comm = |name: &str| {
        q.communicators
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no communicator {name}"))
    };
    check(q.communicators.len() == 4, "4 communicators")?;
    check(q.global_rank == 1, "world rank 1")?;
    let world = comm("MPI_COMM_WORLD")?;
    check(
        world.group.as_deref() == Some(&[0, 1, 2, 3][..]),
        "world ranks from the procs and a sentinel",
    )?;
    check(
        comm("mpidd_split_odd")?.group.as_deref() == Some(&[1, 3][..]),
        "the split's world ranks",
    )?;
    let failed = |queue: &Queue, what: &str| match queue {
        Queue::Failed { error, .. } if error.contains(what) => Ok(()),
        other => Err(format!(
            "the world's receives are {other:?}, not failed with {what:?}"
        )),
    };
    match scenario {
        Ob1Scenario::LoopingWild => failed(&world.pending_receives, "loops")?,
        Ob1Scenario::LongSpecific => failed(&world.pending_receives, "longer than")?,
        _ => {
            let posted = world.pending_receives.operations();
            check(
                posted.len() == 2
                    && posted[0].desired_tag == 11
                    && posted[0].desired_length == 40
                    && posted[1].desired_local_rank == -1,
                "two posted receives in sequence order, in bytes",
            )?;
            let unexpected = world.unexpected_messages.operations();
            check(
                unexpected.len() == 4
                    && unexpected
                        .iter()
                        .any(|u| u.actual_tag == 99 && u.actual_length == 20)
                    && unexpected
                        .iter()
                        .any(|u| u.actual_tag == 33 && u.actual_length == 1 << 20),
                "eager, rendezvous and two out-of-order fragments",
            )?;
        }
    }
    let dup = comm("mpidd_dup")?;
    check(
        matches!(dup.pending_receives.operations(), [r] if r.tag_wild),
        "an MPI_ANY_TAG receive on the duplicate",
    )?;
    let sent = dup.pending_sends.operations();
    check(
        matches!(sent, [s] if s.status == OperationStatus::Complete
            && s.protocol == Some(Protocol::Eager) && s.desired_length == 2000),
        "an eager send complete but not waited for",
    )?;
    let sent = world.pending_sends.operations();
    check(
        matches!(sent, [s] if s.status == OperationStatus::Pending
            && s.protocol == Some(Protocol::Rendezvous)),
        "a rendezvous send pending",
    )?;
    Ok(seed)
}

/// The `ompi_ob1_queues` seeds of every scenario for each ABI, laid out
/// with the synthetic layout.
pub fn ob1_synthetic(out: &Path) -> Result<()> {
    write_synthetic(out, "ompi_ob1_queues", &OB1_SCENARIOS, |abi, scenario| {
        let l = SpecLayout::synthetic(&ob1::SPEC, abi.address_bytes() as u64);
        ob1_seed(abi, &l, scenario)
    })
}

/// The ob1 seeds laid out with the x86_64 reference Open MPI's own
/// offsets, widths and enumerator values, read from the DWARF of its
/// libmpi, libopen-pal and mca_pml_ob1.so.
pub fn ob1_real(out: &Path, prefix: &Path) -> Result<()> {
    let oracle = oracle_under(
        prefix,
        &[
            ("libmpi", "lib/libmpi.so"),
            ("libopen-pal", "lib/libopen-pal.so"),
            ("mca_pml_ob1", "lib/openmpi/mca_pml_ob1.so"),
        ],
    );
    let (l, missing) = SpecLayout::from_oracle(&ob1::SPEC, &oracle);
    // Every question of the decoder is answered by a real build; the
    // enumerators beyond them are this file's, and must be there too.
    if !missing.is_empty() {
        return Err(format!(
            "the reference Open MPI lacks {}: {}",
            missing.len(),
            missing.join(", ")
        )
        .into());
    }
    // 200 real receive requests (about 0.6 KB each) do not fit one seed
    // segment; the synthetic layouts carry that scenario.
    let scenarios: Vec<_> = OB1_SCENARIOS
        .into_iter()
        .filter(|&(_, s)| s != Ob1Scenario::LongSpecific)
        .collect();
    write_real(out, "ompi_ob1_queues", &scenarios, |scenario| {
        ob1_seed(TargetAbi::X86_64, &l, scenario)
    })
}
