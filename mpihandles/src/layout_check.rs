//! The check a layout profile passes before it is used on a process: a
//! few objects whose contents every initialised MPI process knows (the
//! predefined communicators) must read as what they are. A profile made
//! for another build, or chosen for a library that has no build-id only
//! by the digest of its code, reads them wrong and is refused with one
//! line that says which object read as what.
//!
//! What the layouts do not describe, or a process without the objects,
//! is not checked: only a contradiction refuses them.
//!
//! ```
//! use mpidd_read::{LayoutTable, SymbolTable, SyntheticMemory};
//! use mpidd_types::TargetAbi;
//!
//! // A process with no MPI symbol at all: nothing to check, nothing refused.
//! let memory = SyntheticMemory::new(TargetAbi::X86_64);
//! let checked = mpihandles::check_layouts(
//!     &memory,
//!     &SymbolTable::new(),
//!     &LayoutTable::default(),
//!     &mpihandles::Limits::default(),
//! );
//! assert!(checked.is_ok());
//! ```

use mpidd_read::{Layouts, Limits, SymbolSource, TargetMemory};
use mpidd_types::TargetAddr;

use crate::mpich::pools;
use crate::target::{at, Ctx};
use crate::HandleKind;

/// MPICH's communicator handles: `MPI_COMM_WORLD`, `MPI_COMM_SELF`.
const MPICH_WORLD_HANDLE: i64 = 0x4400_0000;
const MPICH_SELF_HANDLE: i64 = 0x4400_0001;

/// The first word of every object of a debug build of Open MPI
/// (`--enable-debug`): `opal_object_t.obj_magic_id`, which moves every
/// member after it.
const OMPI_DEBUG_MAGIC: u64 = 0xdeaf_beed_deaf_beed;

/// ob1's request free lists (libmpi's), with the class of their items
/// when ob1 is the PML: every request the queue decoder reads is one.
const OB1_REQUEST_LISTS: [(&str, &str); 2] = [
    ("mca_pml_base_send_requests", "mca_pml_ob1_send_request_t"),
    ("mca_pml_base_recv_requests", "mca_pml_ob1_recv_request_t"),
];

/// Predefined objects of libmpi whose kinds the handle views read, with
/// the class each is of: each class gives its objects' size, which must be
/// the layouts' (an op's tables grew in 4.1.2, say). An object whose
/// symbol or class is another is not checked.
const OMPI_PREDEFINED_OBJECTS: [(&str, &str); 7] = [
    ("ompi_mpi_op_sum", "ompi_op_t"),
    ("ompi_mpi_int", "ompi_datatype_t"),
    ("ompi_mpi_errors_are_fatal", "ompi_errhandler_t"),
    ("ompi_mpi_group_empty", "ompi_group_t"),
    ("ompi_mpi_info_null", "ompi_info_t"),
    ("ompi_mpi_file_null", "ompi_file_t"),
    ("ompi_mpi_win_null", "ompi_win_t"),
];

/// Why a process's layouts were refused: the object that read wrong, its
/// address, and what it read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LayoutsRefused(pub String);

/// Checks `layouts` against the predefined communicators of the process:
/// Open MPI's `ompi_mpi_comm_world` and `ompi_mpi_comm_self` must be named
/// `MPI_COMM_WORLD` and `MPI_COMM_SELF`, with a rank of 0 in the latter;
/// MPICH's `MPIR_Comm_builtin[0]` and `[1]` must hold the handles of the
/// two and their names, the layouts' debugger-support members must go
/// with the library's debugger globals (`--enable-debuginfo`), and the
/// object allocators must make objects of the layouts' sizes. A process
/// before `MPI_Init` has no names yet and is refused too, which the reason
/// says. A check whose symbol or member is not there is skipped.
pub fn check_layouts(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    layouts: &dyn Layouts,
    limits: &Limits,
) -> Result<(), LayoutsRefused> {
    let ctx = Ctx::new(memory, symbols, layouts, *limits);
    if let Some(world) = symbols.lookup("ompi_mpi_comm_world") {
        let self_comm = symbols.lookup("ompi_mpi_comm_self").ok_or_else(|| {
            LayoutsRefused("ompi_mpi_comm_world is there but not ompi_mpi_comm_self".into())
        })?;
        // First, as a debug build's objects are all shifted by it: a
        // name read through other layouts would say less.
        check_ompi_debug_magic(&ctx, "ompi_mpi_comm_world", world.addr)?;
        check_ompi_comm(
            &ctx,
            "ompi_mpi_comm_world",
            world.addr,
            "MPI_COMM_WORLD",
            None,
        )?;
        check_ompi_comm(
            &ctx,
            "ompi_mpi_comm_self",
            self_comm.addr,
            "MPI_COMM_SELF",
            Some(0),
        )?;
        // Each object names its class, and the class its size: the
        // communicators the decoders read, and the requests of ob1's free
        // lists, every request the queue decoder reads coming from them.
        check_ompi_object_class(
            &ctx,
            "ompi_mpi_comm_world",
            world.addr,
            "ompi_communicator_t",
            true,
        )?;
        for (list, class) in OB1_REQUEST_LISTS {
            if let Some(fl) = symbols.lookup(list) {
                check_ompi_free_list_class(&ctx, list, fl.addr, class)?;
            }
        }
        for (symbol, class) in OMPI_PREDEFINED_OBJECTS {
            if let Some(obj) = symbols.lookup(symbol) {
                check_ompi_object_class(&ctx, symbol, obj.addr, class, false)?;
            }
        }
        return Ok(());
    }
    if let Some(builtin) = symbols.lookup("MPIR_Comm_builtin") {
        let size = ctx
            .size_of("MPIR_Comm")
            .map_err(|e| LayoutsRefused(format!("MPIR_Comm: {e}")))?;
        check_mpich_comm(&ctx, builtin.addr, 0, MPICH_WORLD_HANDLE, "MPI_COMM_WORLD")?;
        check_mpich_comm(
            &ctx,
            at(builtin.addr, size),
            1,
            MPICH_SELF_HANDLE,
            "MPI_COMM_SELF",
        )?;
        check_mpich_debugger_support(&ctx)?;
        return check_mpich_pool_sizes(&ctx);
    }
    // Nothing known to check the layouts on: they are not refused for it.
    Ok(())
}

/// An Open MPI communicator's name: a character array in 4.1, a pointer
/// to one in 5.0, told apart by the member's size.
fn ompi_name(
    ctx: &Ctx<'_>,
    comm: TargetAddr,
    symbol: &str,
) -> Result<Option<String>, LayoutsRefused> {
    let refused = |e: &dyn std::fmt::Display| LayoutsRefused(format!("{symbol}: {e}"));
    // A member the layouts do not describe is not checked.
    let Ok(m) = ctx.m("ompi_communicator_t", "c_name") else {
        return Ok(None);
    };
    let name_at = at(comm, m.offset);
    if m.size == ctx.word() {
        let pointer = ctx
            .int(name_at, m.size, "ompi_communicator_t.c_name")
            .map_err(|e| refused(&e))?;
        let target = ctx.address(pointer);
        ctx.string(target).map(Some).map_err(|e| refused(&e))
    } else {
        let raw = ctx
            .bytes(
                name_at,
                m.size.min(ctx.limits.max_string_len as u64),
                "ompi_communicator_t.c_name",
            )
            .map_err(|e| refused(&e))?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        Ok(Some(String::from_utf8_lossy(&raw[..end]).into_owned()))
    }
}

fn check_ompi_comm(
    ctx: &Ctx<'_>,
    symbol: &str,
    comm: TargetAddr,
    want: &str,
    rank: Option<i64>,
) -> Result<(), LayoutsRefused> {
    let Some(name) = ompi_name(ctx, comm, symbol)? else {
        return Ok(());
    };
    if name != want {
        return Err(LayoutsRefused(format!(
            "{symbol} at {comm} is named {name:?} through these layouts, not {want:?} \
             (a profile of another build, or a process before MPI_Init)"
        )));
    }
    if let Some(want_rank) = rank {
        let Ok(m) = ctx.m("ompi_communicator_t", "c_my_rank") else {
            return Ok(());
        };
        let got = ctx
            .int(at(comm, m.offset), m.size, "ompi_communicator_t.c_my_rank")
            .map_err(|e| LayoutsRefused(format!("{symbol}: {e}")))?;
        if got != want_rank {
            return Err(LayoutsRefused(format!(
                "{symbol} at {comm} has rank {got} through these layouts, not {want_rank}"
            )));
        }
    }
    Ok(())
}

/// Refuses layouts without `obj_magic_id` for a process whose object at
/// `obj` starts with the debug build's magic: a family or profile of
/// builds without `--enable-debug` never reads a debug build.
fn check_ompi_debug_magic(
    ctx: &Ctx<'_>,
    symbol: &str,
    obj: TargetAddr,
) -> Result<(), LayoutsRefused> {
    // Layouts of a debug build describe the magic, and are not refused
    // for it.
    if ctx.m("opal_object_t", "obj_magic_id").is_ok() {
        return Ok(());
    }
    // The magic is a uint64_t on every ABI, in the target's byte order.
    let word = ctx
        .int(obj, 8, "opal_object_t.obj_magic_id")
        .map_err(|e| LayoutsRefused(format!("{symbol}: {e}")))? as u64;
    if word == OMPI_DEBUG_MAGIC {
        return Err(LayoutsRefused(format!(
            "{symbol} at {obj} starts with obj_magic_id {OMPI_DEBUG_MAGIC:#x}: a debug build of \
             Open MPI (--enable-debug), whose every object these layouts of a build without it \
             read 8 bytes off"
        )));
    }
    Ok(())
}

/// Where `opal_class_t` keeps `cls_sizeof`: the layouts' answer, else its
/// last word, where Open MPI 4.1's and 5.0's `opal_class_t` have it (the
/// shipped profiles record the class's size but not that member).
fn cls_sizeof(ctx: &Ctx<'_>) -> Option<(u64, u64)> {
    if let Ok(m) = ctx.m("opal_class_t", "cls_sizeof") {
        return Some((m.offset, m.size));
    }
    let size = ctx.size_of("opal_class_t").ok()?;
    let word = ctx.word();
    (size >= word).then(|| (size - word, word))
}

/// The object at `obj` (`what`) must name `want` as its class (unless
/// `exact` is false and it is another class: a build that names its
/// classes otherwise), and the class give the layouts' size of it.
fn check_ompi_object_class(
    ctx: &Ctx<'_>,
    what: &str,
    obj: TargetAddr,
    want: &str,
    exact: bool,
) -> Result<(), LayoutsRefused> {
    let Ok(class_m) = ctx.m("opal_object_t", "obj_class") else {
        return Ok(());
    };
    let class = ctx
        .pointer(at(obj, class_m.offset), "opal_object_t.obj_class")
        .map_err(|e| LayoutsRefused(format!("{what}: {e}")))?;
    check_ompi_class(ctx, &format!("{what} at {obj}"), class, want, exact)
}

/// The items of the free list at `fl` (`list`) must be of class `want`,
/// of the layouts' size, when the list holds that class at all: another
/// PML's requests, or a list not set up yet (no class), are not ob1's,
/// which its decoder then does not read.
fn check_ompi_free_list_class(
    ctx: &Ctx<'_>,
    list: &str,
    fl: TargetAddr,
    want: &str,
) -> Result<(), LayoutsRefused> {
    let Ok(class_m) = ctx.m("opal_free_list_t", "fl_frag_class") else {
        return Ok(());
    };
    let class = ctx
        .pointer(at(fl, class_m.offset), "opal_free_list_t.fl_frag_class")
        .map_err(|e| LayoutsRefused(format!("{list}: {e}")))?;
    if class.is_null() {
        return Ok(());
    }
    check_ompi_class(ctx, &format!("the items of {list}"), class, want, false)
}

/// The `opal_class_t` at `class` must be named `want` (unless `exact` is
/// false and it is another class) and its `cls_sizeof` must equal the
/// layouts' size of `want`.
fn check_ompi_class(
    ctx: &Ctx<'_>,
    what: &str,
    class: TargetAddr,
    want: &str,
    exact: bool,
) -> Result<(), LayoutsRefused> {
    let (Ok(name_m), Some((sizeof_at, sizeof_len)), Ok(want_size)) = (
        ctx.m("opal_class_t", "cls_name"),
        cls_sizeof(ctx),
        ctx.size_of(want),
    ) else {
        return Ok(());
    };
    let refused = |e: &dyn std::fmt::Display| {
        LayoutsRefused(format!("{what}: its class at {class} cannot be read: {e}"))
    };
    let name_at = ctx
        .pointer(at(class, name_m.offset), "opal_class_t.cls_name")
        .map_err(|e| refused(&e))?;
    let name = ctx.string(name_at).map_err(|e| refused(&e))?;
    if name != want {
        if !exact {
            return Ok(());
        }
        return Err(LayoutsRefused(format!(
            "{what} is of class {name:?} (opal_class_t at {class}), not {want:?}"
        )));
    }
    let size = ctx
        .int(at(class, sizeof_at), sizeof_len, "opal_class_t.cls_sizeof")
        .map_err(|e| refused(&e))?;
    if u64::try_from(size).ok() != Some(want_size) {
        return Err(LayoutsRefused(format!(
            "{what}: class {want} gives its objects {size} bytes (cls_sizeof), these layouts \
             {want_size}"
        )));
    }
    Ok(())
}

/// MPICH's configure choice `--enable-debuginfo` (`HAVE_DEBUGGER_SUPPORT`)
/// moves members of `MPIR_Request` and no object's size need show it: up
/// to 4.0.2, `u.persist.dbg_next` comes before `u.persist.real_request`
/// (the union's size stays); from 4.0.3, `send`, `recv` and `unexp` come
/// before `next`. The same choice defines the debugger's send queue
/// `MPIR_Sendq_head` (src/mpi/debugger/dbginit.c), which such a build
/// exports. So layouts that hold either kind of member must come with a
/// library that exports it, and layouts that hold neither with one that
/// does not. Layouts that do not describe `u.persist.real_request` are
/// not checked.
fn check_mpich_debugger_support(ctx: &Ctx<'_>) -> Result<(), LayoutsRefused> {
    if ctx.m("MPIR_Request", "u.persist.real_request").is_err() {
        return Ok(());
    }
    let layouts_have = ctx.m("MPIR_Request", "u.persist.dbg_next").is_ok()
        || ctx.m("MPIR_Request", "send").is_ok();
    let process_has = ctx.symbols.lookup("MPIR_Sendq_head").is_some();
    match (layouts_have, process_has) {
        (true, false) => Err(LayoutsRefused(
            "these layouts are of a build with debugger support (--enable-debuginfo: \
             MPIR_Request holds the send queue's members), and the library has no \
             MPIR_Sendq_head: it was built without"
                .into(),
        )),
        (false, true) => Err(LayoutsRefused(
            "these layouts are of a build without debugger support (no --enable-debuginfo: \
             MPIR_Request holds no send queue's members), and the library has \
             MPIR_Sendq_head: it was built with"
                .into(),
        )),
        _ => Ok(()),
    }
}

/// Each object allocator MPICH keeps (`MPIR_Comm_mem`, `MPIR_Request_mem`,
/// ...) records the size of its objects, as the library was compiled:
/// the layouts must give its type that size. A configure choice that adds
/// or drops a member (debugger support, a device's request fields) moves
/// the size with it, which the predefined communicators alone may not
/// show. An allocator the process or the layouts do not describe is not
/// checked; one MPI_Init has not set up yet records no size.
fn check_mpich_pool_sizes(ctx: &Ctx<'_>) -> Result<(), LayoutsRefused> {
    let Ok(size_m) = ctx.m("MPIR_Object_alloc_t", "size") else {
        return Ok(());
    };
    for kind in HandleKind::ALL {
        let Some(spec) = pools::spec(kind) else {
            continue;
        };
        let (Some(mem), Ok(want)) = (ctx.symbols.lookup(spec.mem), ctx.size_of(spec.object_type))
        else {
            continue;
        };
        let got = ctx
            .int(
                at(mem.addr, size_m.offset),
                size_m.size,
                "MPIR_Object_alloc_t.size",
            )
            .map_err(|e| LayoutsRefused(format!("{}: {e}", spec.mem)))?;
        if got != 0 && u64::try_from(got).ok() != Some(want) {
            return Err(LayoutsRefused(format!(
                "{} at {} makes {} objects of {got} bytes, where these layouts say {want}",
                spec.mem, mem.addr, spec.object_type
            )));
        }
    }
    Ok(())
}

fn check_mpich_comm(
    ctx: &Ctx<'_>,
    comm: TargetAddr,
    index: usize,
    want_handle: i64,
    want_name: &str,
) -> Result<(), LayoutsRefused> {
    let what = format!("MPIR_Comm_builtin[{index}] at {comm}");
    let refused = |e: &dyn std::fmt::Display| LayoutsRefused(format!("{what}: {e}"));
    // A member the layouts do not describe is not checked.
    let Ok(handle) = ctx.m("MPIR_Comm", "handle") else {
        return Ok(());
    };
    let got = ctx
        .int(at(comm, handle.offset), handle.size, "MPIR_Comm.handle")
        .map_err(|e| refused(&e))?;
    // The handle is an `int`: compared as its 32 bits.
    if got & 0xffff_ffff != want_handle {
        return Err(LayoutsRefused(format!(
            "{what} holds handle {:#x} through these layouts, not {want_handle:#x} ({want_name})",
            got & 0xffff_ffff
        )));
    }
    let Ok(name) = ctx.m("MPIR_Comm", "name") else {
        return Ok(());
    };
    let raw = ctx
        .bytes(
            at(comm, name.offset),
            name.size.min(ctx.limits.max_string_len as u64),
            "MPIR_Comm.name",
        )
        .map_err(|e| refused(&e))?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    let got_name = String::from_utf8_lossy(&raw[..end]);
    if got_name != want_name {
        return Err(LayoutsRefused(format!(
            "{what} is named {got_name:?} through these layouts, not {want_name:?} \
             (a profile of another build, or a process before MPI_Init)"
        )));
    }
    Ok(())
}

#[cfg(all(test, feature = "synthetic"))]
mod tests {
    use super::*;
    use crate::ompi::{CommSpec, SyntheticOmpi, SYNTHETIC_OBJECT};
    use mpidd_read::LayoutTable;
    use mpidd_types::TargetAbi;

    #[test]
    fn the_layouts_a_process_was_built_with_pass_and_shifted_ones_do_not() {
        for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
            let word = abi.address_bytes() as u64;
            let mut s = SyntheticOmpi::new(abi, SyntheticOmpi::layouts(word));
            s.world();
            let self_comm = s.comm(&CommSpec {
                name: "MPI_COMM_SELF".to_string(),
                rank: 0,
                members: vec![1],
                ..CommSpec::default()
            });
            let (memory, mut symbols, layouts) = s.finish();
            symbols.insert(SYNTHETIC_OBJECT, "ompi_mpi_comm_self", self_comm, 0);
            check_layouts(&memory, &symbols, &layouts, &Limits::default())
                .unwrap_or_else(|e| panic!("{abi:?}: {e}"));

            // The same layouts with the name eight bytes further on: a
            // profile of a build with one more member before it.
            let mut shifted = LayoutTable::default();
            let name = layouts.member("ompi_communicator_t", "c_name").unwrap();
            shifted.add_type(
                "ompi_communicator_t",
                layouts.size_of("ompi_communicator_t").unwrap(),
            );
            shifted.add_member("ompi_communicator_t", "c_name", name.offset + 8, name.size);
            let refused = check_layouts(&memory, &symbols, &shifted, &Limits::default())
                .expect_err("a shifted name cannot read MPI_COMM_WORLD");
            assert!(refused.0.contains("ompi_mpi_comm_world"), "{refused}");
        }
    }

    /// The synthetic process of `abi` with its world and self
    /// communicators, and its layouts; `world` is handed the world's address.
    fn process(
        abi: TargetAbi,
        world: impl FnOnce(&mut SyntheticOmpi, TargetAddr),
    ) -> (
        mpidd_read::SyntheticMemory,
        mpidd_read::SymbolTable,
        LayoutTable,
    ) {
        let word = abi.address_bytes() as u64;
        let mut s = SyntheticOmpi::new(abi, SyntheticOmpi::layouts(word));
        let w = s.world();
        let self_comm = s.comm(&CommSpec {
            name: "MPI_COMM_SELF".to_string(),
            rank: 0,
            members: vec![1],
            ..CommSpec::default()
        });
        world(&mut s, w);
        let (memory, mut symbols, layouts) = s.finish();
        symbols.insert(SYNTHETIC_OBJECT, "ompi_mpi_comm_self", self_comm, 0);
        (memory, symbols, layouts)
    }

    #[test]
    fn a_debug_builds_magic_is_refused_by_layouts_without_it() {
        let (memory, symbols, layouts) = process(TargetAbi::X86_64, |s, w| {
            s.int_at(w, 8, OMPI_DEBUG_MAGIC);
        });
        let refused = check_layouts(&memory, &symbols, &layouts, &Limits::default())
            .expect_err("a debug build's object read through layouts without the magic");
        assert!(
            refused.0.contains("obj_magic_id") && refused.0.contains("--enable-debug"),
            "{refused}"
        );
        // Layouts that describe the magic are not refused for it.
        let mut debug = layouts.clone();
        debug.add_member("opal_object_t", "obj_magic_id", 0, 8);
        let checked = check_layouts(&memory, &symbols, &debug, &Limits::default());
        assert!(
            !checked.is_err_and(|e| e.0.contains("obj_magic_id")),
            "debug layouts are not refused for the magic"
        );
    }

    #[test]
    fn a_communicator_whose_class_gives_another_size_is_refused() {
        for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
            let (memory, symbols, layouts) = process(abi, |_, _| {});
            // Another family's communicator: the name where it was, the
            // type 32 bytes longer (as 5.0's is than 4.1's).
            let mut longer = layouts.clone();
            let size = layouts.size_of("ompi_communicator_t").unwrap();
            longer.add_type("ompi_communicator_t", size + 32);
            let refused = check_layouts(&memory, &symbols, &longer, &Limits::default())
                .expect_err("the class gives the size the process was built with");
            assert!(
                refused.0.contains("cls_sizeof")
                    && refused.0.contains(&format!("{size} bytes"))
                    && refused.0.contains(&format!("{}", size + 32)),
                "{abi:?}: {refused}"
            );
        }
    }
}
