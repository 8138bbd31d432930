//! What a synthetic hung job is: its ranks, each with its communicators,
//! pending operations and call chain, and the jobs the demo and the
//! benchmarks write.

use mpidd_types::TargetAbi;

/// Which object a function is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Object {
    /// The program ([`EXECUTABLE`](super::EXECUTABLE)).
    Program,
    /// The MPI library ([`LIBMPI`](super::LIBMPI)).
    Mpi,
    /// The C library ([`LIBC`](super::LIBC)).
    Libc,
}

/// One frame of a call chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// The function.
    pub function: String,
    /// Its object.
    pub object: Object,
    /// Its source file and line (DWARF), if any. A function has one line
    /// in the whole job: the first rank that names it decides.
    pub source: Option<(String, u32)>,
}

impl FrameSpec {
    fn new(function: &str, object: Object) -> Self {
        FrameSpec {
            function: function.to_string(),
            object,
            source: None,
        }
    }

    /// A function of the program.
    pub fn program(function: &str) -> Self {
        FrameSpec::new(function, Object::Program)
    }

    /// A function of the MPI library.
    pub fn mpi(function: &str) -> Self {
        FrameSpec::new(function, Object::Mpi)
    }

    /// A function of the C library.
    pub fn libc(function: &str) -> Self {
        FrameSpec::new(function, Object::Libc)
    }

    /// The same frame with a source line.
    pub fn at(mut self, file: &str, line: u32) -> Self {
        self.source = Some((file.to_string(), line));
        self
    }

    /// The chain of a rank blocked in MPI call `call` (`MPI_Recv`),
    /// outermost first: `_start → __libc_start_main → main →` `call` `→
    /// MPIDI_CH3I_Progress → poll`.
    pub fn in_mpi(call: &str) -> Vec<FrameSpec> {
        vec![
            FrameSpec::program("_start"),
            FrameSpec::libc("__libc_start_main"),
            FrameSpec::program("main").at("demo.c", 30),
            FrameSpec::mpi(call),
            FrameSpec::mpi("MPIDI_CH3I_Progress"),
            FrameSpec::libc("poll"),
        ]
    }

    /// The chain of a rank running its own code, outermost first: `_start
    /// → __libc_start_main → main → function` at `file:line`.
    pub fn computing(function: &str, file: &str, line: u32) -> Vec<FrameSpec> {
        vec![
            FrameSpec::program("_start"),
            FrameSpec::libc("__libc_start_main"),
            FrameSpec::program("main").at("demo.c", 30),
            FrameSpec::program(function).at(file, line),
        ]
    }
}

/// A communicator besides `MPI_COMM_WORLD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HungCommSpec {
    /// Its name.
    pub name: String,
    /// Its members' world ranks, in communicator rank order.
    pub members: Vec<i64>,
}

/// A posted receive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiveSpec {
    /// The communicator's name.
    pub comm: String,
    /// The source's world rank; `None` for `MPI_ANY_SOURCE`.
    pub source: Option<i64>,
    /// The tag; `None` for `MPI_ANY_TAG`.
    pub tag: Option<i64>,
    /// The receive buffer's length in bytes.
    pub bytes: u64,
}

/// A message that arrived before a receive matched it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnexpectedSpec {
    /// The communicator's name.
    pub comm: String,
    /// The sender's world rank.
    pub source: i64,
    /// The tag.
    pub tag: i64,
    /// Its length in bytes.
    pub bytes: u64,
    /// A rendezvous request (no data yet, the sender waits) rather than
    /// eager data held in a library buffer.
    pub rendezvous: bool,
}

/// A nonblocking send not yet completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendSpec {
    /// The communicator's name.
    pub comm: String,
    /// The destination's world rank.
    pub dest: i64,
    /// The tag.
    pub tag: i64,
    /// Its length in bytes.
    pub bytes: u64,
}

/// Damage done to a rank's core, for tests of hostile input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// The posted receive queue's last request points back to its first.
    LoopingPostedQueue,
    /// The thread's stack and frame pointers point into unmapped memory.
    UnmappedStackPointer,
}

/// One rank of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HungRankSpec {
    /// Its world rank.
    pub world_rank: i64,
    /// Its posted receives, in queue order.
    pub receives: Vec<ReceiveSpec>,
    /// Its unexpected messages, in queue order.
    pub unexpected: Vec<UnexpectedSpec>,
    /// Its nonblocking sends, in queue order.
    pub sends: Vec<SendSpec>,
    /// Its main thread's call chain, outermost first; empty for a thread
    /// without registers.
    pub stack: Vec<FrameSpec>,
    /// Damage to its core.
    pub hostile: Option<Hostile>,
}

impl HungRankSpec {
    /// World rank `world_rank`, with empty queues and no stack.
    pub fn new(world_rank: i64) -> Self {
        HungRankSpec {
            world_rank,
            receives: Vec::new(),
            unexpected: Vec::new(),
            sends: Vec::new(),
            stack: Vec::new(),
            hostile: None,
        }
    }

    /// Adds a posted receive from world rank `source` (`None`: any) with
    /// `tag` (`None`: any).
    pub fn receive(
        mut self,
        comm: &str,
        source: Option<i64>,
        tag: Option<i64>,
        bytes: u64,
    ) -> Self {
        self.receives.push(ReceiveSpec {
            comm: comm.to_string(),
            source,
            tag,
            bytes,
        });
        self
    }

    /// Adds an unexpected message from world rank `source`.
    pub fn unexpected(
        mut self,
        comm: &str,
        source: i64,
        tag: i64,
        bytes: u64,
        rendezvous: bool,
    ) -> Self {
        self.unexpected.push(UnexpectedSpec {
            comm: comm.to_string(),
            source,
            tag,
            bytes,
            rendezvous,
        });
        self
    }

    /// Adds a pending nonblocking send to world rank `dest`.
    pub fn send(mut self, comm: &str, dest: i64, tag: i64, bytes: u64) -> Self {
        self.sends.push(SendSpec {
            comm: comm.to_string(),
            dest,
            tag,
            bytes,
        });
        self
    }

    /// Sets the main thread's call chain, outermost first.
    pub fn stack(mut self, frames: Vec<FrameSpec>) -> Self {
        self.stack = frames;
        self
    }

    /// Damages the core.
    pub fn hostile(mut self, how: Hostile) -> Self {
        self.hostile = Some(how);
        self
    }
}

/// A whole job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HungJobSpec {
    /// The target ABI: 64-bit, either byte order. Stacks are unwound only
    /// on x86-64 (little-endian); a big-endian job is an s390x one, whose
    /// cores have queues but no decoded registers.
    pub abi: TargetAbi,
    /// The size of `MPI_COMM_WORLD`.
    pub world_size: i64,
    /// The communicators besides `MPI_COMM_WORLD`.
    pub communicators: Vec<HungCommSpec>,
    /// The ranks written (not necessarily all of the world).
    pub ranks: Vec<HungRankSpec>,
}

impl HungJobSpec {
    /// An x86-64 job of `world_size` ranks, none described yet.
    pub fn new(world_size: i64) -> Self {
        HungJobSpec {
            abi: TargetAbi::X86_64,
            world_size,
            communicators: Vec::new(),
            ranks: Vec::new(),
        }
    }

    /// Adds a communicator of these world ranks, in communicator rank
    /// order.
    pub fn comm(mut self, name: &str, members: &[i64]) -> Self {
        self.communicators.push(HungCommSpec {
            name: name.to_string(),
            members: members.to_vec(),
        });
        self
    }

    /// Adds a rank.
    pub fn rank(mut self, rank: HungRankSpec) -> Self {
        self.ranks.push(rank);
        self
    }
}

/// The job of `mpidd demo`: six ranks in two communicators besides the
/// world, hung in a cycle across two of them while a chain of waits ends
/// at a rank that computes.
///
/// - 0 receives from 1 on `MPI_COMM_WORLD` (tag 7);
/// - 1 receives from 2 on `halo` (tag 3);
/// - 2 receives from 0 on `halo` (tag 3): the cycle 0 → 1 → 2 → 0;
/// - 3 receives from 4 on `pipeline` (any tag), with an eager message
///   from 5 that no receive matches;
/// - 4 is blocked sending to 5: its rendezvous request waits unexpected
///   at 5;
/// - 5 computes (`compute at solver.c:42`), outside MPI.
pub fn demo_job() -> HungJobSpec {
    HungJobSpec::new(6)
        .comm("halo", &[0, 1, 2])
        .comm("pipeline", &[3, 4, 5])
        .rank(
            HungRankSpec::new(0)
                .receive("MPI_COMM_WORLD", Some(1), Some(7), 4096)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(1)
                .receive("halo", Some(2), Some(3), 8192)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(2)
                .receive("halo", Some(0), Some(3), 8192)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(
            HungRankSpec::new(3)
                .receive("pipeline", Some(4), None, 1024)
                .unexpected("pipeline", 5, 99, 16, false)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
        .rank(HungRankSpec::new(4).stack(FrameSpec::in_mpi("MPI_Send")))
        .rank(
            HungRankSpec::new(5)
                .unexpected("pipeline", 4, 11, 1 << 20, true)
                .stack(FrameSpec::computing("compute", "solver.c", 42)),
        )
}

/// A ring of `n` ranks, each blocked receiving from the next on
/// `MPI_COMM_WORLD` (one cycle through them all), for benchmarks.
pub fn ring_job(n: i64) -> HungJobSpec {
    (0..n).fold(HungJobSpec::new(n), |job, r| {
        job.rank(
            HungRankSpec::new(r)
                .receive("MPI_COMM_WORLD", Some((r + 1) % n), Some(1), 256)
                .stack(FrameSpec::in_mpi("MPI_Recv")),
        )
    })
}

/// Function names of a chain, innermost first, as an unwinder gives them.
pub fn innermost_first(frames: &[FrameSpec]) -> Vec<String> {
    frames.iter().rev().map(|f| f.function.clone()).collect()
}
