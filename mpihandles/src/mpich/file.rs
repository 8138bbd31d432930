//! MPICH's files, which are ROMIO's: an `MPI_File` is a pointer to an
//! `ADIOI_FileD`, which starts with ROMIO's cookie (`ADIOI_FILE_COOKIE`,
//! 2487376, in ROMIO's `adio.h`) while the file is open. It keeps the file
//! name (`filename`), the communicator ROMIO duplicated (`comm`), the mode
//! the application gave (`orig_access_mode`), an info object of hints
//! (`info`), the error handler (`err_handler`), `atomicity`, nonblocking
//! operations in flight (`async_count`) and the Fortran index
//! (`fortran_handle`, -1 until `MPI_File_c2f` assigns one from ROMIO's
//! table `ADIOI_Ftable`, whose last used index is `ADIOI_Ftable_ptr`).

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    AccessMode, Availability, CHandle, Details, FileDetails, HandleKind, HandleView,
};
use crate::mpich::info;
use crate::mpich::resolver::Mpich;
use crate::target::at;

const F: &str = "ADIOI_FileD";
const COOKIE: i64 = 2_487_376;
/// MPICH's `MPI_ERRHANDLER_NULL`: ROMIO's default handler.
const ERRHANDLER_NULL: u32 = 0x1400_0000;

pub(crate) fn view(m: &Mpich<'_>, addr: TargetAddr) -> Result<HandleView, HandleError> {
    let ctx = &m.ctx;
    if addr.is_null() {
        return Err(HandleError::Null {
            kind: HandleKind::File,
            value: 0,
            name: "MPI_FILE_NULL".to_string(),
        });
    }
    let r = ctx.record(addr, F).map_err(|e| HandleError::NotAnObject {
        kind: HandleKind::File,
        addr,
        reason: e.to_string(),
    })?;
    let cookie = r.int(ctx.m(F, "cookie")?)?;
    if cookie != COOKIE {
        return Err(HandleError::NotAnObject {
            kind: HandleKind::File,
            addr,
            reason: format!(
                "its first int is {cookie}, not ROMIO's cookie {COOKIE} (not an MPI_File, or \
                 one already closed)"
            ),
        });
    }
    let int = |path: &str| -> Result<i64, HandleError> { Ok(r.int(ctx.m(F, path)?)?) };
    let fortran = int("fortran_handle");
    let details = FileDetails {
        filename: (|| -> Result<String, HandleError> {
            let p = r.ptr(ctx.m(F, "filename")?)?;
            Ok(ctx.string(p)?)
        })()
        .into(),
        communicator: int("comm")
            .map(|h| Some(m.reference(HandleKind::Comm, h as u32)))
            .into(),
        access_mode: int("orig_access_mode")
            .map(|v| AccessMode::from_bits(v as i32))
            .into(),
        info: int("info")
            .and_then(|h| info::entries_of_handle(ctx, h as u32))
            .into(),
        errhandler: int("err_handler")
            .map(|h| {
                (h as u32 != ERRHANDLER_NULL).then(|| m.reference(HandleKind::Errhandler, h as u32))
            })
            .into(),
        atomic: int("atomicity").map(|v| v != 0).into(),
        pending_operations: int("async_count").into(),
    };
    let not_tracked = "ROMIO frees the ADIOI_FileD at MPI_File_close and keeps no mark: a closed \
                       file's pointer is freed heap memory";
    Ok(HandleView {
        implementation: format!("{} (ROMIO)", m.implementation_name()),
        kind: HandleKind::File,
        c_handle: Availability::Value(CHandle::Pointer(addr)),
        fortran_index: match fortran {
            Ok(-1) => Availability::not_available(
                "ROMIO assigns a file its Fortran index at the first MPI_File_c2f, which has not \
                 happened",
            ),
            Ok(v) => Availability::Value(v as i32),
            Err(e) => Availability::not_available(e.to_string()),
        },
        predefined: false,
        predefined_name: None,
        object_address: Availability::Value(addr),
        state: Availability::not_available(not_tracked),
        freed_by_application: Availability::not_available(not_tracked),
        freed_by_implementation: Availability::not_available(not_tracked),
        reference_count: Availability::not_available("ROMIO does not count references to files"),
        encoding: None,
        details: Details::File(details),
        notes: Vec::new(),
    })
}

/// The `MPI_File` whose Fortran INTEGER is `value`, from ROMIO's table.
pub(crate) fn from_fortran(m: &Mpich<'_>, value: i32) -> Result<TargetAddr, HandleError> {
    let ctx = &m.ctx;
    let fail = |reason: String| HandleError::Fortran {
        kind: HandleKind::File,
        value,
        reason,
    };
    if value == 0 {
        return Err(fail("0 is MPI_FILE_NULL".to_string()));
    }
    let table = ctx.symbol("ADIOI_Ftable", "ROMIO's table of Fortran file handles")?;
    let last = ctx.symbol("ADIOI_Ftable_ptr", "the last index ROMIO's table uses")?;
    let table = ctx.pointer(table.addr, "ADIOI_Ftable")?;
    let last = ctx.int(last.addr, 4, "ADIOI_Ftable_ptr")?;
    if table.is_null() {
        return Err(fail(
            "no file has been given a Fortran index (ADIOI_Ftable is NULL)".to_string(),
        ));
    }
    if value < 1 || i64::from(value) > last {
        return Err(fail(format!(
            "out of range: ROMIO has handed out indices 1 to {last}"
        )));
    }
    let file = ctx.pointer(at(table, value as u64 * ctx.word()), "ADIOI_Ftable[index]")?;
    if file.is_null() {
        return Err(fail(
            "its table slot is MPI_FILE_NULL (the file was closed)".to_string(),
        ));
    }
    Ok(file)
}
