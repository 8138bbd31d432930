//! libfabric's constants the readers compare with, which no layout source
//! holds: the public ABI's (`include/rdma/fabric.h`, the same in every
//! release since 1.0) and libfabric 1.17's private ones.

/// `FI_CLASS_EP`: an endpoint's `fid.fclass`.
pub(crate) const FI_CLASS_EP: u64 = 3;
/// `FI_CLASS_SRX_CTX`: a shared receive context's `fid.fclass`.
pub(crate) const FI_CLASS_SRX_CTX: u64 = 6;
/// `FI_ADDR_UNSPEC`: a receive from any source; an `fi_addr_t` is 64 bits
/// on every ABI.
pub(crate) const FI_ADDR_UNSPEC: u64 = u64::MAX;

/// `ofi_op_tagged` (`include/ofi_proto.h`): a command's or packet's
/// operation when it is a tagged message.
pub(crate) const OP_TAGGED: u64 = 1;

/// shm's `op_src` (`include/ofi_shm.h`, an anonymous enum): where a
/// command's data is.
pub(crate) const SMR_SRC_INLINE: u64 = 0;
pub(crate) const SMR_SRC_INJECT: u64 = 1;
pub(crate) const SMR_SRC_IOV: u64 = 2;
pub(crate) const SMR_SRC_MMAP: u64 = 3;
pub(crate) const SMR_SRC_SAR: u64 = 4;
pub(crate) const SMR_SRC_IPC: u64 = 5;
/// `SMR_IOV_LIMIT` (`prov/shm/src/smr.h`): the length of an entry's
/// `iov` array, which the layouts' array length must agree with.
pub(crate) const SMR_IOV_LIMIT: u64 = 4;

/// rxm's control types (`prov/rxm/src/rxm.h`, an anonymous enum): how a
/// packet carries its message.
pub(crate) const RXM_CTRL_EAGER: u64 = 0;
pub(crate) const RXM_CTRL_SEG: u64 = 1;
pub(crate) const RXM_CTRL_RNDV_REQ: u64 = 2;
/// `RXM_RECV_QUEUE_MSG` and `RXM_RECV_QUEUE_TAGGED`
/// (`enum rxm_recv_queue_type`).
pub(crate) const RXM_RECV_QUEUE_MSG: u64 = 1;
pub(crate) const RXM_RECV_QUEUE_TAGGED: u64 = 2;

/// `OFI_BUFPOOL_INDEXED` (`include/ofi_mem.h`): a pool whose free lists are
/// its regions', which rxm's transmit pool is not.
pub(crate) const OFI_BUFPOOL_INDEXED: u64 = 1 << 1;
/// rxm's `enum rxm_proto_state` (`RXM_PROTO_STATES`): the states of a
/// transmit buffer whose message waits for its peer.
pub(crate) const RXM_TX: u64 = 0;
pub(crate) const RXM_SAR_TX: u64 = 4;
pub(crate) const RXM_RNDV_TX: u64 = 6;
pub(crate) const RXM_RNDV_READ_DONE_WAIT: u64 = 7;
pub(crate) const RXM_RNDV_WRITE_DATA_WAIT: u64 = 8;
pub(crate) const RXM_RNDV_WRITE_DONE_WAIT: u64 = 9;
