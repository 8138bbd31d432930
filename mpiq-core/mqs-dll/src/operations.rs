//! The operation iterators of the current communicator: its pending
//! sends, posted receives and unexpected messages, one at a time.

use std::ffi::{c_char, c_int};

use mpiq_core::model::{OperationStatus, Queue, QueueKind};
use mpiq_core::mqs_abi::{
    MqsPendingOperation, MqsProcess, MqsTaddr, MqsTword, MQS_END_OF_LIST, MQS_NO_INFORMATION,
    MQS_OK,
};

use crate::boundary::{
    fail, guarded, ERR_BAD_OP_CLASS, ERR_DECODE, ERR_NOT_SET_UP, ERR_NO_COMMUNICATOR, ERR_NULL,
};
use crate::communicators::{copy_text, current_communicator};
use crate::state::process_info;

/// Starts one of the current communicator's three queues.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_operation_iterator(
    process: *mut MqsProcess,
    op_class: c_int,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let Some(kind) = QueueKind::ALL
            .into_iter()
            .find(|k| k.op_class() == op_class)
        else {
            return ERR_BAD_OP_CLASS;
        };
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let code = match comm.queue(kind) {
            Queue::NoInformation => MQS_NO_INFORMATION,
            Queue::Failed { error, .. } => fail(ERR_DECODE, format!("mpiq_mqs: {error}")),
            Queue::Read { operations, .. } if operations.is_empty() => MQS_END_OF_LIST,
            Queue::Read { .. } => MQS_OK,
        };
        info.operation = (code == MQS_OK || code == MQS_END_OF_LIST).then_some((kind, 0));
        code
    })
}

/// The next operation of the current queue.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_next_operation(
    process: *mut MqsProcess,
    out: *mut MqsPendingOperation,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        if out.is_null() {
            return ERR_NULL;
        }
        let Some((kind, index)) = info.operation else {
            return MQS_END_OF_LIST;
        };
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let Some(op) = comm.queue(kind).operations().get(index) else {
            return MQS_END_OF_LIST;
        };
        let mut extra = [[0 as c_char; 64]; 5];
        for (line, text) in extra.iter_mut().zip(&op.extra_text) {
            copy_text(line, text);
        }
        let value = MqsPendingOperation {
            status: match op.status {
                OperationStatus::Pending => 0,
                OperationStatus::Matched => 1,
                OperationStatus::Complete => 2,
                OperationStatus::Unknown(n) => n as c_int,
            },
            desired_local_rank: op.desired_local_rank as MqsTword,
            desired_global_rank: op.desired_global_rank as MqsTword,
            tag_wild: c_int::from(op.tag_wild),
            desired_tag: op.desired_tag as MqsTword,
            desired_length: op.desired_length as MqsTword,
            system_buffer: c_int::from(op.system_buffer),
            buffer: op.buffer as MqsTaddr,
            actual_local_rank: op.actual_local_rank as MqsTword,
            actual_global_rank: op.actual_global_rank as MqsTword,
            actual_tag: op.actual_tag as MqsTword,
            actual_length: op.actual_length as MqsTword,
            extra_text: extra,
        };
        // SAFETY: the debugger's struct, checked for NULL.
        unsafe { out.write(value) };
        info.operation = Some((kind, index + 1));
        MQS_OK
    })
}
