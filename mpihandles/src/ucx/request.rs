//! UCX's request (`ucp_request_t`), as the MPI library's pointer to it
//! finds it.
//!
//! An MPI library that hands an operation to UCX's tag matching
//! (`ucp_tag_send_nbx`, `ucp_tag_recv_nbx`) keeps only a pointer to the
//! user part of UCX's request, which UCX places right after its own
//! `ucp_request_t` (`ucp_request.h`: `req + 1`). UCX's request holds the
//! 64-bit tag the MPI library built, a receive's tag mask, the buffer and
//! its length, and a send's endpoint. How the tag packs the MPI envelope
//! is the MPI library's, not UCX's: the reader gives the tag as UCX keeps
//! it. `ucp_request_t`'s layout comes from the layout source (UCX's debug
//! info, or a profile), whatever the MPI library's layouts come from.

use mpidd_read::{LayoutError, Layouts, Limits, TargetMemory};
use mpidd_types::TargetAddr;

use super::error::UcxError;
use super::flags::{
    OP_ID_MASK, OP_ID_TAG_SEND, OP_ID_TAG_SEND_SYNC, REQUEST_PROTO_SEND, REQUEST_SEND_TAG,
    REQUEST_SYNC,
};
use super::layout::{RequestLayout, PROTO_CONFIG, REQUEST};
use crate::target::{Ctx, Rec};

/// A receive as UCX's request holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UcxReceive {
    /// The tag the receive matches, where the mask's bits are set.
    pub(crate) tag: u64,
    /// The mask: a clear bit matches any value of the tag's bit.
    pub(crate) tag_mask: u64,
    /// The user's buffer.
    pub(crate) buffer: u64,
    /// Its length in bytes.
    pub(crate) length: u64,
}

/// A send as UCX's request holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UcxSend {
    /// The tag sent.
    pub(crate) tag: u64,
    /// The user's buffer.
    pub(crate) buffer: u64,
    /// Its length in bytes.
    pub(crate) length: u64,
    /// The endpoint (`ucp_ep_h`) it is sent on: its destination.
    pub(crate) endpoint: u64,
}

/// Whether `layouts` describes UCX's request, and if not, which question
/// it cannot answer. Asking is also how a layout profile records the
/// answers.
pub fn ucx_layouts_missing(layouts: &dyn Layouts) -> Option<LayoutError> {
    RequestLayout::of(layouts).err()
}

/// UCX's whole request for the MPI library's pointer `user` to its user
/// part, read once as a record (bounded by the default [`Limits`]' record
/// size).
fn request(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    l: &RequestLayout,
    user: TargetAddr,
) -> Result<Rec, UcxError> {
    let ctx = Ctx::without_symbols(mem, layouts, Limits::default());
    let base = TargetAddr(user.0.wrapping_sub(l.size));
    Ok(ctx.record_sized(base, l.size, REQUEST)?)
}

/// UCX's request layout, resolved once for the many requests of one
/// reading: a rank with 100000 receives handed to UCX asks the layouts
/// once rather than 100000 times.
pub struct UcxRequestReader {
    layout: RequestLayout,
}

impl UcxRequestReader {
    /// The reader of requests `layouts` describe; fails naming the first
    /// question about `ucp_request_t` they cannot answer.
    pub fn new(layouts: &dyn Layouts) -> Result<UcxRequestReader, UcxError> {
        Ok(UcxRequestReader {
            layout: RequestLayout::of(layouts)?,
        })
    }

    /// The receive UCX holds for the MPI library's pointer `user` to its
    /// request's user part.
    pub(crate) fn receive(
        &self,
        mem: &dyn TargetMemory,
        layouts: &dyn Layouts,
        user: TargetAddr,
    ) -> Result<UcxReceive, UcxError> {
        let l = &self.layout;
        let r = request(mem, layouts, l, user)?;
        Ok(UcxReceive {
            tag: r.uint(l.recv_tag)?,
            tag_mask: r.uint(l.recv_mask)?,
            buffer: r.uint(l.recv_buffer)?,
            length: r.uint(l.recv_length)?,
        })
    }

    /// The send UCX holds for the MPI library's pointer `user` to its
    /// request's user part.
    pub(crate) fn send(
        &self,
        mem: &dyn TargetMemory,
        layouts: &dyn Layouts,
        user: TargetAddr,
    ) -> Result<UcxSend, UcxError> {
        let l = &self.layout;
        let r = request(mem, layouts, l, user)?;
        let ctx = Ctx::without_symbols(mem, layouts, Limits::default());
        let flags = r.uint(l.flags)? as u32;
        // A send of UCX's new protocols keeps its buffer and length
        // elsewhere than `send.buffer` and `send.length`, which it leaves
        // as they were.
        let (buffer, length) = match tag_send(&ctx, l, &r, flags)? {
            Some(s) => (s.buffer, s.length),
            None if flags & REQUEST_PROTO_SEND != 0 => {
                return Err(UcxError::Layouts(LayoutError::new(
                    REQUEST,
                    Some("send.proto_config"),
                    "a send of UCX's new protocols (UCP_REQUEST_FLAG_PROTO_SEND) that these \
                     layouts do not read as a tagged send",
                )))
            }
            None => (r.uint(l.send_buffer)?, r.uint(l.send_length)?),
        };
        Ok(UcxSend {
            tag: r.uint(l.send_tag)?,
            buffer,
            length,
            endpoint: r.uint(l.send_ep)?,
        })
    }
}

/// What a tagged send's request holds beyond its tag and endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TagSend {
    pub(crate) buffer: u64,
    pub(crate) length: u64,
    pub(crate) synchronous: bool,
}

/// The tagged send the request `r` (with `flags`) is, or `None` when it
/// is not one: a send of the old protocols says so in its flags
/// (`UCP_REQUEST_FLAG_SEND_TAG`, `ucp_tag_send_req_init`); one of the new
/// protocols (`UCP_REQUEST_FLAG_PROTO_SEND`) in the operation its
/// protocol was selected for (`UCP_OP_ID_TAG_SEND`, `_SYNC`), read through
/// `send.proto_config`. Without the new protocols' layouts, such a send
/// is not recognised.
pub(crate) fn tag_send(
    ctx: &Ctx<'_>,
    rl: &RequestLayout,
    r: &Rec,
    flags: u32,
) -> Result<Option<TagSend>, UcxError> {
    if flags & REQUEST_SEND_TAG != 0 {
        return Ok(Some(TagSend {
            buffer: r.uint(rl.send_buffer)?,
            length: r.uint(rl.send_length)?,
            synchronous: flags & REQUEST_SYNC != 0,
        }));
    }
    let Some(proto) = rl.proto.filter(|_| flags & REQUEST_PROTO_SEND != 0) else {
        return Ok(None);
    };
    let config = r.ptr(proto.proto_config)?;
    if config.is_null() {
        return Ok(None);
    }
    let at = mpidd_types::TargetAddr(config.0.wrapping_add(proto.op_id_flags.offset));
    let op = ctx
        .bytes(at, 1, PROTO_CONFIG)?
        .first()
        .copied()
        .unwrap_or(u8::MAX)
        & OP_ID_MASK;
    if op != OP_ID_TAG_SEND && op != OP_ID_TAG_SEND_SYNC {
        return Ok(None);
    }
    Ok(Some(TagSend {
        buffer: r.uint(proto.buffer)?,
        length: r.uint(proto.length)?,
        synchronous: op == OP_ID_TAG_SEND_SYNC,
    }))
}
