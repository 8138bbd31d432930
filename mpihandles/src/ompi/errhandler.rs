//! Open MPI error handlers (`ompi_errhandler_t`): a name (the predefined
//! ones'), the kind of object it is for (`eh_mpi_object_type`, predefined
//! handlers serving every kind), the language of its function (`eh_lang`)
//! and the function, one member per kind and one for Fortran.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, Details, ErrhandlerDetails, HandleKind, HandleRef};
use crate::ompi::resolver::{Decoded, Ompi};

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let l = &o.l.errhandler;
    let m = &l.m;
    let r = o.ctx.record_sized(addr, l.size, l.name)?;
    let object_type = m.types.name(r.int(m.object_type)?);
    let lang = m.langs.name(r.int(m.lang)?);
    let predefined = object_type == "OMPI_ERRHANDLER_TYPE_PREDEFINED";
    let (object_kind, function) = match object_type.as_str() {
        "OMPI_ERRHANDLER_TYPE_COMM" => ("communicator", m.comm_fn),
        "OMPI_ERRHANDLER_TYPE_WIN" => ("window", m.win_fn),
        "OMPI_ERRHANDLER_TYPE_FILE" => ("file", m.file_fn),
        _ => ("", m.comm_fn),
    };
    let user_function = if predefined {
        Availability::Value(None)
    } else {
        let f = if lang == "OMPI_ERRHANDLER_LANG_FORTRAN" {
            m.fort_fn
        } else {
            function
        };
        let p = r.ptr(f)?;
        Availability::Value((!p.is_null()).then_some(p))
    };
    let name = r.chars(m.name)?;
    Ok(Decoded {
        details: Details::Errhandler(ErrhandlerDetails {
            object_kind: if predefined {
                Availability::not_available(
                    "a predefined error handler serves every kind of object",
                )
            } else if object_kind.is_empty() {
                Availability::Value(object_type)
            } else {
                Availability::Value(object_kind.to_string())
            },
            language: if predefined {
                Availability::not_available("a predefined error handler has no user function")
            } else {
                Availability::Value(
                    match lang.as_str() {
                        "OMPI_ERRHANDLER_LANG_C" => "C",
                        "OMPI_ERRHANDLER_LANG_CXX" => "C++",
                        "OMPI_ERRHANDLER_LANG_FORTRAN" => "Fortran",
                        other => other,
                    }
                    .to_string(),
                )
            },
            user_function,
            attached_to: attached_to(o, addr).into(),
        }),
        predefined,
        name: Some(name),
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: Availability::not_available(
            "Open MPI keeps no mark of MPI_Errhandler_free: freeing drops a reference, and the \
             handler lives while objects hold it",
        ),
        freed: None,
        notes: Vec::new(),
    })
}

/// The communicators, windows and files whose error handler is `addr`.
fn attached_to(o: &Ompi<'_>, addr: TargetAddr) -> Result<Vec<HandleRef>, HandleError> {
    let l = &o.l;
    let mut out = o.referring(HandleKind::Comm, &[l.comm.m.errhandler], addr)?;
    out.extend(o.referring(HandleKind::Win, &[l.win.m.errhandler], addr)?);
    out.extend(o.referring(HandleKind::File, &[l.file.m.errhandler], addr)?);
    Ok(out)
}
