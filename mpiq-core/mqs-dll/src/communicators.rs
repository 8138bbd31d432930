//! The communicator iterator over a process's snapshot: start, the current
//! communicator and its group, next. Past the last it keeps answering
//! `mqs_end_of_list`.

use std::ffi::{c_char, c_int};

use mpiq_core::model::Communicator;
use mpiq_core::mqs_abi::{
    MqsCommunicator, MqsProcess, MqsTaddr, MqsTword, MQS_END_OF_LIST, MQS_NO_INFORMATION, MQS_OK,
};

use crate::boundary::{guarded, ERR_NOT_SET_UP, ERR_NOT_UPDATED, ERR_NO_COMMUNICATOR, ERR_NULL};
use crate::state::{process_info, ProcessInfo};

/// The communicator the iterator is at, in the latest snapshot.
pub(crate) fn current_communicator(info: &ProcessInfo) -> Option<&Communicator> {
    info.snapshot
        .as_ref()
        .and_then(|s| s.communicators.get(info.communicator))
}

/// Starts at the first communicator.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_setup_communicator_iterator(process: *mut MqsProcess) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let Some(snapshot) = &info.snapshot else {
            return ERR_NOT_UPDATED;
        };
        info.communicator = 0;
        info.operation = None;
        if snapshot.communicators.is_empty() {
            MQS_END_OF_LIST
        } else {
            MQS_OK
        }
    })
}

pub(crate) fn copy_text(dst: &mut [c_char], text: &str) {
    let bytes = text.as_bytes();
    let n = bytes.len().min(dst.len().saturating_sub(1));
    for (d, &b) in dst.iter_mut().zip(&bytes[..n]) {
        *d = b as c_char;
    }
    for d in &mut dst[n..] {
        *d = 0;
    }
}

/// The current communicator.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_get_communicator(
    process: *mut MqsProcess,
    out: *mut MqsCommunicator,
) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        if out.is_null() {
            return ERR_NULL;
        }
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let mut name = [0 as c_char; 64];
        copy_text(&mut name, &comm.name);
        let value = MqsCommunicator {
            unique_id: comm.unique_id as MqsTaddr,
            local_rank: comm.local_rank as MqsTword,
            size: comm.size as MqsTword,
            name,
        };
        // SAFETY: the debugger's struct, checked for NULL.
        unsafe { out.write(value) };
        MQS_OK
    })
}

/// The world rank of each member of the current communicator, into an
/// array of its size.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_get_comm_group(process: *mut MqsProcess, group: *mut c_int) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        if group.is_null() {
            return ERR_NULL;
        }
        let Some(comm) = current_communicator(info) else {
            return ERR_NO_COMMUNICATOR;
        };
        let Some(ranks) = &comm.group else {
            return MQS_NO_INFORMATION;
        };
        // The debugger sized its array by the communicator's size.
        let n = usize::try_from(comm.size).unwrap_or(0).min(ranks.len());
        for (i, &r) in ranks.iter().take(n).enumerate() {
            // SAFETY: index below the communicator's size, which the
            // interface says the array holds.
            unsafe { group.add(i).write(r as c_int) };
        }
        MQS_OK
    })
}

/// Moves to the next communicator; past the last it keeps answering
/// `mqs_end_of_list`.
///
/// # Safety
/// Called by a debugger through the interface: pointers are the ones the
/// interface describes (NULL is refused where a result goes).
#[no_mangle]
pub unsafe extern "C" fn mqs_next_communicator(process: *mut MqsProcess) -> c_int {
    guarded(|| {
        let Some(info) = process_info(process) else {
            return ERR_NOT_SET_UP;
        };
        let Some(snapshot) = &info.snapshot else {
            return ERR_NOT_UPDATED;
        };
        let len = snapshot.communicators.len();
        info.communicator = (info.communicator + 1).min(len);
        info.operation = None;
        if info.communicator < len {
            MQS_OK
        } else {
            MQS_END_OF_LIST
        }
    })
}
