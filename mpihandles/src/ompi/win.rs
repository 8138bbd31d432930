//! Open MPI windows (`ompi_win_t`): a name, the group of the communicator
//! it was created over (`w_group`), its flavor, its info (`super.s_info`),
//! its error handler, and its attributes (`w_keyhash`), which are where
//! Open MPI keeps the window's base, size, displacement unit and memory
//! model (`MPI_WIN_BASE`...). Its communicator and epochs are the
//! one-sided component's, in that component's own module.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, Details, HandleKind, WinDetails};
use crate::ompi::constants::{KEY_WIN_BASE, KEY_WIN_DISP_UNIT, KEY_WIN_MODEL, KEY_WIN_SIZE};
use crate::ompi::group::group;
use crate::ompi::opal::{attribute, attributes, subscriber_info};
use crate::ompi::resolver::{Decoded, Ompi};

/// `MPI_WIN_FLAVOR_*` (`mpi.h`), by value.
fn flavor(v: u64) -> String {
    match v {
        1 => "MPI_WIN_FLAVOR_CREATE".to_string(),
        2 => "MPI_WIN_FLAVOR_ALLOCATE".to_string(),
        3 => "MPI_WIN_FLAVOR_DYNAMIC".to_string(),
        4 => "MPI_WIN_FLAVOR_SHARED".to_string(),
        other => format!("flavor {other}"),
    }
}

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.win;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let attrs = r
        .ptr(m.keyhash)
        .map_err(HandleError::from)
        .and_then(|k| attributes(ctx, &o.l, k));
    let attr = |key: i64, what: &str| -> Availability<u64> {
        match &attrs {
            Ok(list) => match attribute(list, key) {
                Some(a) => Availability::Value(a.value),
                None => Availability::not_available(format!("the window has no {what} attribute")),
            },
            Err(e) => Availability::not_available(format!("its attributes: {e}")),
        }
    };
    let name = r.chars(m.name)?;
    let mut notes = Vec::new();
    let g = r.ptr(m.group)?;
    if let Ok(g) = group(o, g) {
        if let Ok(w) = g.world {
            notes.push(format!(
                "its group (the communicator's it was created over): world ranks {w:?}"
            ));
        }
    }
    let details = WinDetails {
        name: Availability::Value(name.clone()),
        base: attr(KEY_WIN_BASE, "MPI_WIN_BASE").map(TargetAddr),
        size: attr(KEY_WIN_SIZE, "MPI_WIN_SIZE").map(|v| v as i64),
        disp_unit: attr(KEY_WIN_DISP_UNIT, "MPI_WIN_DISP_UNIT").map(|v| v as i32),
        communicator: Availability::not_available(
            "Open MPI's window keeps the communicator's group (see the notes); the communicator \
             is the one-sided component's duplicate, in that component's module",
        ),
        flavor: Availability::Value(flavor(r.uint(m.flavor)?)),
        model: attr(KEY_WIN_MODEL, "MPI_WIN_MODEL").map(|v| v as i32),
        errhandler: Availability::Value(
            o.reference_opt(HandleKind::Errhandler, r.ptr(m.errhandler)?),
        ),
        info: subscriber_info(ctx, &o.l, &r, m.info),
        hints: Availability::not_available(
            "Open MPI's one-sided components keep the hints they took in their own modules",
        ),
        synchronization: Availability::not_available(
            "Open MPI's one-sided components keep their epochs in their own modules",
        ),
    };
    Ok(Decoded {
        details: Details::Win(details),
        predefined: false,
        name: Some(name),
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: Availability::not_available(
            "MPI_Win_free frees the window at once (it is collective): a live window was not \
             freed",
        ),
        freed: None,
        notes,
    })
}
