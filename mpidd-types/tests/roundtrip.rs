//! Property tests: every record, on every combination of byte order, address
//! width and (where it applies) packing.

use std::fmt::Debug;

use mpidd_types::{
    AddressWidth, ByteOrder, CChars, DebuggerFlags, FieldKind, Mpi2ddDebugState,
    Mpi2ddDirectoryEntry, Mpi2ddInfo, Mpi2ddMagic, Mpi2ddProcdesc, Mpi2ddSpawndesc, MpiFlags,
    MpirProcdesc, MqsCommunicatorRecord, MqsPendingOperationRecord, MqsStatus, Packing, Record,
    TargetAbi, TargetAddr,
};
use proptest::prelude::*;

fn abis() -> impl Strategy<Value = TargetAbi> {
    (
        prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
        prop_oneof![Just(AddressWidth::W32), Just(AddressWidth::W64)],
        prop_oneof![Just(Packing::Packed), Just(Packing::Natural)],
    )
        .prop_map(|(o, w, p)| TargetAbi::new(o, w).with_packing(p))
}

fn addr(abi: TargetAbi) -> BoxedStrategy<TargetAddr> {
    (0..=abi.address_width.max_address())
        .prop_map(TargetAddr)
        .boxed()
}

fn word(abi: TargetAbi) -> BoxedStrategy<i64> {
    match abi.address_width {
        AddressWidth::W32 => any::<i32>().prop_map(i64::from).boxed(),
        AddressWidth::W64 => any::<i64>().boxed(),
    }
}

fn chars<const N: usize>() -> impl Strategy<Value = CChars<N>> {
    proptest::collection::vec(any::<u8>(), N).prop_map(|v| {
        let mut a = [0u8; N];
        a.copy_from_slice(&v);
        CChars(a)
    })
}

fn mpir_procdesc(abi: TargetAbi) -> BoxedStrategy<MpirProcdesc> {
    (addr(abi), addr(abi), any::<i32>())
        .prop_map(|(host_name, executable_name, pid)| MpirProcdesc {
            host_name,
            executable_name,
            pid,
        })
        .boxed()
}

fn mpi2dd_info(abi: TargetAbi) -> BoxedStrategy<Mpi2ddInfo> {
    let a = || addr(abi);
    (
        (any::<[u8; 5]>(), any::<u8>(), any::<u8>(), any::<u8>()),
        (any::<u32>(), any::<u32>()),
        (a(), a(), a(), a(), a(), a(), a(), a()),
        (any::<[i32; 4]>(), any::<[i32; 8]>()),
    )
        .prop_map(
            |((magic, version, variant, state), (df, mf), addrs, (sizes, padding))| Mpi2ddInfo {
                magic: Mpi2ddMagic(magic),
                version,
                variant,
                debug_state: state.into(),
                debugger_flags: DebuggerFlags::from_bits_retain(df),
                mpi_flags: MpiFlags::from_bits_retain(mf),
                dll_name_32: addrs.0,
                dll_name_64: addrs.1,
                meta_host_name: addrs.2,
                meta_executable_name: addrs.3,
                abort_string: addrs.4,
                proctable: addrs.5,
                directory_table: addrs.6,
                metadirectory_table: addrs.7,
                proctable_size: sizes[0],
                directory_size: sizes[1],
                metadirectory_size: sizes[2],
                meta_pid: sizes[3],
                padding,
            },
        )
        .boxed()
}

fn mpi2dd_procdesc(abi: TargetAbi) -> BoxedStrategy<Mpi2ddProcdesc> {
    (
        addr(abi),
        addr(abi),
        addr(abi),
        addr(abi),
        any::<i32>(),
        any::<i32>(),
    )
        .prop_map(|(h, x, s, w, pid, rank)| Mpi2ddProcdesc {
            host_name: h,
            executable_name: x,
            spawn_desc: s,
            comm_world_id: w,
            pid,
            rank,
        })
        .boxed()
}

fn mpi2dd_spawndesc(abi: TargetAbi) -> BoxedStrategy<Mpi2ddSpawndesc> {
    (addr(abi), any::<i32>(), any::<i32>())
        .prop_map(|(w, parent_rank, sequence)| Mpi2ddSpawndesc {
            parent_comm_world_id: w,
            parent_rank,
            sequence,
        })
        .boxed()
}

fn mpi2dd_directoryentry(abi: TargetAbi) -> BoxedStrategy<Mpi2ddDirectoryEntry> {
    (addr(abi), addr(abi), any::<i32>())
        .prop_map(|(h, x, pid)| Mpi2ddDirectoryEntry {
            host_name: h,
            executable_name: x,
            pid,
        })
        .boxed()
}

fn mqs_communicator(abi: TargetAbi) -> BoxedStrategy<MqsCommunicatorRecord> {
    (addr(abi), word(abi), word(abi), chars::<64>())
        .prop_map(
            |(unique_id, local_rank, size, name)| MqsCommunicatorRecord {
                unique_id,
                local_rank,
                size,
                name,
            },
        )
        .boxed()
}

fn mqs_pending_operation(abi: TargetAbi) -> BoxedStrategy<MqsPendingOperationRecord> {
    let w = || word(abi);
    (
        (any::<i32>(), w(), w(), any::<i32>(), w(), w(), any::<i32>()),
        (addr(abi), w(), w(), w(), w()),
        [chars::<64>(), chars(), chars(), chars(), chars()],
    )
        .prop_map(
            |((st, dl, dg, tw, dt, dlen, sb), (buf, al, ag, at, alen), extra_text)| {
                MqsPendingOperationRecord {
                    status: MqsStatus::from(st),
                    desired_local_rank: dl,
                    desired_global_rank: dg,
                    tag_wild: tw,
                    desired_tag: dt,
                    desired_length: dlen,
                    system_buffer: sb,
                    buffer: buf,
                    actual_local_rank: al,
                    actual_global_rank: ag,
                    actual_tag: at,
                    actual_length: alen,
                    extra_text,
                }
            },
        )
        .boxed()
}

/// decode(encode(x)) == x, and the encoding is exactly `size_for` bytes.
fn encode_then_decode<R: Record + PartialEq + Debug>(abi: TargetAbi, x: &R) {
    let bytes = x.to_bytes(abi).expect("in-range value encodes");
    assert_eq!(bytes.len(), R::size_for(abi));
    assert_eq!(&R::decode(&bytes, abi).expect("decodes"), x);
}

/// encode(decode(b)) == b, except that padding comes back as zero.
fn decode_then_encode<R: Record + Debug>(abi: TargetAbi, raw: &[u8]) {
    let b = &raw[..R::size_for(abi)];
    let x = R::decode(b, abi).expect("a full-size buffer always decodes");
    let again = x.to_bytes(abi).expect("a decoded value always encodes");
    let mut want = b.to_vec();
    for gap in R::layout(abi).padding() {
        want[gap].fill(0);
    }
    assert_eq!(again, want, "{} on {abi}", R::C_NAME);
}

/// Any byte string: decoding never panics, and succeeds exactly when the
/// buffer holds a whole record.
fn decode_any<R: Record>(abi: TargetAbi, b: &[u8]) {
    let r = R::decode(b, abi);
    assert_eq!(
        r.is_ok(),
        b.len() >= R::size_for(abi),
        "{} on {abi}",
        R::C_NAME
    );
}

/// The eight combinations of byte order, width and packing.
fn all_abis() -> Vec<TargetAbi> {
    let mut v = Vec::new();
    for o in [ByteOrder::Little, ByteOrder::Big] {
        for w in [AddressWidth::W32, AddressWidth::W64] {
            for p in [Packing::Packed, Packing::Natural] {
                v.push(TargetAbi::new(o, w).with_packing(p));
            }
        }
    }
    v
}

const W32: TargetAbi = TargetAbi::I686;
const W64: TargetAbi = TargetAbi::X86_64;

// Each case runs on all eight ABIs, so no combination is left to chance;
// values are drawn once for each width, as a 32-bit target cannot hold
// 64-bit addresses.
macro_rules! record_properties {
    ($($module:ident: $ty:ty = $strategy:ident;)*) => {$(
        mod $module {
            use super::*;

            proptest! {
                #[test]
                fn decode_of_encode_is_identity(x32 in $strategy(W32), x64 in $strategy(W64)) {
                    for abi in all_abis() {
                        let x = match abi.address_width {
                            AddressWidth::W32 => &x32,
                            AddressWidth::W64 => &x64,
                        };
                        encode_then_decode::<$ty>(abi, x);
                    }
                }

                #[test]
                fn encode_of_decode_is_identity(
                    raw in proptest::collection::vec(any::<u8>(), 512),
                ) {
                    for abi in all_abis() {
                        decode_then_encode::<$ty>(abi, &raw);
                    }
                }

                #[test]
                fn decoding_any_bytes_never_panics(
                    raw in proptest::collection::vec(any::<u8>(), 0..600),
                ) {
                    for abi in all_abis() {
                        decode_any::<$ty>(abi, &raw);
                    }
                }
            }
        }
    )*};
}

record_properties! {
    mpir_procdesc_props: MpirProcdesc = mpir_procdesc;
    mpi2dd_info_props: Mpi2ddInfo = mpi2dd_info;
    mpi2dd_procdesc_props: Mpi2ddProcdesc = mpi2dd_procdesc;
    mpi2dd_spawndesc_props: Mpi2ddSpawndesc = mpi2dd_spawndesc;
    mpi2dd_directoryentry_props: Mpi2ddDirectoryEntry = mpi2dd_directoryentry;
    mqs_communicator_props: MqsCommunicatorRecord = mqs_communicator;
    mqs_pending_operation_props: MqsPendingOperationRecord = mqs_pending_operation;
}

/// Writes `v` as the target would store a 4-byte signed int, independently
/// of the crate's writer.
fn target_i32(abi: TargetAbi, v: i32) -> [u8; 4] {
    match abi.byte_order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    }
}

/// Writes `v` as a signed target word of the ABI's width.
fn target_word(abi: TargetAbi, v: i64) -> Vec<u8> {
    match (abi.address_width, abi.byte_order) {
        (AddressWidth::W32, _) => target_i32(abi, v as i32).to_vec(),
        (AddressWidth::W64, ByteOrder::Little) => v.to_le_bytes().to_vec(),
        (AddressWidth::W64, ByteOrder::Big) => v.to_be_bytes().to_vec(),
    }
}

/// Puts `bytes` at the offset of `field` in an otherwise zero record.
fn record_with<R: Record>(abi: TargetAbi, field: &str, bytes: &[u8]) -> Vec<u8> {
    let layout = R::layout(abi);
    let slot = layout.field(field).expect("field exists");
    let mut out = vec![0u8; layout.size];
    out[slot.offset..slot.offset + bytes.len()].copy_from_slice(bytes);
    out
}

proptest! {
    /// Negative ints and words read back negative on every width: the trap
    /// of the vendor libraries, which show MPI_ANY_SOURCE as 4294967295.
    #[test]
    fn signed_fields_sign_extend(abi in abis(), v in i32::MIN..0) {
        let b = record_with::<MpirProcdesc>(abi, "pid", &target_i32(abi, v));
        prop_assert_eq!(MpirProcdesc::decode(&b, abi).unwrap().pid, v);
        let b = record_with::<Mpi2ddProcdesc>(abi, "pid", &target_i32(abi, v));
        prop_assert_eq!(Mpi2ddProcdesc::decode(&b, abi).unwrap().pid, v);
        let b = record_with::<Mpi2ddDirectoryEntry>(abi, "pid", &target_i32(abi, v));
        prop_assert_eq!(Mpi2ddDirectoryEntry::decode(&b, abi).unwrap().pid, v);
        let b = record_with::<Mpi2ddInfo>(abi, "meta_pid", &target_i32(abi, v));
        prop_assert_eq!(Mpi2ddInfo::decode(&b, abi).unwrap().meta_pid, v);
        let b = record_with::<MqsPendingOperationRecord>(
            abi, "desired_global_rank", &target_word(abi, i64::from(v)));
        prop_assert_eq!(
            MqsPendingOperationRecord::decode(&b, abi).unwrap().desired_global_rank,
            i64::from(v)
        );
        let b = record_with::<MqsCommunicatorRecord>(abi, "local_rank", &target_word(abi, i64::from(v)));
        prop_assert_eq!(MqsCommunicatorRecord::decode(&b, abi).unwrap().local_rank, i64::from(v));
    }

    /// Addresses are unsigned: a 32-bit address with the top bit set is not
    /// sign-extended into a 64-bit one.
    #[test]
    fn addresses_zero_extend(order in prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
                             v in 0x8000_0000u32..=u32::MAX) {
        let abi = TargetAbi::new(order, AddressWidth::W32);
        let raw = match order { ByteOrder::Little => v.to_le_bytes(), ByteOrder::Big => v.to_be_bytes() };
        let b = record_with::<MpirProcdesc>(abi, "host_name", &raw);
        prop_assert_eq!(MpirProcdesc::decode(&b, abi).unwrap().host_name, TargetAddr(u64::from(v)));
    }

    /// Unknown debug states, statuses and flag bits survive a round trip.
    #[test]
    fn unknown_values_are_kept(abi in abis(), state in any::<u8>(), df in any::<u32>(),
                               mf in any::<u32>(), status in any::<i32>()) {
        let info = Mpi2ddInfo {
            debug_state: state.into(),
            debugger_flags: DebuggerFlags::from_bits_retain(df),
            mpi_flags: MpiFlags::from_bits_retain(mf),
            ..Mpi2ddInfo::default()
        };
        let back = Mpi2ddInfo::decode(&info.to_bytes(abi).unwrap(), abi).unwrap();
        prop_assert_eq!(u8::from(back.debug_state), state);
        prop_assert_eq!(back.debugger_flags.bits(), df);
        prop_assert_eq!(back.mpi_flags.bits(), mf);
        prop_assert_eq!(i32::from(MqsStatus::from(status)), status);
    }

    /// Values too wide for a 32-bit target are refused, naming the field.
    #[test]
    fn too_wide_values_are_refused(order in prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
                                   a in 0x1_0000_0000u64.., w in (i64::from(i32::MAX) + 1)..) {
        let abi = TargetAbi::new(order, AddressWidth::W32);
        let e = MpirProcdesc { host_name: TargetAddr(a), executable_name: TargetAddr(0), pid: 0 };
        let err = e.to_bytes(abi).unwrap_err().to_string();
        prop_assert!(err.contains("MPIR_PROCDESC.host_name"), "{}", err);
        let c = MqsCommunicatorRecord { unique_id: TargetAddr(0), local_rank: w, size: 0, name: CChars::empty() };
        let err = c.to_bytes(abi).unwrap_err().to_string();
        prop_assert!(err.contains("mqs_communicator.local_rank"), "{}", err);
    }
}

#[test]
fn packing_applies_only_to_mpi2dd_records() {
    let lp64 = TargetAbi::X86_64;
    let packed = lp64.with_packing(Packing::Packed);
    assert_eq!(Mpi2ddDirectoryEntry::size_for(lp64), 24);
    assert_eq!(Mpi2ddDirectoryEntry::size_for(packed), 20);
    assert_eq!(MpirProcdesc::size_for(packed), 24);
    assert_eq!(MqsPendingOperationRecord::size_for(packed), 416);
    assert!(Mpi2ddDirectoryEntry::layout(packed).padding().is_empty());
    assert_eq!(Mpi2ddDirectoryEntry::layout(lp64).padding(), vec![20..24]);
}

#[test]
fn every_field_kind_is_covered() {
    // The records together use every kind the layout engine knows, so the
    // properties above exercise each reader and writer.
    let kinds: Vec<FieldKind> = [
        MpirProcdesc::FIELDS,
        Mpi2ddInfo::FIELDS,
        MqsPendingOperationRecord::FIELDS,
    ]
    .concat()
    .iter()
    .map(|f| f.kind)
    .collect();
    for k in [
        FieldKind::U8,
        FieldKind::I32,
        FieldKind::U32,
        FieldKind::Addr,
        FieldKind::Word,
    ] {
        assert!(kinds.contains(&k), "{k:?} unused");
    }
}

#[test]
fn scroll_contexts_work() {
    use scroll::{Pread, Pwrite};
    let abi = TargetAbi::S390X;
    let e = Mpi2ddSpawndesc {
        parent_comm_world_id: TargetAddr(0x1234_5678_9abc),
        parent_rank: -3,
        sequence: 2,
    };
    let mut buf = [0u8; 40];
    let n = buf.pwrite_with(&e, 8, abi).unwrap();
    assert_eq!(n, 16);
    assert_eq!(&buf[8..16], &[0, 0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc]);
    let back: Mpi2ddSpawndesc = buf.pread_with(8, abi).unwrap();
    assert_eq!(back, e);
    assert_eq!(
        <Mpi2ddSpawndesc as scroll::ctx::SizeWith<TargetAbi>>::size_with(&abi),
        16
    );
    let short: Result<Mpi2ddSpawndesc, _> = buf[..10].pread_with(0, abi);
    assert!(short.is_err());
}

#[test]
fn serde_uses_the_interface_field_names() {
    let e = MpirProcdesc {
        host_name: TargetAddr(1),
        executable_name: TargetAddr(2),
        pid: -1,
    };
    let v = serde_json::to_value(&e).unwrap();
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["executable_name", "host_name", "pid"]);
    assert_eq!(v["pid"], -1);
    let back: MpirProcdesc = serde_json::from_value(v).unwrap();
    assert_eq!(back, e);

    let info = Mpi2ddInfo::default();
    let v = serde_json::to_value(&info).unwrap();
    for k in [
        "magic",
        "debug_state",
        "debugger_flags",
        "mpi_flags",
        "dll_name_32",
        "meta_host_name",
        "metadirectory_table",
        "proctable_size",
        "meta_pid",
    ] {
        assert!(v.get(k).is_some(), "{k} missing from {v}");
    }
    let back: Mpi2ddInfo = serde_json::from_value(v).unwrap();
    assert_eq!(back, info);

    let op = MqsCommunicatorRecord {
        unique_id: TargetAddr(7),
        local_rank: -1,
        size: 2,
        name: CChars::from_text("MPI_COMM_WORLD").unwrap(),
    };
    let v = serde_json::to_value(&op).unwrap();
    assert_eq!(v["name"], "MPI_COMM_WORLD");
    assert_eq!(v["local_rank"], -1);
}

#[test]
fn magic_errors_name_the_byte() {
    for (i, bad) in [
        *b"XPI2\x7f",
        *b"MXI2\x7f",
        *b"MPX2\x7f",
        *b"MPIX\x7f",
        *b"MPI2\x00",
    ]
    .iter()
    .enumerate()
    {
        let info = Mpi2ddInfo {
            magic: Mpi2ddMagic(*bad),
            ..Mpi2ddInfo::default()
        };
        match info.validate() {
            Err(mpidd_types::TypesError::BadMagic {
                index,
                found,
                expected,
                ..
            }) => {
                assert_eq!(index, i);
                assert_eq!(found, bad[i]);
                assert_eq!(expected, b"MPI2\x7f"[i]);
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let v = Mpi2ddInfo {
        version: 2,
        ..Mpi2ddInfo::default()
    };
    let msg = v.validate().unwrap_err().to_string();
    assert!(msg.contains("version is 2"), "{msg}");
    assert_eq!(
        Mpi2ddDebugState::from(0),
        Mpi2ddDebugState::Unknown(0),
        "0 is not a defined MPI2DD state"
    );
}
