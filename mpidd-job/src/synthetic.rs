//! Readings of made-up ranks, for tests, examples and the demo: a rank of
//! a job of a given size, its communicators, its queues and its stack,
//! said in MPI's terms (world ranks, tags) rather than as decoder output.

use mpiq_core::model::{
    Communicator, OperationStatus, PendingOperation, ProcessQueues, Protocol, Queue,
};

use crate::reading::{Frame, RankReading, ThreadStack};
use mpidd_read::{ExceptionState, PythonException, PythonFrame};

/// A rank being described.
#[derive(Clone, Debug)]
pub struct SyntheticRank {
    world: i64,
    comms: Vec<Communicator>,
    frames: Vec<Frame>,
    queues_unread: Option<String>,
    exited: bool,
    exception: Option<PythonException>,
    /// Its PMIx namespace and its job's size, as its launcher would say.
    job: Option<(String, i64)>,
}

impl SyntheticRank {
    /// Rank `world` of a job of `size` ranks, with `MPI_COMM_WORLD`.
    pub fn new(world: i64, size: i64) -> Self {
        SyntheticRank {
            world,
            comms: Vec::new(),
            frames: Vec::new(),
            queues_unread: None,
            exited: false,
            exception: None,
            job: None,
        }
        .comm("MPI_COMM_WORLD", &(0..size).collect::<Vec<_>>())
    }

    /// Its launcher named its job `namespace` (PMIx) and told it the job
    /// has `size` ranks: what lets the analysis see ranks missing.
    pub fn job(mut self, namespace: &str, size: i64) -> Self {
        self.job = Some((namespace.to_string(), size));
        self
    }

    /// Its queues could not be read, for this reason: the reading carries
    /// only its stacks.
    pub fn queues_unread(mut self, why: &str) -> Self {
        self.queues_unread = Some(why.to_string());
        self
    }

    /// Its process is gone: nothing of it could be read.
    pub fn exited(mut self) -> Self {
        self.exited = true;
        self
    }

    /// It raised an exception nothing caught, as the reader of its
    /// interpreter's frames reports it
    /// ([`RankReading::python_exception`]): `raised("ValueError", "bad input",
    /// "job.py", "check", 12)`.
    pub fn raised(
        mut self,
        type_name: &str,
        message: &str,
        file: &str,
        function: &str,
        line: u32,
    ) -> Self {
        self.exception = Some(PythonException {
            type_name: type_name.to_string(),
            message: Some(message.to_string()),
            state: ExceptionState::Raised,
            raised_at: Some(PythonFrame {
                function: function.to_string(),
                file: file.to_string(),
                line: Some(line),
                last_of_call: true,
            }),
        });
        self
    }

    /// Adds a communicator with these members (world ranks, in
    /// communicator rank order). The rank must be one of them.
    pub fn comm(mut self, name: &str, members: &[i64]) -> Self {
        let local = members.iter().position(|&m| m == self.world);
        let empty = || Queue::Read {
            operations: Vec::new(),
            truncated: false,
        };
        self.comms.push(Communicator {
            name: name.to_string(),
            size: members.len() as i64,
            local_rank: local.map_or(-1, |l| l as i64),
            unique_id: self.comms.len() as u64,
            group: Some(members.into()),
            context_id: Some(context_of(name)),
            recv_context_id: Some(context_of(name)),
            pending_sends: empty(),
            pending_receives: empty(),
            unexpected_messages: empty(),
        });
        self
    }

    /// # Panics
    ///
    /// When the rank has no communicator `comm`: a mistake in the test
    /// that describes it.
    fn push(
        &mut self,
        comm: &str,
        queue: fn(&mut Communicator) -> &mut Queue,
        op: PendingOperation,
    ) {
        let Some(c) = self.comms.iter_mut().find(|c| c.name == comm) else {
            panic!("synthetic rank {}: no communicator {comm}", self.world);
        };
        if let Queue::Read { operations, .. } = queue(c) {
            operations.push(op);
        }
    }

    fn local(&self, comm: &str, world: i64) -> i64 {
        self.comms
            .iter()
            .find(|c| c.name == comm)
            .and_then(|c| c.group.as_ref()?.iter().position(|&m| m == world))
            .map_or(-1, |l| l as i64)
    }

    /// A posted receive from world rank `from` (−1: any source) with
    /// `tag` (`None`: any tag).
    pub fn receive(mut self, comm: &str, from: i64, tag: Option<i64>) -> Self {
        let local = if from < 0 { -1 } else { self.local(comm, from) };
        let op = operation(local, from, tag, 64);
        self.push(comm, |c| &mut c.pending_receives, op);
        self
    }

    /// A pending nonblocking send to world rank `to`.
    pub fn send(mut self, comm: &str, to: i64, tag: i64, bytes: i64) -> Self {
        let local = self.local(comm, to);
        let mut op = operation(local, to, Some(tag), bytes);
        op.actual_local_rank = local;
        op.actual_global_rank = to;
        op.actual_tag = tag;
        self.push(comm, |c| &mut c.pending_sends, op);
        self
    }

    /// A message from world rank `from` that arrived before any receive
    /// matched it: eager (its data in a library buffer) or a rendezvous
    /// request (its sender still waits).
    pub fn unexpected(
        mut self,
        comm: &str,
        from: i64,
        tag: i64,
        bytes: i64,
        rendezvous: bool,
    ) -> Self {
        let local = self.local(comm, from);
        let mut op = operation(local, from, Some(tag), bytes);
        op.actual_local_rank = local;
        op.actual_global_rank = from;
        op.actual_tag = tag;
        op.actual_length = bytes;
        op.system_buffer = !rendezvous;
        op.protocol = Some(if rendezvous {
            Protocol::Rendezvous
        } else {
            Protocol::Eager
        });
        op.buffer = if rendezvous { 0 } else { 0x1000 };
        self.push(comm, |c| &mut c.unexpected_messages, op);
        self
    }

    /// The main thread's stack, outermost function first (`main`, ...,
    /// the innermost). Functions named `file.c:LINE@name` get a line.
    pub fn stack(mut self, outermost_first: &[&str]) -> Self {
        self.frames = outermost_first
            .iter()
            .rev()
            .enumerate()
            .map(|(i, spec)| {
                let (place, name) = match spec.split_once('@') {
                    Some((place, name)) => (Some(place), name),
                    None => (None, *spec),
                };
                let (file, line) = match place.and_then(|p| p.split_once(':')) {
                    Some((f, l)) => (Some(f.to_string()), l.parse().ok()),
                    None => (None, None),
                };
                let own = file.is_some() || name == "main";
                Frame {
                    pc: 0x40_1000 + 0x10 * i as u64,
                    function: Some(name.to_string()),
                    name_guessed: false,
                    offset: 0x10,
                    object: Some(if own { "app" } else { "libmpi.so.12" }.to_string()),
                    file,
                    line,
                    python: false,
                }
            })
            .collect();
        self
    }

    /// The reading of this rank.
    pub fn reading(self) -> RankReading {
        let pid = 1000 + self.world as i32;
        if self.exited {
            let mut gone = RankReading::exited(
                format!("synthetic rank {}", self.world),
                Some(pid),
                Some("synthetic".to_string()),
            );
            gone.world_rank = Some(self.world);
            gone.world_rank_source = Some("synthetic".to_string());
            gone.pmix_namespace = self.job.as_ref().map(|(ns, _)| ns.clone());
            gone.job_size = self.job.as_ref().map(|&(_, n)| n);
            return gone;
        }
        let queues = match self.queues_unread {
            Some(_) => None,
            None => Some(ProcessQueues {
                source: "synthetic".to_string(),
                global_rank: self.world,
                communicators: self.comms,
                truncated: false,
                diagnostics: Vec::new(),
            }),
        };
        RankReading {
            target: format!("synthetic rank {}", self.world),
            pid: Some(pid),
            host: Some("synthetic".to_string()),
            world_rank: Some(self.world),
            world_rank_source: Some("synthetic".to_string()),
            pmix_namespace: self.job.as_ref().map(|(ns, _)| ns.clone()),
            pmix_rank: self.job.as_ref().map(|_| self.world),
            job_size: self.job.as_ref().map(|&(_, n)| n),
            executable: Some("app".to_string()),
            queues,
            queues_unread: self.queues_unread,
            queues_provenance: None,
            threads: if self.frames.is_empty() {
                Vec::new()
            } else {
                vec![ThreadStack {
                    tid: pid,
                    frames: self.frames,
                    truncated: false,
                    error: None,
                }]
            },
            errors: Vec::new(),
            python: None,
            python_exception: self.exception,
            python_statement: None,
            python_call: None,
            exited: false,
            timings: None,
        }
    }
}

fn operation(local: i64, world: i64, tag: Option<i64>, bytes: i64) -> PendingOperation {
    PendingOperation {
        status: OperationStatus::Pending,
        desired_local_rank: local,
        desired_global_rank: world,
        tag_wild: tag.is_none(),
        desired_tag: tag.unwrap_or(-1),
        desired_length: bytes,
        system_buffer: false,
        buffer: 0x2000,
        actual_local_rank: -1,
        actual_global_rank: -1,
        actual_tag: -1,
        actual_length: -1,
        extra_text: Vec::new(),
        desired_count: None,
        protocol: None,
        synchronous: None,
    }
}

/// The same context id for a communicator name in every rank, as MPICH
/// agrees on one among a communicator's members; `MPI_COMM_WORLD`'s is 0.
fn context_of(name: &str) -> i64 {
    if name == "MPI_COMM_WORLD" {
        return 0;
    }
    let h = name
        .bytes()
        .fold(0i64, |h, b| (h * 31 + i64::from(b)) & 0x3fff);
    (h + 1) << 1
}
