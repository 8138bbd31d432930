//! Laying out the bytes of one rank: the objects every rank maps, and the
//! core of each, written field by field from the layouts, never through
//! the decoder's code.

use mpidd_read::synthetic_process::{
    frame_pointer_stack, x86_64_registers, BuiltObject, SyntheticCore, SyntheticObject,
    CALL_RETURN_OFFSET, STOPPED_PC_OFFSET,
};
use mpidd_types::{ByteOrder, TargetAddr};

use super::layout;
use super::spec::{FrameSpec, Hostile, HungJobSpec, HungRankSpec, Object};
use super::{SyntheticCoresError, EXECUTABLE, LIBC, LIBMPI};

/// MPICH's `MPI_ANY_SOURCE`, as it sits in a posted receive's match.
const MPICH_ANY_SOURCE: i64 = -2;
/// MPICH's `MPI_ANY_TAG`.
const MPICH_ANY_TAG: i64 = -1;
/// MPICH's handle of `MPI_BYTE`: builtin, size 1. Lengths then come out in
/// bytes.
const MPI_BYTE: u64 = 0x4c00_010d;
/// `MPI_MAX_OBJECT_NAME`.
const COMM_NAME_LEN: usize = 128;
/// The version MPICH's strings claim.
const MPICH_VERSION: &str = "4.0.2";
const MPICH_DEVICE: &str = "ch3:nemesis";

/// Load biases of the objects, the same in every rank (no ASLR), and where
/// each rank's heap and stack are.
const EXE_BIAS: u64 = 0x5555_5555_0000;
const LIBMPI_BIAS: u64 = 0x7f00_2000_0000;
const LIBC_BIAS: u64 = 0x7f00_3000_0000;
const HEAP: u64 = 0x7f00_1000_0000;
const STACK: u64 = 0x7ffd_0000_0000;
/// Where the hostile rank's stack pointer points: nothing is mapped there.
const UNMAPPED: u64 = 0x7ffe_dead_0000;

/// Bytes at target addresses `[base, base + len)`, written field by field
/// in the target's byte order; allocations grow it.
pub(super) struct Region {
    order: ByteOrder,
    base: u64,
    bytes: Vec<u8>,
}

impl Region {
    fn new(order: ByteOrder, base: u64, len: usize) -> Self {
        Region {
            order,
            base,
            bytes: vec![0; len],
        }
    }

    /// `size` zeroed bytes at the next `align`ed address.
    fn alloc(&mut self, size: u64, align: u64) -> u64 {
        let start = (self.bytes.len() as u64).div_ceil(align) * align;
        self.bytes.resize((start + size) as usize, 0);
        self.base + start
    }

    /// The low `width` bytes of `value` at `addr`.
    fn put(&mut self, addr: u64, value: u64, width: usize) {
        let le = value.to_le_bytes();
        let i = (addr - self.base) as usize;
        let out = &mut self.bytes[i..i + width];
        out.copy_from_slice(&le[..width]);
        if self.order == ByteOrder::Big {
            out.reverse();
        }
    }

    fn put_str(&mut self, addr: u64, s: &str) {
        let i = (addr - self.base) as usize;
        self.bytes[i..i + s.len()].copy_from_slice(s.as_bytes());
    }
}

/// A communicator of one rank, as written.
pub(super) struct Comm<'a> {
    pub(super) name: &'a str,
    pub(super) members: Vec<i64>,
    pub(super) context: u64,
}

/// The libraries' and program's functions, and the globals of libmpi.
pub(super) struct Objects {
    pub(super) exe: BuiltObject,
    pub(super) libmpi: BuiltObject,
    pub(super) libc: Option<BuiltObject>,
}

impl Objects {
    pub(super) fn build(spec: &HungJobSpec) -> Result<Objects, SyntheticCoresError> {
        let abi = spec.abi;
        let mut exe = SyntheticObject::executable(abi);
        let mut libmpi = SyntheticObject::library(abi)
            .global("MPII_Version_string", 32, 8, false)
            .global("MPII_Version_device", 32, 8, false)
            .global("MPIR_All_communicators", layout::LIST_SIZE, 8, false)
            .global("MPIR_Sendq_head", 8, 8, false)
            // Local symbols in a real build: only .symtab has them.
            .global("MPID_Recvq_posted_head_ptr", 8, 8, true)
            .global("MPID_Recvq_unexpected_head_ptr", 8, 8, true)
            .global("recvq_posted", 8, 8, true)
            .global("recvq_unexpected", 8, 8, true);
        let mut libc = SyntheticObject::library(abi);
        let mut any_libc = false;
        for frame in spec.ranks.iter().flat_map(|r| &r.stack) {
            let source = frame.source.as_ref().map(|(f, l)| (f.as_str(), *l));
            match frame.object {
                Object::Program => exe = exe.function(&frame.function, source),
                Object::Mpi => libmpi = libmpi.function(&frame.function, source),
                Object::Libc => {
                    any_libc = true;
                    libc = libc.function(&frame.function, source);
                }
            }
        }
        Ok(Objects {
            exe: exe.build()?,
            libmpi: libmpi.build()?,
            libc: if any_libc { Some(libc.build()?) } else { None },
        })
    }

    fn object(&self, which: Object) -> Option<(&BuiltObject, u64)> {
        match which {
            Object::Program => Some((&self.exe, EXE_BIAS)),
            Object::Mpi => Some((&self.libmpi, LIBMPI_BIAS)),
            Object::Libc => self.libc.as_ref().map(|l| (l, LIBC_BIAS)),
        }
    }

    /// The run-time address of a libmpi global.
    fn global(&self, name: &str) -> u64 {
        self.libmpi.global(name).map_or(0, |(a, _)| a) + LIBMPI_BIAS
    }

    /// The run-time address of `offset` bytes into a function.
    fn code(&self, frame: &FrameSpec, offset: u64) -> u64 {
        self.object(frame.object)
            .and_then(|(o, bias)| Some(o.function(&frame.function)?.start + bias + offset))
            .unwrap_or(0)
    }
}

/// The core of one rank.
pub(super) fn rank_core(
    spec: &HungJobSpec,
    rank: &HungRankSpec,
    comms: &[Comm<'_>],
    objects: &Objects,
    path: &dyn Fn(&str) -> String,
) -> Result<SyntheticCore, SyntheticCoresError> {
    use layout::*;
    let abi = spec.abi;
    let order = abi.byte_order;
    let me = rank.world_rank;
    let pid = 10_000 + me as i32;
    let mut heap = Region::new(order, HEAP, 0);
    let mine: Vec<&Comm<'_>> = comms.iter().filter(|c| c.members.contains(&me)).collect();
    let find = |name: &str| -> Result<&Comm<'_>, SyntheticCoresError> {
        mine.iter()
            .copied()
            .find(|c| c.name == name)
            .ok_or_else(|| {
                SyntheticCoresError::Spec(format!("rank {me} is not in a communicator {name}"))
            })
    };
    let local = |c: &Comm<'_>, world: i64| -> Result<i64, SyntheticCoresError> {
        c.members
            .iter()
            .position(|&m| m == world)
            .map(|p| p as i64)
            .ok_or_else(|| SyntheticCoresError::Spec(format!("rank {world} is not in {}", c.name)))
    };

    // Communicators: the named ones first (MPICH puts new ones at the
    // head of the list), MPI_COMM_WORLD last. World ranks come from the
    // world's virtual connection table and from the others' groups, so
    // both ways the decoder has are used.
    let mut comm_addrs = Vec::new();
    for c in &mine {
        let at = heap.alloc(COMM_SIZE, 8);
        let name: String = c.name.chars().take(COMM_NAME_LEN - 1).collect();
        heap.put_str(at + COMM_NAME, &name);
        heap.put(at + COMM_CONTEXT, c.context, 2);
        heap.put(at + COMM_RECVCONTEXT, c.context, 2);
        let size = c.members.len() as u64;
        heap.put(at + COMM_REMOTE_SIZE, size, 4);
        heap.put(at + COMM_LOCAL_SIZE, size, 4);
        heap.put(at + COMM_RANK, local(c, me)? as u64, 4);
        heap.put(at + COMM_KIND, 0, 4);
        if c.context == 0 {
            let vcrt = heap.alloc(VCRT_TABLE + 8 * size, 8);
            let vcs = heap.alloc(VC_SIZE * size, 8);
            heap.put(vcrt + VCRT_SIZE_FIELD, size, 4);
            for (i, &m) in c.members.iter().enumerate() {
                let vc = vcs + VC_SIZE * i as u64;
                heap.put(vc + VC_PG_RANK, m as u64, 4);
                heap.put(vcrt + VCRT_TABLE + 8 * i as u64, vc, 8);
            }
            heap.put(at + COMM_DEV + CH3_COMM_VCRT, vcrt, 8);
        } else {
            let group = heap.alloc(GROUP_SIZE, 8);
            let pmap = heap.alloc(PMAP_SIZE * size, 8);
            heap.put(group + GROUP_SIZE_FIELD, size, 4);
            heap.put(group + GROUP_PMAP, pmap, 8);
            for (i, &m) in c.members.iter().enumerate() {
                heap.put(pmap + PMAP_SIZE * i as u64 + PMAP_LPID, m as u64, 8);
            }
            heap.put(at + COMM_LOCAL_GROUP, group, 8);
        }
        comm_addrs.push((c.context, at));
    }
    comm_addrs.sort_by_key(|&(context, _)| std::cmp::Reverse(context));
    for pair in comm_addrs.windows(2) {
        heap.put(pair[0].1 + COMM_NEXT, pair[1].1, 8);
    }
    let comm_head = comm_addrs.first().map_or(0, |&(_, a)| a);

    // A request of the receive queues: `rank` and `context` as its match
    // holds them.
    let request = |heap: &mut Region, tag: i64, rank: i64, context: u64| {
        let at = heap.alloc(REQ_SIZE, 8);
        let dev = at + REQ_DEV;
        heap.put(at + REQ_CC, 1, 4);
        heap.put(dev + DREQ_MATCH + MATCH_PARTS + PARTS_TAG, tag as u64, 4);
        heap.put(dev + DREQ_MATCH + MATCH_PARTS + PARTS_RANK, rank as u64, 2);
        heap.put(dev + DREQ_MATCH + MATCH_PARTS + PARTS_CONTEXT, context, 2);
        heap.put(dev + DREQ_DATATYPE, MPI_BYTE, 4);
        at
    };
    let link = |heap: &mut Region, list: &[u64], next: u64| {
        for pair in list.windows(2) {
            heap.put(pair[0] + next, pair[1], 8);
        }
        list.first().copied().unwrap_or(0)
    };

    let mut posted = Vec::new();
    for r in &rank.receives {
        let c = find(&r.comm)?;
        let source = match r.source {
            Some(w) => local(c, w)?,
            None => MPICH_ANY_SOURCE,
        };
        let at = request(&mut heap, r.tag.unwrap_or(MPICH_ANY_TAG), source, c.context);
        let buf = heap.alloc(r.bytes.clamp(1, 64), 8);
        heap.put(at + REQ_DEV + DREQ_USER_BUF, buf, 8);
        heap.put(at + REQ_DEV + DREQ_USER_COUNT, r.bytes, 8);
        posted.push(at);
    }
    if rank.hostile == Some(Hostile::LoopingPostedQueue) {
        while posted.len() < 2 {
            posted.push(request(&mut heap, 0, 0, 0));
        }
        let (first, last) = (posted[0], posted[posted.len() - 1]);
        heap.put(last + REQ_NEXT, first, 8);
    }
    let posted_head = link(&mut heap, &posted, REQ_NEXT);

    let mut unexpected = Vec::new();
    for u in &rank.unexpected {
        let c = find(&u.comm)?;
        let at = request(&mut heap, u.tag, local(c, u.source)?, c.context);
        heap.put(at + REQ_DEV + DREQ_RECV_DATA_SZ, u.bytes, 8);
        // The message kind in MPICH's `dev.state` (mpidimpl.h): 1 for an
        // eager message, 2 for a rendezvous request-to-send.
        heap.put(
            at + REQ_DEV + DREQ_STATE,
            if u.rendezvous { 2 } else { 1 },
            4,
        );
        if !u.rendezvous {
            let data = heap.alloc(u.bytes.clamp(1, 64), 8);
            heap.put(at + REQ_DEV + DREQ_TMPBUF, data, 8);
        }
        unexpected.push(at);
    }
    let unexpected_head = link(&mut heap, &unexpected, REQ_NEXT);

    let mut sendq = Vec::new();
    for s in &rank.sends {
        let c = find(&s.comm)?;
        let sreq = request(&mut heap, s.tag, 0, c.context);
        let buf = heap.alloc(s.bytes.clamp(1, 64), 8);
        heap.put(sreq + REQ_DEV + DREQ_USER_BUF, buf, 8);
        heap.put(sreq + REQ_DEV + DREQ_USER_COUNT, s.bytes, 8);
        let at = heap.alloc(SENDQ_SIZE, 8);
        heap.put(at + SENDQ_SREQ, sreq, 8);
        heap.put(at + SENDQ_TAG, s.tag as u64, 4);
        heap.put(at + SENDQ_RANK, local(c, s.dest)? as u64, 4);
        heap.put(at + SENDQ_CONTEXT, c.context, 4);
        sendq.push(at);
    }
    let sendq_head = link(&mut heap, &sendq, SENDQ_NEXT);

    // libmpi's data segment as this rank has it.
    let data = objects.libmpi.data();
    let mut globals = Region::new(
        order,
        data.start + LIBMPI_BIAS,
        (data.end - data.start) as usize,
    );
    let g = |name: &str| objects.global(name);
    globals.put_str(g("MPII_Version_string"), MPICH_VERSION);
    globals.put_str(g("MPII_Version_device"), MPICH_DEVICE);
    globals.put(g("MPIR_All_communicators") + LIST_SEQ, 1, 4);
    globals.put(g("MPIR_All_communicators") + LIST_HEAD, comm_head, 8);
    globals.put(g("MPID_Recvq_posted_head_ptr"), g("recvq_posted"), 8);
    globals.put(g("recvq_posted"), posted_head, 8);
    globals.put(
        g("MPID_Recvq_unexpected_head_ptr"),
        g("recvq_unexpected"),
        8,
    );
    globals.put(g("recvq_unexpected"), unexpected_head, 8);
    globals.put(g("MPIR_Sendq_head"), sendq_head, 8);

    let mut core = SyntheticCore::new(abi, pid);
    core.map_object(&path(EXECUTABLE), &objects.exe, EXE_BIAS);
    core.map_object(&path(LIBMPI), &objects.libmpi, LIBMPI_BIAS);
    if let Some(libc) = &objects.libc {
        core.map_object(&path(LIBC), libc, LIBC_BIAS);
    }
    core.map(TargetAddr(globals.base), globals.bytes);
    if !heap.bytes.is_empty() {
        core.map(TargetAddr(heap.base), heap.bytes);
    }
    if let Some((innermost, callers)) = rank.stack.split_last() {
        let pc = objects.code(innermost, STOPPED_PC_OFFSET);
        let returns: Vec<u64> = callers
            .iter()
            .rev()
            .map(|f| objects.code(f, CALL_RETURN_OFFSET))
            .collect();
        let stack = frame_pointer_stack(abi, STACK, pc, &returns);
        if rank.hostile == Some(Hostile::UnmappedStackPointer) {
            core.thread(x86_64_registers(pid, pc, UNMAPPED, UNMAPPED + 0x20));
        } else {
            core.thread(stack.registers(pid));
            core.map(stack.base, stack.bytes);
        }
    }
    Ok(core)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_write_in_the_targets_order() {
        let mut r = Region::new(ByteOrder::Big, 0x100, 8);
        r.put(0x100, 0x0102, 2);
        assert_eq!(&r.bytes[..2], &[1, 2]);
        let mut r = Region::new(ByteOrder::Little, 0x100, 8);
        r.put(0x104, 0x0102, 2);
        assert_eq!(&r.bytes[4..6], &[2, 1]);
    }
}
