//! The provider an `fi_info` names: what `fi_getinfo` gave the program,
//! which MPI libraries keep (MPICH's `MPIDI_OFI_global.prov_use`), and
//! which names every provider alike, those whose endpoints are not built
//! on libfabric's utility code (`cxi`, `psm2`, `psm3`) among them.

use mpidd_read::{Layouts, Limits, TargetMemory};
use mpidd_types::TargetAddr;

use super::error::OfiError;
use super::layout::{FABRIC_ATTR, FI_INFO};
use super::shm::span;
use crate::target::Ctx;

/// The provider the `struct fi_info` at `info` names
/// (`fabric_attr->prov_name`: `shm`, `tcp;ofi_rxm`, `cxi`, ...), as
/// `fi_getinfo` wrote it: a layered provider is named by its layers,
/// the core one first. [`ofi_hardware_matching`] of its core provider (the
/// name up to the first `;`) says what can be seen of one that matches in
/// hardware.
///
/// [`ofi_hardware_matching`]: super::ofi_hardware_matching
pub fn read_ofi_info_provider(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    info: TargetAddr,
    limits: &Limits,
) -> Result<String, OfiError> {
    let fabric_attr = layouts.member(FI_INFO, "fabric_attr")?;
    let prov_name = layouts.member(FABRIC_ATTR, "prov_name")?;
    let ctx = Ctx::without_symbols(mem, layouts, *limits);
    let i = ctx.record_sized(info, span(&[fabric_attr]), FI_INFO)?;
    let attr = i.ptr(fabric_attr)?;
    if attr.is_null() {
        return Err(OfiError::corrupt(FI_INFO, info, "its fabric_attr is NULL"));
    }
    let a = ctx.record_sized(attr, span(&[prov_name]), FABRIC_ATTR)?;
    let name = a.ptr(prov_name)?;
    if name.is_null() {
        return Err(OfiError::corrupt(
            FABRIC_ATTR,
            attr,
            "its prov_name is NULL",
        ));
    }
    Ok(ctx.string(name)?)
}
