//! What MPICH 4.0 declares, in its C headers, about the members the CH4
//! decoder reads: the knowledge a debugger's type callbacks cannot give.
//!
//! The message-queue interface lets a library look a type up by name, ask
//! the offset of one of its members by name and ask its size. It cannot
//! say what type a member has, how big a member is, or what an
//! enumeration's values are, and a member whose type has no name (CH4's
//! `dev.ch4` unions and structs) cannot be looked up at all. The CH4
//! decoder asks all of that (`dev.ch4.am.u.recv.tag`, the enumerators of
//! `MPIR_Request.kind`). So every member the decoders read is declared
//! here with the C type MPICH gives it, and
//! [`DeclaredLayouts`](crate::declared_layouts::DeclaredLayouts) answers
//! from the debugger wherever it can:
//!
//! - the offset of a member of a named type, always from the debugger
//!   (`mqs_field_offset`), so a build whose configure options move members
//!   is read right;
//! - a member's size from the debugger's size of its type when the type
//!   has a name (`mqs_sizeof`, typedefs of integers included), from
//!   `mqs_get_type_sizes` for `int`, `long` and pointers, and from the C
//!   standard for `<stdint.h>`'s exact-width types;
//! - a member of an unnamed union at offset 0 (the C rule for unions);
//! - a member of an unnamed struct by C's layout rules over its declared
//!   members, which here are only `int`s, integer typedefs and pointers,
//!   each aligned to its own size on every ABI MPICH runs on;
//! - enumerators from the declarations below.
//!
//! These are MPICH 4.0.2's declarations (`src/include/mpir_*.h`,
//! `src/mpid/ch4/include/mpidpre.h`, `src/mpid/ch4/src/ch4_types.h`); the
//! CH4 decoder refuses other versions (`mpiq_core::identify`). Each is
//! checked against the reference build's DWARF by this crate's tests.

/// A C type as MPICH declares a member.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ty {
    /// `int`: its size from `mqs_get_type_sizes`.
    Int,
    /// A pointer: its size from `mqs_get_type_sizes`.
    Pointer,
    /// A `<stdint.h>` exact-width integer of this many bytes.
    Exact(u64),
    /// An integer typedef (`MPI_Aint`, `MPIR_Context_id_t`): its size from
    /// the debugger, by name.
    Typedef(&'static str),
    /// An enumeration typedef: its size from the debugger, its enumerators
    /// from [`ENUMS`].
    Enum(&'static str),
    /// A struct or union typedef the debugger knows by name: its members'
    /// offsets and its size from the debugger, its members' types from
    /// [`TYPES`].
    Named(&'static str),
    /// An array of a type.
    Array(&'static Ty, Len),
    /// An unnamed union: every member at offset 0.
    Union(&'static [(&'static str, Ty)]),
    /// An unnamed struct, every member declared, in order.
    Struct(&'static [(&'static str, Ty)]),
    /// An unnamed struct that is the last member of a named type, of which
    /// only the last members are declared: they are laid back from the end
    /// of the named type. It is used where the members before them depend
    /// on configure (the network and shared-memory modules' unions of
    /// `MPIDI_Devcomm_t.ch4`), and holds when those members are aligned no
    /// more strictly than the pointer that ends the struct.
    Tail(&'static [(&'static str, Ty)]),
}

/// An array's length.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Len {
    /// A length MPICH's ABI fixes (`MPI_MAX_OBJECT_NAME`).
    Fixed(u64),
    /// A length set by configure: as many elements as fit before the named
    /// member that follows the array.
    Before(&'static str),
}

use Ty::{Array, Enum, Exact, Int, Named, Pointer, Struct, Tail, Typedef, Union};

/// `MPIR_Context_id_t`: `uint16_t`, or `uint32_t` with extended context
/// bits (`mpir_contextid.h`).
const CONTEXT_ID: Ty = Typedef("MPIR_Context_id_t");
/// `MPI_Aint`, an integer as wide as a pointer (`mpi.h`).
const AINT: Ty = Typedef("MPI_Aint");
/// `char name[MPI_MAX_OBJECT_NAME]`; 128 in MPICH's `mpi.h`.
const OBJECT_NAME: Ty = Array(&Exact(1), Len::Fixed(128));
/// `MPIDI_rank_map_t`, CH4's map from a communicator's ranks to processes.
const RANK_MAP: Ty = Named("MPIDI_rank_map_t");

/// The members the decoders read, by named type.
pub(crate) static TYPES: &[(&str, &[(&str, Ty)])] = &[
    (
        "MPIR_Comm_list",
        &[("sequence_number", Int), ("head", Pointer)],
    ),
    (
        "MPIR_Comm",
        &[
            ("handle", Int),
            ("context_id", CONTEXT_ID),
            ("recvcontext_id", CONTEXT_ID),
            ("remote_size", Int),
            ("rank", Int),
            ("local_size", Int),
            ("local_group", Pointer),
            ("comm_kind", Enum("MPIR_Comm_kind_t")),
            ("name", OBJECT_NAME),
            ("comm_next", Pointer),
            ("dev", Named("MPIDI_Devcomm_t")),
        ],
    ),
    (
        "MPIDI_Devcomm_t",
        &[(
            "ch4",
            Tail(&[
                ("map", RANK_MAP),
                ("local_map", RANK_MAP),
                ("csel_comm", Pointer),
            ]),
        )],
    ),
    (
        "MPIDI_rank_map_t",
        &[
            ("mode", Enum("MPIDI_rank_map_mode")),
            ("avtid", Int),
            ("size", Int),
            (
                "reg",
                Union(&[
                    ("offset", Int),
                    (
                        "stride",
                        Struct(&[("offset", Int), ("stride", Int), ("blocksize", Int)]),
                    ),
                ]),
            ),
            (
                "irreg",
                Union(&[
                    ("lut", Struct(&[("t", Pointer), ("lpid", Pointer)])),
                    ("mlut", Struct(&[("t", Pointer), ("gpid", Pointer)])),
                ]),
            ),
        ],
    ),
    ("MPIDI_gpid_t", &[("avtid", Int), ("lpid", Int)]),
    ("MPIR_Group", &[("size", Int), ("lrank_to_lpid", Pointer)]),
    ("MPII_Group_pmap_t", &[("lpid", Exact(8))]),
    (
        "MPIDI_CH4_Global_t",
        &[
            ("n_vcis", Int),
            (
                "per_vci",
                Array(&Named("MPIDI_per_vci_t"), Len::Before("settings")),
            ),
        ],
    ),
    (
        "MPIDI_per_vci_t",
        &[("posted_list", Pointer), ("unexp_list", Pointer)],
    ),
    (
        "MPIR_Request",
        &[
            ("handle", Int),
            ("kind", Enum("MPIR_Request_kind_t")),
            ("cc_ptr", Pointer),
            ("cc", Typedef("MPIR_cc_t")),
            ("comm", Pointer),
            ("next", Pointer),
            ("dev", Named("MPIDI_Devreq_t")),
        ],
    ),
    (
        "MPIDI_Devreq_t",
        &[
            // Only without MPIDI_CH4_DIRECT_NETMOD; the debugger says
            // whether they are there.
            ("is_local", Int),
            ("anysource_partner_request", Pointer),
            (
                "ch4",
                Union(&[
                    ("am", Named("MPIDIG_req_t")),
                    ("preq", Named("MPIDI_prequest_t")),
                    ("self", Named("MPIDI_self_request_t")),
                    (
                        "netmod",
                        Union(&[
                            ("ucx", Named("MPIDI_UCX_request_t")),
                            ("ofi", Named("MPIDI_OFI_request_t")),
                        ]),
                    ),
                ]),
            ),
        ],
    ),
    (
        "MPIDIG_req_t",
        &[
            ("req", Pointer),
            ("buffer", Pointer),
            ("count", AINT),
            ("datatype", Typedef("MPI_Datatype")),
            (
                "u",
                Union(&[
                    ("send", Struct(&[("dest", Int)])),
                    (
                        "recv",
                        Struct(&[("source", Int), ("context_id", CONTEXT_ID), ("tag", Int)]),
                    ),
                ]),
            ),
        ],
    ),
    ("MPIDI_prequest_t", &[("rank", Int), ("tag", Int)]),
    ("MPIDI_UCX_request_t", &[("ucp_request", Pointer)]),
    (
        "MPIDI_self_request_t",
        &[
            ("buf", Pointer),
            ("count", AINT),
            ("datatype", Typedef("MPI_Datatype")),
            ("tag", Int),
            ("context_id", Int),
        ],
    ),
    (
        "MPIDI_UCX_global_t",
        &[
            (
                "ctx",
                Array(&Named("MPIDI_UCX_context_t"), Len::Before("num_vnis")),
            ),
            ("num_vnis", Int),
        ],
    ),
    ("MPIDI_UCX_context_t", &[("worker", Pointer)]),
    ("MPIDIG_req_ext_t", &[("status", Exact(8))]),
    (
        "MPIR_Sendq",
        &[
            ("sreq", Pointer),
            ("tag", Int),
            ("rank", Int),
            ("context_id", Int),
            ("next", Pointer),
        ],
    ),
    ("MPIR_Datatype", &[("size", AINT)]),
    (
        "MPIR_Object_alloc_t",
        &[
            ("avail", Pointer),
            ("initialized", Int),
            ("indirect", Pointer),
            ("indirect_size", Int),
            ("num_allocated", Int),
            ("num_avail", Int),
            ("size", Int),
            ("direct", Pointer),
            ("direct_size", Int),
        ],
    ),
    ("MPIR_Handle_common", &[("handle", Int), ("next", Pointer)]),
];

/// Enumerations, their enumerators in declaration order; MPICH gives none
/// of these explicit values but the first's 0, so each is its index.
pub(crate) static ENUMS: &[(&str, &[&str])] = &[
    (
        "MPIR_Request_kind_t",
        &[
            "MPIR_REQUEST_KIND__UNDEFINED",
            "MPIR_REQUEST_KIND__SEND",
            "MPIR_REQUEST_KIND__RECV",
            "MPIR_REQUEST_KIND__PREQUEST_SEND",
            "MPIR_REQUEST_KIND__PREQUEST_RECV",
            "MPIR_REQUEST_KIND__PREQUEST_COLL",
            "MPIR_REQUEST_KIND__PART_SEND",
            "MPIR_REQUEST_KIND__PART_RECV",
            "MPIR_REQUEST_KIND__PART",
            "MPIR_REQUEST_KIND__GREQUEST",
            "MPIR_REQUEST_KIND__COLL",
            "MPIR_REQUEST_KIND__MPROBE",
            "MPIR_REQUEST_KIND__RMA",
            "MPIR_REQUEST_KIND__LAST",
        ],
    ),
    (
        "MPIDI_rank_map_mode",
        &[
            "MPIDI_RANK_MAP_DIRECT",
            "MPIDI_RANK_MAP_DIRECT_INTRA",
            "MPIDI_RANK_MAP_OFFSET",
            "MPIDI_RANK_MAP_OFFSET_INTRA",
            "MPIDI_RANK_MAP_STRIDE",
            "MPIDI_RANK_MAP_STRIDE_INTRA",
            "MPIDI_RANK_MAP_STRIDE_BLOCK",
            "MPIDI_RANK_MAP_STRIDE_BLOCK_INTRA",
            "MPIDI_RANK_MAP_LUT",
            "MPIDI_RANK_MAP_LUT_INTRA",
            "MPIDI_RANK_MAP_MLUT",
            "MPIDI_RANK_MAP_NONE",
        ],
    ),
    (
        "MPIR_Comm_kind_t",
        &["MPIR_COMM_KIND__INTRACOMM", "MPIR_COMM_KIND__INTERCOMM"],
    ),
];

/// The declared type of `member` of the named type `type_name`.
pub(crate) fn member_type(type_name: &str, member: &str) -> Option<Ty> {
    let (_, members) = TYPES.iter().find(|(t, _)| *t == type_name)?;
    find(members, member)
}

/// The member called `name` of a declared member list.
pub(crate) fn find(members: &[(&str, Ty)], name: &str) -> Option<Ty> {
    members.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The enumerators of a declared enumeration, with their values.
pub(crate) fn enumerators(type_name: &str) -> Option<Vec<(String, i128)>> {
    let (_, names) = ENUMS.iter().find(|(t, _)| *t == type_name)?;
    Some(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i as i128))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use mpidd_read::{LayoutError, LayoutTable, Layouts, TypeOracle};
    use mpiq_core::DecoderKind;

    use super::{Ty, ENUMS, TYPES};
    use crate::declared_layouts::{DeclaredLayouts, ScalarSizes, TypeCallbacks};

    /// The reference MPICH built with CH4 (`scripts/build-ref-mpich.sh
    /// ch4`).
    fn ch4_library() -> PathBuf {
        let prefix = std::env::var_os("MPIDD_REF_MPICH_CH4")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                    .join(".cache/mpidd/mpich-4.0.2-ch4")
            });
        let lib = prefix.join("lib/libmpi.so");
        assert!(
            lib.exists(),
            "the reference MPICH with CH4 is not built at {}: run \
             `bash scripts/build-ref-mpich.sh ch4` (scripts/test.sh does)",
            prefix.display()
        );
        lib
    }

    /// A debugger's type callbacks over the library's DWARF: a type by
    /// name, its size, and one member's offset by name, looking through
    /// anonymous members, as gdb-based and libdw-based hosts answer.
    struct DwarfCallbacks<'a> {
        oracle: &'a TypeOracle,
        sizes: ScalarSizes,
    }

    impl TypeCallbacks for DwarfCallbacks<'_> {
        fn type_size(&self, type_name: &str) -> Result<u64, LayoutError> {
            self.oracle
                .find_type(type_name)
                .map(|t| t.size)
                .map_err(|e| LayoutError::from_type_error(type_name, None, &e))
        }

        fn field_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError> {
            let t = self
                .oracle
                .find_type(type_name)
                .map_err(|e| LayoutError::from_type_error(type_name, Some(member), &e))?;
            t.field(member)
                .map(|f| f.offset)
                .ok_or_else(|| LayoutError::new(type_name, Some(member), "no such member"))
        }

        fn scalar_sizes(&self) -> Option<ScalarSizes> {
            Some(self.sizes)
        }
    }

    /// Every dotted path the declarations describe inside `members`,
    /// stopping at named types (declared on their own).
    fn paths(prefix: &str, members: &[(&str, Ty)], out: &mut Vec<String>) {
        for (name, ty) in members {
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            };
            match ty {
                Ty::Union(inner) | Ty::Struct(inner) | Ty::Tail(inner) => paths(&path, inner, out),
                _ => out.push(path),
            }
        }
    }

    #[test]
    fn the_declarations_agree_with_the_reference_ch4_builds_dwarf() {
        let mut oracle = TypeOracle::new();
        oracle.add_object("libmpi.so", &ch4_library(), None);
        let base = oracle.base_type_sizes().expect("base types");
        let declared = DeclaredLayouts {
            callbacks: DwarfCallbacks {
                oracle: &oracle,
                sizes: ScalarSizes {
                    int: base.int.expect("int"),
                    pointer: base.pointer.expect("pointer"),
                },
            },
        };
        let mut compared = 0;
        for (ty, members) in TYPES {
            let mut all = Vec::new();
            paths("", members, &mut all);
            for path in all {
                match (oracle.member(ty, &path), declared.member(ty, &path)) {
                    (Ok(dwarf), Ok(ours)) => {
                        assert_eq!(ours, dwarf, "{ty}.{path}");
                        compared += 1;
                    }
                    // Members of other configurations: this build has no
                    // shared-memory module and no libfabric.
                    (Err(_), Err(_)) => assert!(
                        ["is_local", "anysource_partner_request", "netmod.ofi"]
                            .iter()
                            .any(|absent| path.contains(absent)),
                        "{ty}.{path} is in neither"
                    ),
                    (dwarf, ours) => panic!("{ty}.{path}: DWARF {dwarf:?}, declared {ours:?}"),
                }
            }
        }
        assert!(compared > 60, "only {compared} members compared");
        for (e, _) in ENUMS {
            assert_eq!(
                declared.enumerators(e).unwrap(),
                oracle.enumerators(e).unwrap(),
                "{e}"
            );
        }
        // Every question the CH4 decoder asks that the DWARF answers is
        // answered the same from the callbacks and the declarations.
        let (from_dwarf, _) =
            LayoutTable::record(&oracle, &|l| DecoderKind::MpichCh4.ask_layouts(l));
        let (from_declared, unanswered) = LayoutTable::record(&declared, &|l| from_dwarf.replay(l));
        assert!(unanswered.is_empty(), "{unanswered:#?}");
        assert_eq!(from_declared, from_dwarf);
    }
}
