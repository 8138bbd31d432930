//! Reading one libfabric endpoint: which provider it is of, whether the
//! layouts read it as libfabric made it, and that provider's queues.

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Limits, TargetMemory};
use mpidd_types::TargetAddr;

use super::error::OfiError;
use super::flags::FI_CLASS_EP;
use super::hardware::ofi_hardware_matching;
use super::layout::{
    EndpointLayout, ListLayout, RxmLayout, RxmSendLayout, ShmLayout, ShmSendLayout, OFI_NEEDS,
    PROVIDER, UTIL_DOMAIN, UTIL_EP,
};
use super::model::{OfiEndpointQueues, OfiProvider};
use super::shm::span;
use super::{rxm, rxm_sends, shm};
use crate::target::Ctx;

/// Whether `layouts` describes what [`read_ofi_endpoint`] needs for an
/// endpoint of every software provider it reads (shm and rxm, and the
/// endpoint's record that names its provider), and if not, the first
/// question it cannot answer. The sends' layouts are optional: without
/// them the reading says what it could not read.
pub fn ofi_layouts_missing(layouts: &dyn Layouts) -> Option<LayoutError> {
    EndpointLayout::of(layouts)
        .and_then(|_| ListLayout::of(layouts))
        .and_then(|_| ShmLayout::of(layouts))
        .and_then(|_| RxmLayout::of(layouts))
        .err()
}

/// Asks `layouts` every question the OFI reader may ask, so that a layout
/// profile records them all.
pub fn ask_ofi_layouts(layouts: &dyn Layouts) {
    LayoutNeed::ask_all(OFI_NEEDS, layouts);
    let _ = ShmSendLayout::of(layouts);
    let _ = RxmSendLayout::of(layouts);
}

/// The name of the provider of the endpoint at `endpoint` (a
/// `struct fid_ep *` of a provider built on libfabric's utility code, whose
/// `util_ep` starts it), as its domain's provider record names it (`shm`,
/// `ofi_rxm`, `cxi`, ...). The endpoint's class must read as an
/// endpoint's (`FI_CLASS_EP`): otherwise the layouts are not this build's.
pub fn read_ofi_provider_name(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    endpoint: TargetAddr,
    limits: &Limits,
) -> Result<String, OfiError> {
    let el = EndpointLayout::of(layouts)?;
    let ctx = Ctx::without_symbols(mem, layouts, *limits);
    provider_name(&ctx, &el, endpoint).map(|(name, _)| name)
}

/// The provider's name and the endpoint's address vector.
fn provider_name(
    ctx: &Ctx<'_>,
    el: &EndpointLayout,
    ep: TargetAddr,
) -> Result<(String, TargetAddr), OfiError> {
    let e = ctx.record_sized(ep, span(&[el.fclass, el.domain, el.av]), UTIL_EP)?;
    let fclass = e.uint(el.fclass)?;
    if fclass != FI_CLASS_EP {
        return Err(OfiError::misfit(
            ep,
            format!("its fid class is {fclass}, not FI_CLASS_EP ({FI_CLASS_EP})"),
        ));
    }
    let domain = e.ptr(el.domain)?;
    if domain.is_null() {
        return Err(OfiError::corrupt(UTIL_EP, ep, "its domain is NULL"));
    }
    let d = ctx.record_sized(domain, span(&[el.domain_prov]), UTIL_DOMAIN)?;
    let prov = d.ptr(el.domain_prov)?;
    if prov.is_null() {
        return Err(OfiError::corrupt(
            UTIL_DOMAIN,
            domain,
            "its provider is NULL",
        ));
    }
    let p = ctx.record_sized(prov, span(&[el.prov_name]), PROVIDER)?;
    let name = p.ptr(el.prov_name)?;
    if name.is_null() {
        return Err(OfiError::corrupt(PROVIDER, prov, "its name is NULL"));
    }
    Ok((ctx.string(name)?, e.ptr(el.av)?))
}

/// Reads what the libfabric endpoint at `endpoint` (a `struct fid_ep *`,
/// as `fi_endpoint` returned it) holds: its posted receives, its
/// unexpected messages and its sends in flight.
///
/// The endpoint is the caller's to find (an MPI library's OFI globals, or
/// a program's own variable): this reader knows no MPI library, and gives
/// tags, ignore masks and sources as libfabric keeps them. Its provider is
/// read from the rank (its domain's `fi_provider.name`): `shm` and
/// `ofi_rxm` (so `tcp;ofi_rxm` and `verbs;ofi_rxm`) are read; a
/// hardware-matching provider ([`ofi_hardware_matching`]) or another one
/// is refused with [`OfiError::NotRead`], which says why.
///
/// Every size and offset comes from `layouts` (libfabric's DWARF, or a
/// profile of its build, such as the one mpidd ships for Debian 12's
/// libfabric 1.17); before anything is read through them, the endpoint
/// must read as libfabric makes it: its class `FI_CLASS_EP`, and shm's
/// receive context of class `FI_CLASS_SRX_CTX` pointing back to itself,
/// or rxm's two receive queues pointing back to the endpoint with their
/// own types. Every ring is cycle-checked and bounded by `limits`
/// (`max_list_len` entries per ring, `max_table_entries` send entries,
/// `max_record_bytes` per read); a failure names the record and its
/// address.
///
/// `mpihandles/tests/ofi_endpoint_live.rs` reads real endpoints this way,
/// live and from a core.
pub fn read_ofi_endpoint(
    mem: &dyn TargetMemory,
    layouts: &dyn Layouts,
    endpoint: TargetAddr,
    limits: &Limits,
) -> Result<OfiEndpointQueues, OfiError> {
    let el = EndpointLayout::of(layouts)?;
    let ll = ListLayout::of(layouts)?;
    let ctx = Ctx::without_symbols(mem, layouts, *limits);
    let (name, av) = provider_name(&ctx, &el, endpoint)?;
    match name.as_str() {
        "shm" => {
            let q = shm::read(&ctx, layouts, &ll, endpoint, av)?;
            Ok(OfiEndpointQueues {
                endpoint,
                provider: OfiProvider::Shm,
                posted: q.posted,
                unexpected: q.unexpected,
                sends: q.sends,
                notes: q.notes,
            })
        }
        "ofi_rxm" => {
            let q = rxm::read(&ctx, layouts, &ll, endpoint)?;
            let mut notes = Vec::new();
            let sends = match RxmSendLayout::of(layouts) {
                Ok(sl) => rxm_sends::sends(&ctx, &sl, endpoint)?,
                Err(e) => {
                    notes.push(format!("rxm's sends in flight are not read: {e}"));
                    Vec::new()
                }
            };
            Ok(OfiEndpointQueues {
                endpoint,
                provider: OfiProvider::Rxm,
                posted: q.posted,
                unexpected: q.unexpected,
                sends,
                notes,
            })
        }
        other => Err(OfiError::NotRead {
            endpoint,
            provider: other.to_string(),
            statement: ofi_hardware_matching(other)
                .unwrap_or(
                    "a provider whose queues this reader does not read (it reads shm's and \
                     ofi_rxm's)",
                )
                .to_string(),
        }),
    }
}
