//! A process behind gdbserver, read over gdb's remote serial protocol on
//! TCP, as [`TargetMemory`](crate::TargetMemory) with its symbols and types.
//!
//! A debugger that already runs `gdbserver` on each node (`gdbserver
//! --attach :PORT PID`, or `gdbserver --multi :PORT` and an attach by pid)
//! can then use every decoder of this workspace unchanged. No Rust client
//! of the protocol is kept up (the crates are servers, or interactive
//! tools), so the small part a reader needs is written here; the framing is
//! in [`crate::backend::gdb_remote_packet`].
//!
//! What is asked of the server, and only that:
//! - `qSupported` (its `PacketSize` bounds every read, and which of the
//!   requests below it offers), then `QStartNoAckMode` when offered;
//! - `?`, or `vAttach;PID` for a server started with `--multi`, and `qC`
//!   for the process's pid;
//! - `qXfer:exec-file:read` (the executable's path),
//!   `qXfer:libraries-svr4:read` (the shared libraries and their load
//!   biases; without it the dynamic linker's `link_map` list is read
//!   through memory) and `qXfer:auxv:read` (the executable's load bias);
//! - memory: `m addr,len` (hex), or `x addr,len` (binary) when the server
//!   offers `binary-upload+`, split at the server's packet size. Many
//!   small ranges (a process table's strings) are merged into few reads;
//! - `D`: detach at the end, which lets the process run again.
//!
//! Nothing is ever written to the target (no `M`, `X` or `Z` requests),
//! and nothing is resumed except by the detach.
//!
//! The files the libraries name are read from this machine's disk (under
//! a sysroot, if one is given), which suits gdbserver on loopback or on a
//! node that shares the file system; each file's build-id is checked
//! against the copy of its headers in the target's memory, and a
//! different build is left out and reported. Fetching the files through
//! the server (`vFile`) is not done.
//!
//! Every reply is bounded in size and time (a per-reply timeout on the
//! socket), and a reply that does not decode is a typed
//! [`GdbRemoteError`] naming the request.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mpidd_types::TargetAddr;

use crate::backend::gdb_remote_packet::{
    classify, decode_memory_reply, decode_xfer_reply, encode, parse_library_list, Decoder,
    PacketError, RemoteLibrary, Reply, ServerFrame,
};
use crate::limits::Limits;

/// The packet size assumed when the server does not say.
const DEFAULT_PACKET_SIZE: usize = 400;
/// The largest packet size believed, whatever the server claims: it bounds
/// every buffer of a reply.
const MAX_PACKET_SIZE: usize = 1 << 20;
/// The largest `qXfer` object read (a library list of a few thousand
/// objects).
const MAX_XFER_OBJECT: usize = 16 << 20;
/// How many times a damaged packet is sent or asked for again.
const RETRIES: usize = 3;
/// The longest merged read of [`TargetMemory::read_many`](crate::TargetMemory::read_many).
pub(crate) const MERGE_MAX: u64 = 64 << 10;

/// How to reach and read a gdbserver.
#[derive(Clone, Debug)]
pub struct GdbRemoteOptions {
    /// How long one reply may take.
    pub timeout: Duration,
    /// The process to attach with `vAttach`, for a server started with
    /// `--multi`; `None` reads the process the server already has.
    pub attach_pid: Option<i32>,
    /// Where the target's files are on this machine (`/` when `None`).
    pub sysroot: Option<PathBuf>,
    /// Bounds on what is read while opening (the `link_map` walk).
    pub limits: Limits,
}

impl Default for GdbRemoteOptions {
    fn default() -> Self {
        GdbRemoteOptions {
            timeout: Duration::from_secs(10),
            attach_pid: None,
            sysroot: None,
            limits: Limits::default(),
        }
    }
}

/// Why talking to a gdbserver failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GdbRemoteError {
    /// The TCP connection could not be made.
    #[error("cannot connect to gdbserver at {addr}: {cause}")]
    Connect {
        /// The address given.
        addr: String,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// The connection failed while a request was under way.
    #[error("gdbserver, request {request}: {cause}")]
    Io {
        /// The request.
        request: String,
        /// The OS error: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
    /// No reply within the timeout.
    #[error("gdbserver, request {request}: no reply within {after:?}")]
    Timeout {
        /// The request.
        request: String,
        /// The timeout.
        after: Duration,
    },
    /// The server closed the connection.
    #[error("gdbserver, request {request}: the server closed the connection")]
    Closed {
        /// The request.
        request: String,
    },
    /// A reply did not decode.
    #[error("gdbserver, request {request}: {cause}")]
    Packet {
        /// The request.
        request: String,
        /// What was wrong with it: shown in the message, so not also as `source()`.
        cause: PacketError,
    },
    /// The server answered `E nn`.
    #[error("gdbserver refused {request}: error {code:#04x}{}", message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default())]
    Refused {
        /// The request.
        request: String,
        /// The error number.
        code: u8,
        /// The text of an `E.text` reply.
        message: Option<String>,
    },
    /// The server could not read target memory at `addr`.
    #[error("gdbserver cannot read {len} bytes of target memory at {addr}: error {code:#04x}")]
    Memory {
        /// Where the read started.
        addr: TargetAddr,
        /// How many bytes were asked for.
        len: usize,
        /// The server's error number.
        code: u8,
    },
    /// The server does not know a request this reader needs.
    #[error("gdbserver does not support {request}")]
    Unsupported {
        /// The request.
        request: String,
    },
    /// A reply that is not one the request can have.
    #[error("gdbserver, request {request}: unexpected reply {reply:?}")]
    Unexpected {
        /// The request.
        request: String,
        /// The start of the reply.
        reply: String,
    },
    /// A `qXfer` object larger than this reader takes.
    #[error("gdbserver, {object}: larger than {max} bytes")]
    TooLarge {
        /// The object.
        object: String,
        /// The bound.
        max: usize,
    },
    /// The server has no process (a `--multi` server before an attach, or
    /// one whose process exited).
    #[error("gdbserver has no process to read (it answered {reply:?}); start it with --attach PID, or give the pid to attach")]
    NoProcess {
        /// The server's stop reply.
        reply: String,
    },
    /// The target's executable could not be read on this machine.
    #[error("the target's executable {recorded} (on this machine {}): {reason}", path.display())]
    Executable {
        /// The path the server gave.
        recorded: String,
        /// Where it was looked for.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
}

/// What the server said it supports.
#[derive(Clone, Debug, Default)]
struct Features {
    packet_size: usize,
    no_ack: bool,
    multiprocess: bool,
    binary_upload: bool,
    exec_file: bool,
    libraries_svr4: bool,
    auxv: bool,
}

impl Features {
    fn parse(reply: &[u8]) -> Features {
        let mut f = Features {
            packet_size: DEFAULT_PACKET_SIZE,
            ..Features::default()
        };
        for item in String::from_utf8_lossy(reply).split(';') {
            match item {
                "QStartNoAckMode+" => f.no_ack = true,
                "multiprocess+" => f.multiprocess = true,
                "binary-upload+" => f.binary_upload = true,
                "qXfer:exec-file:read+" => f.exec_file = true,
                "qXfer:libraries-svr4:read+" => f.libraries_svr4 = true,
                "qXfer:auxv:read+" => f.auxv = true,
                _ => {
                    if let Some(size) = item.strip_prefix("PacketSize=") {
                        if let Ok(n) = usize::from_str_radix(size, 16) {
                            f.packet_size = n.clamp(64, MAX_PACKET_SIZE);
                        }
                    }
                }
            }
        }
        f
    }
}

/// One TCP connection and its framing state.
struct Connection {
    stream: TcpStream,
    decoder: Decoder,
    no_ack: bool,
    timeout: Duration,
    /// Set when a request failed half-way: the replies no longer match
    /// the requests, so every later request fails with this.
    broken: Option<String>,
}

impl Connection {
    fn io(request: &str, source: std::io::Error) -> GdbRemoteError {
        GdbRemoteError::Io {
            request: request.to_string(),
            cause: source,
        }
    }

    /// Sends one request and returns the reply's payload.
    fn request(&mut self, payload: &str) -> Result<Vec<u8>, GdbRemoteError> {
        if let Some(why) = &self.broken {
            return Err(GdbRemoteError::Io {
                request: payload.to_string(),
                cause: std::io::Error::other(format!(
                    "the connection is unusable after an earlier failure: {why}"
                )),
            });
        }
        let r = self.send(payload).and_then(|()| self.receive(payload));
        if let Err(e) = &r {
            self.broken = Some(e.to_string());
        }
        r
    }

    fn send(&mut self, payload: &str) -> Result<(), GdbRemoteError> {
        let frame = encode(payload.as_bytes());
        for _ in 0..RETRIES {
            self.stream
                .write_all(&frame)
                .map_err(|e| Self::io(payload, e))?;
            if self.no_ack {
                return Ok(());
            }
            match self.next_frame(payload, true)? {
                ServerFrame::Ack => return Ok(()),
                // Damaged on the way: send it again.
                _ => continue,
            }
        }
        Err(GdbRemoteError::Io {
            request: payload.to_string(),
            cause: std::io::Error::other(format!("the server refused the packet {RETRIES} times")),
        })
    }

    fn receive(&mut self, request: &str) -> Result<Vec<u8>, GdbRemoteError> {
        let mut damaged = 0;
        loop {
            match self.next_frame(request, false) {
                Ok(ServerFrame::Packet(p)) => {
                    if !self.no_ack {
                        self.stream
                            .write_all(b"+")
                            .map_err(|e| Self::io(request, e))?;
                    }
                    return Ok(p);
                }
                Ok(_) => continue,
                Err(GdbRemoteError::Packet {
                    cause: PacketError::Checksum { .. },
                    ..
                }) if !self.no_ack && damaged < RETRIES => {
                    damaged += 1;
                    self.stream
                        .write_all(b"-")
                        .map_err(|e| Self::io(request, e))?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The next frame: with `ack`, the next `+` or `-`; without, the next
    /// packet (notifications and stray acknowledgements are passed over).
    fn next_frame(&mut self, request: &str, ack: bool) -> Result<ServerFrame, GdbRemoteError> {
        let deadline = Instant::now() + self.timeout;
        let mut buf = [0u8; 16 << 10];
        loop {
            match self.decoder.next_frame() {
                Ok(Some(f @ (ServerFrame::Ack | ServerFrame::Nak))) if ack => return Ok(f),
                Ok(Some(f @ ServerFrame::Packet(_))) if !ack => return Ok(f),
                Ok(Some(_)) => continue,
                Ok(None) => {}
                Err(source) => {
                    return Err(GdbRemoteError::Packet {
                        request: request.to_string(),
                        cause: source,
                    })
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(GdbRemoteError::Timeout {
                    request: request.to_string(),
                    after: self.timeout,
                });
            }
            self.stream
                .set_read_timeout(Some(left))
                .map_err(|e| Self::io(request, e))?;
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return Err(GdbRemoteError::Closed {
                        request: request.to_string(),
                    })
                }
                Ok(n) => self.decoder.push(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(GdbRemoteError::Timeout {
                        request: request.to_string(),
                        after: self.timeout,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Self::io(request, e)),
            }
        }
    }
}

/// A session with one gdbserver and the one process it debugs: the
/// protocol, without symbols. [`GdbRemoteTarget`](crate::GdbRemoteTarget) builds on it.
///
/// `Send + Sync`: threads that share it take turns on the one connection
/// (a request and its reply are never interleaved with another's).
pub struct GdbRemote {
    conn: Mutex<Connection>,
    features: Features,
    pid: i32,
    detached: bool,
}

impl std::fmt::Debug for GdbRemote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GdbRemote")
            .field("pid", &self.pid)
            .field("features", &self.features)
            .finish_non_exhaustive()
    }
}

impl GdbRemote {
    /// Connects to the gdbserver at `addr` (`HOST:PORT`), agrees on the
    /// protocol and finds its process (attaching `options.attach_pid`
    /// first, for a `--multi` server).
    pub fn connect(addr: &str, options: &GdbRemoteOptions) -> Result<GdbRemote, GdbRemoteError> {
        let connect_err = |cause| GdbRemoteError::Connect {
            addr: addr.to_string(),
            cause,
        };
        let mut last = None;
        let mut stream = None;
        for a in addr.to_socket_addrs().map_err(connect_err)? {
            match TcpStream::connect_timeout(&a, options.timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = stream.ok_or_else(|| {
            connect_err(last.unwrap_or_else(|| std::io::Error::other("no address")))
        })?;
        stream.set_nodelay(true).map_err(connect_err)?;
        stream
            .set_write_timeout(Some(options.timeout))
            .map_err(connect_err)?;
        let mut conn = Connection {
            stream,
            decoder: Decoder::new(MAX_PACKET_SIZE),
            no_ack: false,
            timeout: options.timeout,
            broken: None,
        };
        let supported = conn.request("qSupported:multiprocess+")?;
        let features = Features::parse(&supported);
        // The packet size now known bounds what the decoder holds.
        conn.decoder = Decoder::new(features.packet_size.max(DEFAULT_PACKET_SIZE) * 2 + 64);
        if features.no_ack {
            let reply = conn.request("QStartNoAckMode")?;
            if reply == b"OK" {
                conn.no_ack = true;
            }
        }
        let mut remote = GdbRemote {
            conn: Mutex::new(conn),
            features,
            pid: 0,
            detached: false,
        };
        let stop = match options.attach_pid {
            Some(pid) => remote.request(&format!("vAttach;{pid:x}"))?,
            None => remote.request("?")?,
        };
        if !matches!(stop.first(), Some(b'T' | b'S')) {
            return Err(GdbRemoteError::NoProcess {
                reply: String::from_utf8_lossy(&stop).into_owned(),
            });
        }
        remote.pid = match options.attach_pid {
            Some(pid) => pid,
            None => remote.current_pid()?,
        };
        Ok(remote)
    }

    /// The process's pid on its host.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The largest packet the server takes, as it said.
    pub fn packet_size(&self) -> usize {
        self.features.packet_size
    }

    fn request(&self, payload: &str) -> Result<Vec<u8>, GdbRemoteError> {
        self.conn().request(payload)
    }

    /// The connection, for one request and its reply. A thread that
    /// panicked while holding it may have left half a packet on the
    /// socket: the connection is then marked broken, so every later
    /// request fails with that reason (a detach still resets it).
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| {
            let mut conn = poisoned.into_inner();
            conn.broken
                .get_or_insert_with(|| "a thread panicked during a request".to_string());
            conn
        })
    }

    /// `qC`: `QC` then a thread id, `pPID.TID` when multiprocess.
    fn current_pid(&self) -> Result<i32, GdbRemoteError> {
        let reply = self.request("qC")?;
        let text = String::from_utf8_lossy(&reply).into_owned();
        let unexpected = || GdbRemoteError::Unexpected {
            request: "qC".into(),
            reply: text.chars().take(80).collect(),
        };
        let id = text.strip_prefix("QC").ok_or_else(unexpected)?;
        let pid = match id.strip_prefix('p') {
            Some(rest) => rest.split('.').next().unwrap_or(""),
            // Without multiprocess the thread id of the main thread is
            // the pid.
            None => id,
        };
        i32::from_str_radix(pid, 16).map_err(|_| unexpected())
    }

    /// Reads `len` bytes at `addr`, in as many requests as the server's
    /// packet size needs. Fewer bytes than asked come back when the
    /// server could read only that many; an `E nn` on the first byte is
    /// [`GdbRemoteError::Memory`].
    pub fn read_memory(&self, addr: TargetAddr, len: usize) -> Result<Vec<u8>, GdbRemoteError> {
        let mut out = Vec::with_capacity(len.min(MERGE_MAX as usize));
        let binary = self.features.binary_upload;
        // Room for the frame and the `b` of a binary reply; hex doubles.
        let room = self.features.packet_size.saturating_sub(16).max(16);
        let chunk = if binary { room } else { room / 2 };
        while out.len() < len {
            let at = addr.0.wrapping_add(out.len() as u64);
            let want = (len - out.len()).min(chunk);
            let request = format!("{}{at:x},{want:x}", if binary { 'x' } else { 'm' });
            let reply = self.request(&request)?;
            let got = match decode_memory_reply(&reply, want, binary) {
                Ok(Reply::Data(bytes)) => bytes,
                Ok(Reply::Error { code, .. }) if out.is_empty() => {
                    return Err(GdbRemoteError::Memory {
                        addr: TargetAddr(at),
                        len,
                        code,
                    })
                }
                Ok(Reply::Error { .. }) => break,
                Ok(Reply::Unsupported) => {
                    return Err(GdbRemoteError::Unsupported { request });
                }
                Err(source) => {
                    return Err(GdbRemoteError::Packet {
                        request,
                        cause: source,
                    })
                }
            };
            let short = got.len() < want;
            out.extend_from_slice(&got);
            if short || got.is_empty() {
                break;
            }
        }
        Ok(out)
    }

    /// A whole `qXfer` object, read in pieces of the packet size; `None`
    /// when the server does not offer it.
    pub fn xfer(&self, object: &str, annex: &str) -> Result<Option<Vec<u8>>, GdbRemoteError> {
        let piece = self.features.packet_size.saturating_sub(16).max(16);
        let mut out = Vec::new();
        loop {
            let request = format!("qXfer:{object}:read:{annex}:{:x},{piece:x}", out.len());
            let reply = self.request(&request)?;
            let chunk = match decode_xfer_reply(&reply) {
                Ok(Reply::Data(c)) => c,
                Ok(Reply::Unsupported) => return Ok(None),
                Ok(Reply::Error { code, message }) => {
                    return Err(GdbRemoteError::Refused {
                        request,
                        code,
                        message,
                    })
                }
                Err(source) => {
                    return Err(GdbRemoteError::Packet {
                        request,
                        cause: source,
                    })
                }
            };
            if out.len() + chunk.data.len() > MAX_XFER_OBJECT {
                return Err(GdbRemoteError::TooLarge {
                    object: object.to_string(),
                    max: MAX_XFER_OBJECT,
                });
            }
            out.extend_from_slice(&chunk.data);
            // A `m` with no data would ask for the same offset forever.
            if chunk.last || chunk.data.is_empty() {
                return Ok(Some(out));
            }
        }
    }

    /// The path of the process's executable on its host.
    pub fn exec_file(&self) -> Result<String, GdbRemoteError> {
        if !self.features.exec_file {
            return Err(GdbRemoteError::Unsupported {
                request: "qXfer:exec-file:read".into(),
            });
        }
        let bytes = self
            .xfer("exec-file", &format!("{:x}", self.pid))?
            .ok_or_else(|| GdbRemoteError::Unsupported {
                request: "qXfer:exec-file:read".into(),
            })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The shared libraries, from `qXfer:libraries-svr4:read`; `None` when
    /// the server does not offer it.
    pub fn libraries(&self) -> Result<Option<Vec<RemoteLibrary>>, GdbRemoteError> {
        if !self.features.libraries_svr4 {
            return Ok(None);
        }
        Ok(self
            .xfer("libraries-svr4", "")?
            .map(|xml| parse_library_list(&String::from_utf8_lossy(&xml))))
    }

    /// The auxiliary vector's raw bytes; `None` when not offered.
    pub fn auxv(&self) -> Result<Option<Vec<u8>>, GdbRemoteError> {
        if !self.features.auxv {
            return Ok(None);
        }
        self.xfer("auxv", "")
    }

    /// Detaches: the process runs on, and a server started with
    /// `--attach` exits.
    pub fn detach(mut self) -> Result<(), GdbRemoteError> {
        self.detach_once()
    }

    fn detach_once(&mut self) -> Result<(), GdbRemoteError> {
        if self.detached {
            return Ok(());
        }
        self.detached = true;
        let request = if self.features.multiprocess {
            format!("D;{:x}", self.pid)
        } else {
            "D".to_string()
        };
        // A connection broken by an earlier failure still gets its detach:
        // a fresh request on the same socket, after the stale bytes.
        let mut conn = self.conn();
        conn.broken = None;
        conn.decoder = Decoder::new(MAX_PACKET_SIZE);
        let reply = conn.request(&request)?;
        match classify(&reply) {
            Reply::Data(b"OK") => Ok(()),
            Reply::Error { code, message } => Err(GdbRemoteError::Refused {
                request,
                code,
                message,
            }),
            _ => Err(GdbRemoteError::Unexpected {
                request,
                reply: String::from_utf8_lossy(&reply).chars().take(80).collect(),
            }),
        }
    }
}

impl Drop for GdbRemote {
    /// A session dropped without [`GdbRemote::detach`] (an error, a panic)
    /// still lets its process go.
    fn drop(&mut self) {
        let _ = self.detach_once();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_read_from_qsupported() {
        let f = Features::parse(b"PacketSize=3fff;QPassSignals+;qXfer:libraries-svr4:read+;qXfer:auxv:read+;qXfer:exec-file:read+;QStartNoAckMode+;multiprocess+");
        assert_eq!(f.packet_size, 0x3fff);
        assert!(f.no_ack && f.multiprocess && f.libraries_svr4 && f.auxv && f.exec_file);
        assert!(!f.binary_upload);
        let f = Features::parse(b"PacketSize=ffffffffff");
        assert_eq!(f.packet_size, MAX_PACKET_SIZE);
    }
}
