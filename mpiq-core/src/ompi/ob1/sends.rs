//! The pending sends: ob1 keeps no list of them, so the free list every
//! ob1 send request comes from (`mca_pml_base_send_requests`) is walked
//! chunk by chunk, and the requests in use are the sends started and not
//! yet completed by a wait or a test.

use std::collections::HashMap;

use mpidd_read::{Limits, ReadError};
use mpidd_types::TargetAddr;

use super::layout::Field;
use super::{DatatypeSizes, OmpiOb1, REQUEST_COMPLETED};
use crate::decoder::DecodeError;
use crate::list_walk::{at, Span};
use crate::model::{OperationStatus, PendingOperation, Protocol};
use crate::ompi::communicators::CommInfo;
use crate::target_read::{read_bytes, Record};
use mpidd_read::TargetMemory;

impl OmpiOb1 {
    /// The send requests in use, from the free list every ob1 send request
    /// is allocated from, by communicator address.
    pub(super) fn pending_sends(
        &self,
        mem: &dyn TargetMemory,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut DatatypeSizes,
    ) -> Result<HashMap<u64, Vec<(u64, PendingOperation)>>, DecodeError> {
        let l = &self.layout;
        let fl = self.globals.send_requests;
        let order = mem.abi().byte_order;
        let end = [
            l.fl_num_allocated,
            l.fl_num_per_alloc,
            l.fl_frag_size,
            l.fl_frag_alignment,
            l.fl_frag_class,
        ]
        .iter()
        .map(|f| f.end())
        .max()
        .unwrap_or(0);
        let head = read_bytes(
            mem,
            fl,
            end,
            "mca_pml_base_send_requests (opal_free_list_t)",
            limits,
        )?;
        let h = Record {
            base: fl,
            start: 0,
            bytes: &head,
            order,
            what: "mca_pml_base_send_requests (opal_free_list_t)",
        };
        let allocated = l.fl_num_allocated.uint(&h)?;
        let per_alloc = l.fl_num_per_alloc.uint(&h)?;
        let frag_size = l.fl_frag_size.uint(&h)?;
        let align = l.fl_frag_alignment.uint(&h)?.max(1);
        let class = l.fl_frag_class.uint(&h)?;
        let corrupt = |reason: String| DecodeError::Corrupt {
            what: "mca_pml_base_send_requests (opal_free_list_t)",
            addr: fl,
            reason,
        };
        if allocated > limits.max_table_entries {
            return Err(ReadError::LimitExceeded {
                what: "mca_pml_base_send_requests.fl_num_allocated",
                addr: fl,
                count: allocated,
                max: limits.max_table_entries,
                limit: "max_table_entries",
            }
            .into());
        }
        if !align.is_power_of_two() {
            return Err(corrupt(format!(
                "fl_frag_alignment {align} is not a power of two"
            )));
        }
        let round = |v: u64| v.checked_add(align - 1).map(|v| v & !(align - 1));
        let stride = round(frag_size)
            .ok_or_else(|| corrupt(format!("fl_frag_size {frag_size} overflows")))?;
        if stride < l.send_span.end {
            return Err(corrupt(format!(
                "its elements ({frag_size} bytes) are smaller than an ob1 send request"
            )));
        }
        // The chunks, in allocation order: opal_free_list_grow_st puts
        // `num_elements` items after each chunk's head. The first chunk
        // holds the initial count; every later one fl_num_per_alloc (ob1's
        // lists have no maximum that would cut the last one short).
        let mut chunks = Vec::new();
        self.walk_list(
            mem,
            at(fl, l.fl_allocations),
            Span {
                start: 0,
                end: l.item_next.end(),
            },
            "mca_pml_base_send_requests.fl_allocations",
            limits,
            |r| {
                chunks.push(r.base);
                Ok(())
            },
        )?;
        let later = (chunks.len() as u64)
            .saturating_sub(1)
            .saturating_mul(per_alloc);
        let first_count = allocated.checked_sub(later).filter(|&n| n > 0 || chunks.is_empty()).ok_or_else(|| {
            corrupt(format!(
                "{} chunks of {per_alloc} after the first hold more than the {allocated} elements allocated",
                chunks.len().saturating_sub(1)
            ))
        })?;
        let f = &l.send;
        let len = l.send_span.end - l.send_span.start;
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        limits.check_record_bytes("mca_pml_ob1_send_request_t", fl, len)?;
        let mut out: HashMap<u64, Vec<(u64, PendingOperation)>> = HashMap::new();
        for (ci, chunk) in chunks.iter().enumerate() {
            let count = if ci == 0 { first_count } else { per_alloc };
            let start = chunk
                .0
                .checked_add(l.free_list_item_size)
                .and_then(round)
                .ok_or_else(|| corrupt(format!("chunk at {chunk} overflows the address space")))?;
            for i in 0..count {
                let item = TargetAddr(start.wrapping_add(i.wrapping_mul(stride)));
                let bytes = mem.view(
                    at(item, l.send_span.start),
                    &mut buf,
                    "mca_pml_ob1_send_request_t",
                )?;
                let r = Record {
                    base: item,
                    start: l.send_span.start,
                    bytes,
                    order,
                    what: "mca_pml_ob1_send_request_t",
                };
                if f.class.uint(&r)? != class {
                    return Err(DecodeError::Corrupt {
                        what: "mca_pml_ob1_send_request_t",
                        addr: item,
                        reason: format!(
                            "element {i} of the free-list chunk at {chunk} is not of the list's class {class:#x}"
                        ),
                    });
                }
                let state = f.state.int(&r)?;
                if state == l.state_invalid
                    || f.ompi_type.int(&r)? != l.ompi_request_pml
                    || f.pml_type.int(&r)? != l.pml_request_send
                {
                    continue;
                }
                let comm_addr = f.comm.uint(&r)?;
                let Some(comm) = comms.iter().find(|c| c.addr.0 == comm_addr) else {
                    continue;
                };
                let op = self.send_operation(mem, &r, comm, state, limits, types)?;
                out.entry(comm_addr)
                    .or_default()
                    .push((f.sequence.uint(&r)?, op));
            }
        }
        for ops in out.values_mut() {
            ops.sort_by_key(|(seq, _)| *seq);
        }
        Ok(out)
    }

    fn send_operation(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        state: i64,
        limits: &Limits,
        types: &mut DatatypeSizes,
    ) -> Result<PendingOperation, DecodeError> {
        let l = &self.layout;
        let f = &l.send;
        let peer = f.peer.int(r)?;
        let tag = f.tag.int(r)?;
        let count = f.count.int(r)?;
        let packed = f.bytes_packed.uint(r)?;
        let mode = f.mode.int(r)?;
        let complete = f.complete.uint(r)? == REQUEST_COMPLETED;
        let pml_complete = f.pml_complete.int(r)? != 0;
        let acked = f.recv.uint(r)? != 0;
        let user = f.user_addr.uint(r)?;
        let buffer = f.addr.uint(r)?;
        let synchronous = mode == l.send_synchronous;
        // As mca_pml_ob1_send_request_start_btl decides: eager when the
        // packed size fits the first eager BTL's limit (less ob1's
        // largest header) and the send is not synchronous.
        let eager_limit = self.eager_limit(mem, f.endpoint.addr(r)?, limits);
        let protocol = match eager_limit {
            Some(limit) if !synchronous && packed <= limit && f.rdma_cnt.uint(r)? == 0 => {
                Some(Protocol::Eager)
            }
            Some(_) => Some(Protocol::Rendezvous),
            None => None,
        };
        let status = if complete {
            OperationStatus::Complete
        } else if acked {
            // The receiver's acknowledgement names its matched request.
            OperationStatus::Matched
        } else {
            OperationStatus::Pending
        };
        let length = i64::try_from(packed).unwrap_or(i64::MAX);
        let mut extra = Vec::new();
        if pml_complete && !complete {
            extra.push("data sent; completion not yet signalled".to_string());
        } else if pml_complete {
            extra.push("complete: the program has not waited for or tested it".to_string());
        }
        if f.free_called.int(r)? != 0 {
            extra.push("freed by the program (MPI_Request_free) before it completed".to_string());
        }
        if state == l.state_cancelled {
            extra.push("cancelled".to_string());
        }
        if mode == l.send_buffered && buffer != user {
            extra.push("buffered: the data is in the MPI_Buffer_attach buffer".to_string());
        }
        let delivered = f.delivered.uint(r)?;
        if !complete && delivered > 0 {
            extra.push(format!("{delivered} of {packed} bytes delivered"));
        }
        let datatype = f.datatype.addr(r)?;
        if self.datatype_size(mem, datatype, types).is_none() {
            extra.push(format!("the datatype at {datatype} has no readable size"));
        }
        Ok(PendingOperation {
            system_buffer: buffer != user,
            buffer,
            extra_text: extra,
            desired_count: Some(count),
            protocol,
            synchronous: Some(synchronous),
            ..PendingOperation::message(status, (peer, comm.world_of(peer)), tag, length)
        })
    }

    /// The largest message the first eager BTL to a peer sends eagerly:
    /// its `btl_eager_limit` less `sizeof(mca_pml_ob1_hdr_t)`. `None` when
    /// the endpoint cannot be read, or its eager BTLs disagree.
    fn eager_limit(
        &self,
        mem: &dyn TargetMemory,
        endpoint: TargetAddr,
        limits: &Limits,
    ) -> Option<u64> {
        let l = &self.layout;
        if endpoint.0 == 0 {
            return None;
        }
        let arr = at(endpoint, l.endpoint_eager);
        let word = mem.abi().address_bytes();
        let read = |addr: TargetAddr, f: Field, what: &'static str| -> Option<u64> {
            let b = read_bytes(mem, at(addr, f.offset), f.size as u64, what, limits).ok()?;
            Some(mpidd_read::decode_uint(&b, mem.abi().byte_order))
        };
        let n = read(arr, l.btl_array_size, "mca_bml_base_btl_array_t.arr_size")?;
        let btls = TargetAddr(read(
            arr,
            l.btl_array_btls,
            "mca_bml_base_btl_array_t.bml_btls",
        )?);
        if n == 0 || n > 64 || l.bml_btl.size != word {
            return None;
        }
        let mut found: Option<u64> = None;
        for i in 0..n {
            let bml = at(btls, i.checked_mul(l.bml_btl_size)?);
            let btl = TargetAddr(read(bml, l.bml_btl, "mca_bml_base_btl_t.btl")?);
            let limit = read(
                btl,
                l.btl_eager_limit,
                "mca_btl_base_module_t.btl_eager_limit",
            )?
            .saturating_sub(l.ob1_hdr_size);
            match found {
                Some(f) if f != limit => return None,
                _ => found = Some(limit),
            }
        }
        found
    }
}
