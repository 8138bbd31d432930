//! How Open MPI's UCX PML packs an MPI envelope into UCX's 64-bit tag,
//! and back. The widths and masks are preprocessor constants of
//! `ompi/mca/pml/ucx/pml_ucx_request.h` (checked on Open MPI 4.1.4), so
//! in no debug info:
//!
//! ```text
//!  63           40 39          20 19           0
//!  | MPI tag (24) | source (20)  | context (20) |
//! ```
//!
//! A send's tag holds the sender's rank in the communicator
//! (`PML_UCX_MAKE_SEND_TAG`); a receive's tag and mask
//! (`PML_UCX_MAKE_RECV_TAG`) leave the source bits out of the mask for
//! `MPI_ANY_SOURCE` and the tag bits for `MPI_ANY_TAG`.

/// `PML_UCX_CONTEXT_BITS`.
const CONTEXT_BITS: u32 = 20;
/// `PML_UCX_RANK_BITS`.
const RANK_BITS: u32 = 20;
/// `PML_UCX_TAG_BITS`.
const TAG_BITS: u32 = 24;
/// `PML_UCX_TAG_MASK`: the tag's bits a receive for a given tag matches
/// (all but the top one, which every mask holds).
const TAG_MASK: u64 = 0x7fff_ff00_0000_0000;
/// The source bits of a mask: set unless the receive is for
/// `MPI_ANY_SOURCE` (`PML_UCX_SPECIFIC_SOURCE_MASK` less
/// `PML_UCX_ANY_SOURCE_MASK`).
const SOURCE_MASK: u64 = 0x0000_00ff_fff0_0000;

/// The MPI envelope a UCX tag (and, for a receive, its mask) carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Envelope {
    /// The communicator's context id, as far as its 20 bits hold it.
    pub(super) context_id: u64,
    /// The rank in the communicator: the sender's; `None` for a receive
    /// from `MPI_ANY_SOURCE`.
    pub(super) source: Option<i64>,
    /// The MPI tag; `None` for a receive with `MPI_ANY_TAG`.
    pub(super) tag: Option<i64>,
}

fn bits(value: u64, shift: u32, width: u32) -> u64 {
    (value >> shift) & ((1u64 << width) - 1)
}

/// The MPI tag of the tag's top bits. The PML shifts a C `int` into
/// them, so the negative tags of Open MPI's collectives come back as
/// 24-bit two's complement; user tags stay below `pml_max_tag`
/// (2^23 − 1).
fn mpi_tag(tag: u64) -> i64 {
    let raw = bits(tag, CONTEXT_BITS + RANK_BITS, TAG_BITS) as i64;
    if raw >= 1 << (TAG_BITS - 1) {
        raw - (1 << TAG_BITS)
    } else {
        raw
    }
}

/// The envelope of a message: a send's tag, or an unexpected message's
/// sender tag.
pub(super) fn message(tag: u64) -> Envelope {
    Envelope {
        context_id: bits(tag, 0, CONTEXT_BITS),
        source: Some(bits(tag, CONTEXT_BITS, RANK_BITS) as i64),
        tag: Some(mpi_tag(tag)),
    }
}

/// The envelope a posted receive asks for, from its tag and mask.
pub(super) fn receive(tag: u64, mask: u64) -> Envelope {
    let m = message(tag);
    Envelope {
        source: m.source.filter(|_| mask & SOURCE_MASK != 0),
        tag: m.tag.filter(|_| mask & TAG_MASK != 0),
        ..m
    }
}

/// The context id as the tag holds it, for a communicator's
/// `c_contextid`.
pub(super) fn context_bits(context_id: i64) -> u64 {
    (context_id as u64) & ((1u64 << CONTEXT_BITS) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PML_UCX_MAKE_SEND_TAG` and `PML_UCX_MAKE_RECV_TAG`, written out
    /// from pml_ucx_request.h to build the tags the tests decode.
    fn send_tag(tag: i32, rank: u64, cid: u64) -> u64 {
        ((tag as i64 as u64) << 40) | (rank << 20) | cid
    }
    fn recv_tag(tag: i32, src: i32, cid: u64) -> (u64, u64) {
        let mut mask = if src == -1 {
            0x8000_0000_000f_ffff
        } else {
            0x8000_00ff_ffff_ffff
        };
        let mut t = (((src as i64 as u64) & 0xfffff) << 20) | cid;
        if tag != -1 {
            mask |= 0x7fff_ff00_0000_0000;
            t |= (tag as i64 as u64) << 40;
        }
        (t, mask)
    }

    #[test]
    fn a_send_tag_gives_context_rank_and_tag() {
        let e = message(send_tag(44, 1, 3));
        assert_eq!(
            e,
            Envelope {
                context_id: 3,
                source: Some(1),
                tag: Some(44)
            }
        );
        // The largest tag the PML allows, and a collective's negative one.
        assert_eq!(
            message(send_tag((1 << 23) - 1, 0, 0)).tag,
            Some((1 << 23) - 1)
        );
        assert_eq!(message(send_tag(-12, 5, 0)).tag, Some(-12));
        assert_eq!(
            message(send_tag(7, (1 << 20) - 1, 0)).source,
            Some((1 << 20) - 1)
        );
    }

    #[test]
    fn a_receive_tag_and_mask_give_wildcards() {
        let (t, m) = recv_tag(11, 1, 0);
        assert_eq!(
            receive(t, m),
            Envelope {
                context_id: 0,
                source: Some(1),
                tag: Some(11)
            }
        );
        let (t, m) = recv_tag(22, -1, 1);
        assert_eq!(receive(t, m).source, None);
        assert_eq!(receive(t, m).tag, Some(22));
        let (t, m) = recv_tag(-1, 1, 2);
        assert_eq!(receive(t, m).source, Some(1));
        assert_eq!(receive(t, m).tag, None);
        assert_eq!(receive(t, m).context_id, 2);
        let (t, m) = recv_tag(-1, -1, 0xfffff);
        assert_eq!(
            receive(t, m),
            Envelope {
                context_id: 0xfffff,
                source: None,
                tag: None
            }
        );
    }

    #[test]
    fn context_ids_wider_than_the_tag_keep_their_low_bits() {
        assert_eq!(context_bits(3), 3);
        assert_eq!(context_bits((1 << 20) + 5), 5);
    }
}
