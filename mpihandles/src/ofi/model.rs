//! What the reader gives of one libfabric endpoint: its posted receives,
//! its unexpected messages and its sends in flight, as the provider keeps
//! them, in libfabric's terms (64-bit tags and ignore masks, `fi_addr_t`
//! sources in the endpoint's address vector), not yet in any MPI's.

use mpidd_types::TargetAddr;
use serde::Serialize;

/// The software provider whose queues were read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum OfiProvider {
    /// `shm`: its own shared receive context (`struct smr_srx_ctx`).
    Shm,
    /// `ofi_rxm`, the RDM layer over a message provider (`tcp;ofi_rxm`,
    /// `verbs;ofi_rxm`): its endpoint's receive queues
    /// (`struct rxm_recv_queue`).
    Rxm,
}

impl OfiProvider {
    /// The name libfabric's provider record gives it (`fi_provider.name`).
    pub fn name(self) -> &'static str {
        match self {
            OfiProvider::Shm => "shm",
            OfiProvider::Rxm => "ofi_rxm",
        }
    }
}

/// What one libfabric endpoint (`struct fid_ep *`) holds of its traffic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OfiEndpointQueues {
    /// The endpoint read.
    pub endpoint: TargetAddr,
    /// Its provider.
    pub provider: OfiProvider,
    /// Receives posted and not matched yet, tagged then untagged, each in
    /// posting order (the provider's queue order, which is its matching
    /// order).
    pub posted: Vec<OfiPostedReceive>,
    /// Messages that arrived before a receive matched them, tagged then
    /// untagged, each in arrival order.
    pub unexpected: Vec<OfiUnexpected>,
    /// Sends the provider keeps until the receiver takes their data (shm's
    /// sends through CMA, mmap or segments; rxm's transmit buffers not
    /// yet completed, rendezvous requests among them), in the order of its
    /// table or pool.
    pub sends: Vec<OfiSend>,
    /// What could not be read, and why.
    pub notes: Vec<String>,
}

/// A receive posted to the endpoint (`fi_trecv`, `fi_recv`) and not
/// matched yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OfiPostedReceive {
    /// The provider's receive entry (`smr_rx_entry *`, `rxm_recv_entry *`).
    pub entry: TargetAddr,
    /// Posted with `fi_trecv` (tagged); `false` for `fi_recv`.
    pub tagged: bool,
    /// The tag matched, where the ignore mask's bits are clear.
    pub tag: u64,
    /// The ignore mask: a set bit matches either value of the tag's bit.
    pub ignore: u64,
    /// The source it receives from (an `fi_addr_t` of the endpoint's
    /// address vector); `None` for any source (`FI_ADDR_UNSPEC`).
    pub source: Option<u64>,
    /// The first buffer.
    pub buffer: u64,
    /// The length of all its buffers, in bytes.
    pub length: u64,
    /// The context the caller passed (`void *context`): what MPI libraries
    /// point at their own request with.
    pub context: TargetAddr,
}

/// How an unexpected message or a send carries its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum OfiProtocol {
    /// shm: in the command itself (`smr_src_inline`).
    Inline,
    /// shm: in an inject buffer of the receiver's region (`smr_src_inject`).
    Inject,
    /// shm: in the sender's memory, read across processes (CMA,
    /// `smr_src_iov`); the sender waits.
    Iov,
    /// shm: in a file both map (`smr_src_mmap`); the sender waits.
    Mmap,
    /// shm: in segments through the region's buffers (`smr_src_sar`); the
    /// sender waits.
    Segmented,
    /// shm: through a device's IPC handle (`smr_src_ipc`).
    Ipc,
    /// rxm: with the packet (`rxm_ctrl_eager`).
    Eager,
    /// rxm: the first of several segments (`rxm_ctrl_seg`).
    FirstSegment,
    /// rxm: only a request to send came (`rxm_ctrl_rndv_req`); the data
    /// stays with the sender, which waits.
    Rendezvous,
    /// A value this reader does not know, as found.
    Unknown(u64),
}

/// A message that arrived before any receive matched it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OfiUnexpected {
    /// The provider's record of it (`smr_rx_entry *`, `rxm_rx_buf *`).
    pub entry: TargetAddr,
    /// Sent with `fi_tsend` (tagged); `false` for `fi_send`.
    pub tagged: bool,
    /// The sender's tag (0 for an untagged message).
    pub tag: u64,
    /// Its sender (an `fi_addr_t` of the endpoint's address vector), when
    /// the sender is in it.
    pub source: Option<u64>,
    /// The message's length in bytes, as its header announces it.
    pub length: u64,
    /// How its data comes.
    pub protocol: OfiProtocol,
}

/// A send that has not completed: the receiver has not taken its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OfiSend {
    /// The provider's send entry (`smr_tx_entry *`, `rxm_tx_buf *`).
    pub entry: TargetAddr,
    /// Sent with `fi_tsend`.
    pub tagged: bool,
    /// The tag sent.
    pub tag: u64,
    /// Its length in bytes.
    pub length: u64,
    /// The first buffer, where the provider keeps it (shm does; rxm's
    /// transmit buffer holds a copy of an eager message, or the
    /// registered region of a rendezvous one, not the caller's address).
    pub buffer: Option<u64>,
    /// The context the caller passed.
    pub context: TargetAddr,
    /// Its destination (an `fi_addr_t` of the endpoint's address vector),
    /// when the address vector maps the provider's peer to one (shm); rxm's
    /// transmit buffer does not say.
    pub destination: Option<u64>,
    /// How its data goes.
    pub protocol: OfiProtocol,
}

/// An `fi_addr_t` as a source: `None` for `FI_ADDR_UNSPEC`.
pub(crate) fn source(fi_addr: u64) -> Option<u64> {
    (fi_addr != super::flags::FI_ADDR_UNSPEC).then_some(fi_addr)
}
