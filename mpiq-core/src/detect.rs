//! The one entry point that chooses a native decoder: [`identify`] tells
//! the target's MPI from its symbols and version strings, [`detect`] builds
//! the decoder over the target's layouts and keeps it with the target as a
//! [`QueueReader`].
//!
//! This file imports the decoders (`mpich`, `ompi`); they import only the
//! trait and the error of `decoder`, never this file.

use mpidd_read::{
    choose_loaded_layouts, LayeredLayouts, LayoutOrigin, LayoutProfile, Limits, LoadedObjects,
    NoLayouts, SymbolSource, Target, TargetParts,
};
use mpidd_types::TargetAddr;

use crate::decoder::{DecodeError, FoundLibrary, QueueDecoder, DECODED, IDENTIFY};
use crate::model::ProcessQueues;
use crate::mpich::{MpichCh3, MpichCh4};
use crate::ompi::communicators::{selected_pml, CommLayout};
use crate::ompi::version::ompi_version;
use crate::ompi::{OmpiOb1, OmpiUcx};
use mpidd_read::TargetMemory;
use mpidd_read::{LayoutError, Layouts};

/// A decoder found by [`detect`], kept with the target it was found for
/// and the limits to read it with: what a caller holds to read a
/// process's queues, once or again after the process moved on.
///
/// ```no_run
/// use mpidd_read::{CoreTarget, Limits};
/// use std::path::Path;
///
/// let rank = CoreTarget::open(Path::new("rank0.core"), None, None)?;
/// let reader = mpiq_core::detect(&rank, &Limits::default())?;
/// let queues = reader.read_queues()?;
/// println!("{}: {} communicators", reader.name(), queues.communicators.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// It borrows its target as `&dyn Target`, which promises no
/// thread-safety, so it is neither `Send` nor `Sync`. To read from several
/// threads keep the decoder ([`QueueReader::into_decoder`], `Send + Sync`)
/// and hand each thread's target to [`QueueDecoder::read_queues`].
pub struct QueueReader<'t> {
    decoder: Box<dyn QueueDecoder>,
    identified: Identified,
    target: &'t dyn Target,
    limits: Limits,
}

impl<'t> QueueReader<'t> {
    /// What it decodes, with the version found, e.g.
    /// `MPICH 4.0.2 (ch3:nemesis)`.
    pub fn name(&self) -> &str {
        self.decoder.name()
    }

    /// The MPI it found: the decoder chosen, the library, its version
    /// and device. With the decoder's [`DecoderKind::checked_on`], what a
    /// reading's answer rests on.
    pub fn identified(&self) -> &Identified {
        &self.identified
    }

    /// Reads every communicator and queue of the target.
    pub fn read_queues(&self) -> Result<ProcessQueues, DecodeError> {
        self.decoder.read_queues(self.target, &self.limits)
    }

    /// Reads the target's queues from its MPI's debugger lists
    /// ([`QueueDecoder::read_debugger_lists`]).
    pub fn read_debugger_lists(&self) -> Result<ProcessQueues, DecodeError> {
        self.decoder.read_debugger_lists(self.target, &self.limits)
    }

    /// The target it reads.
    pub fn target(&self) -> &'t dyn Target {
        self.target
    }

    /// The decoder alone, to read other targets that load the same build
    /// of the library ([`QueueDecoder::read_queues`]).
    pub fn into_decoder(self) -> Box<dyn QueueDecoder> {
        self.decoder
    }
}

/// The native decoders, by the name `mpidd profile` and
/// [`ProcessQueues::source`] know them by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecoderKind {
    /// MPICH with the CH3 device ([`MpichCh3`]).
    MpichCh3,
    /// MPICH 4.0 with the CH4 device ([`MpichCh4`]).
    MpichCh4,
    /// Open MPI with the ob1 PML ([`OmpiOb1`]).
    OmpiOb1,
    /// Open MPI with the UCX PML ([`OmpiUcx`]).
    OmpiUcx,
}

impl DecoderKind {
    /// Every native decoder.
    pub const ALL: &'static [DecoderKind] = &[
        DecoderKind::MpichCh3,
        DecoderKind::MpichCh4,
        DecoderKind::OmpiOb1,
        DecoderKind::OmpiUcx,
    ];

    /// Its short name, e.g. `mpich-ch3`.
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::MpichCh3 => "mpich-ch3",
            DecoderKind::MpichCh4 => "mpich-ch4",
            DecoderKind::OmpiOb1 => "ompi-ob1",
            DecoderKind::OmpiUcx => "ompi-ucx",
        }
    }

    /// The MPI implementation it reads, as profiles name it.
    pub fn implementation(self) -> &'static str {
        match self {
            DecoderKind::MpichCh3 | DecoderKind::MpichCh4 => "MPICH",
            DecoderKind::OmpiOb1 | DecoderKind::OmpiUcx => "Open MPI",
        }
    }

    /// The builds this decoder's reading was checked on against a debug
    /// build's DWARF and the vendor's message-queue library: what a
    /// reading of another version rests on beyond its layouts.
    pub fn checked_on(self) -> &'static str {
        match self {
            DecoderKind::MpichCh3 => "MPICH 4.0.2 with ch3:nemesis",
            DecoderKind::MpichCh4 => "MPICH 4.0.2 with ch4:ucx",
            DecoderKind::OmpiOb1 => "Open MPI 4.1.4 with the ob1 PML",
            DecoderKind::OmpiUcx => "Open MPI 4.1.4 with the ucx PML over UCX 1.13.1",
        }
    }

    /// The decoder called `name`, if any.
    pub fn from_name(name: &str) -> Option<DecoderKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Asks `layouts` every layout question the decoder may ask, so that a
    /// profile can be written for it ([`mpidd_read::LayoutProfile::write`])
    /// and a source can be checked for it before any read.
    pub fn ask_layouts(self, layouts: &dyn Layouts) {
        match self {
            DecoderKind::MpichCh3 => MpichCh3::ask_layouts(layouts),
            DecoderKind::MpichCh4 => MpichCh4::ask_layouts(layouts),
            DecoderKind::OmpiOb1 => OmpiOb1::ask_layouts(layouts),
            DecoderKind::OmpiUcx => OmpiUcx::ask_layouts(layouts),
        }
    }

    /// What the decoder cannot do without that `layouts` lacks; empty when
    /// it can decode with them (questions it can do without, such as
    /// those for optional details, may stay unanswered).
    pub fn missing_layouts(self, layouts: &dyn Layouts) -> Vec<LayoutError> {
        match self {
            DecoderKind::MpichCh3 => MpichCh3::missing_layouts(layouts),
            DecoderKind::MpichCh4 => MpichCh4::missing_layouts(layouts),
            DecoderKind::OmpiOb1 => OmpiOb1::missing_layouts(layouts),
            DecoderKind::OmpiUcx => OmpiUcx::missing_layouts(layouts),
        }
    }
}

/// Which decoder reads a target, found from its symbols and version strings
/// alone (no layouts needed), so that the layouts can be chosen for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identified {
    /// The decoder.
    pub kind: DecoderKind,
    /// The implementation's version string.
    pub version: String,
    /// Its device or transport, where it has one (MPICH's `ch3:nemesis`).
    pub device: String,
    /// The loaded object (a path) whose private types the decoder reads.
    pub library: String,
}

/// The MPICH release series whose CH4 builds the decoder was checked on
/// (4.0.2's debug build and Debian 12's, Debian 13's 4.2.1, pip's wheels
/// from 3.4.3 to 5.0.2).
const CH4_CHECKED_SERIES: &[&str] = &["3.4", "4.0", "4.1", "4.2", "4.3", "5.0"];

/// Finds which decoder reads the target's MPI: Open MPI (by its exported
/// `ompi_mpi_communicators`), with the UCX PML when mca_pml_ucx.so is
/// loaded and mca_pml_ob1.so is not (building the decoder checks the
/// selected PML's name once it has layouts), or MPICH (by
/// `MPII_Version_string` and `MPII_Version_device`) with the CH3 device
/// or, on 4.0, the CH4 device. Anything else is refused, saying so.
pub fn identify(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    limits: &Limits,
) -> Result<Identified, DecodeError> {
    let string = |name: &str| -> Option<(String, String, TargetAddr)> {
        let sym = symbols.lookup(name)?;
        TargetMemory::read_c_string(memory, sym.addr, limits.max_string_len)
            .ok()
            .map(|b| {
                (
                    String::from_utf8_lossy(&b).into_owned(),
                    sym.object,
                    sym.addr,
                )
            })
    };
    if let Some(comms) = symbols.lookup("ompi_mpi_communicators") {
        // Which PML was selected is a string that takes layouts to read;
        // the components loaded say it first: once MPI_Init has chosen,
        // the others are unloaded. Building the decoder reads the string
        // (`ompi_decoder`).
        let ucx =
            symbols.lookup("ompi_pml_ucx").is_some() && symbols.lookup("mca_pml_ob1").is_none();
        return Ok(Identified {
            kind: if ucx {
                DecoderKind::OmpiUcx
            } else {
                DecoderKind::OmpiOb1
            },
            version: ompi_version(memory, symbols, limits).unwrap_or_default(),
            device: String::new(),
            library: comms.object,
        });
    }
    let Some((version, library, at)) = string("MPII_Version_string") else {
        return Err(no_mpi_found(symbols));
    };
    let device = string("MPII_Version_device").unwrap_or_default().0;
    let intel = crate::intel_mpi::IntelMpi::find(memory, symbols, limits)
        .or_else(|| crate::intel_mpi::IntelMpi::from_file(&library));
    if let Some(intel) = intel {
        let library = FoundLibrary::find(memory, symbols, &library, Some(at), None, limits);
        let census = crate::intel_mpi::IntelMpi::census(memory, symbols, limits);
        return Err(intel.refusal(&version, &device, census, Some(Box::new(library))));
    }
    if device.starts_with("ch3") {
        return Ok(Identified {
            kind: DecoderKind::MpichCh3,
            version,
            device,
            library,
        });
    }
    let found = || {
        Some(Box::new(FoundLibrary::find(
            memory,
            symbols,
            &library,
            Some(at),
            Some(format!("MPICH {version}")),
            limits,
        )))
    };
    if device.starts_with("ch4") {
        // Checked on 4.0.2, Debian 13's 4.2.1 and pip's wheels from 3.4.3 to
        // 5.0.2: CH4's request and global layouts moved a lot between
        // releases (3.4 keeps MPIDIG's lists per communicator), and the
        // 3.x series before 3.4 had an experimental CH4 of another design.
        let checked = CH4_CHECKED_SERIES.iter().any(|s| {
            version
                .strip_prefix(s)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        });
        if !checked {
            return Err(DecodeError::Unsupported {
                reason: format!(
                    "MPICH {version} with the {device:?} device: the CH4 decoder was checked \
                     on MPICH 3.4, 4.0, 4.1, 4.2, 4.3 and 5.0 only"
                ),
                library: found(),
                way_out: Some(format!(
                    "{DECODED}. MPICH from 4.1 on, configured with --enable-debuginfo, keeps \
                     debugger queues of its own that its message-queue library reads: pass \
                     the libtvmpich.so of this same build with `mpidd queues --dll`. {IDENTIFY}"
                )),
            });
        }
        return Ok(Identified {
            kind: DecoderKind::MpichCh4,
            version,
            device,
            library,
        });
    }
    Err(DecodeError::Unsupported {
        reason: format!("MPICH {version} with the {device:?} device, which no decoder reads"),
        library: found(),
        way_out: Some(format!(
            "{DECODED}. The message-queue library (libtvmpich.so) of this same build, if it \
             was configured with --enable-debuginfo, may read it: `mpidd queues --dll`. \
             {IDENTIFY}"
        )),
    })
}

/// The refusal of a target where neither MPICH's nor Open MPI's marker
/// symbols are: names a loaded object that looks like an MPI library
/// anyway (one stripped of them, or another implementation's), else says
/// where the ranks are when this is a launcher.
fn no_mpi_found(symbols: &dyn SymbolSource) -> DecodeError {
    const NEITHER: &str = "neither MPICH's MPII_Version_string nor Open MPI's \
                           ompi_mpi_communicators is there";
    let objects = symbols.searched_objects();
    let mpi = objects.iter().find(|o| {
        let name = o.rsplit('/').next().unwrap_or(o);
        ["libmpi.so", "libmpi_", "libmpich.so", "libmpich_"]
            .iter()
            .any(|p| name.starts_with(p))
    });
    let stated =
        mpi.and_then(|p| crate::library_strings::mpich_build_strings(std::path::Path::new(p)));
    // An MPICH derivative says whose it is before the MPICH it carries.
    let vendor = stated
        .as_ref()
        .and(mpi)
        .and_then(|p| crate::library_strings::intel_mpi_release(std::path::Path::new(p)))
        .map(|r| format!("Intel MPI {r}, derived from "))
        .unwrap_or_default();
    match mpi {
        Some(path) => DecodeError::Unsupported {
            reason: match &stated {
                Some((version, device)) => format!(
                    "{vendor}MPICH {version}{}, as its file's strings say, with the globals the \
                     native decoders start from (MPII_Version_string, the request pools) \
                     hidden: {NEITHER}",
                    device
                        .as_deref()
                        .map(|d| format!(" (device {d})"))
                        .unwrap_or_default()
                ),
                None => format!("{NEITHER}, though an MPI library is loaded"),
            },
            library: Some(Box::new(FoundLibrary {
                path: path.clone(),
                version: stated.as_ref().map(|(v, _)| format!("{vendor}MPICH {v}")),
                build_id: std::path::Path::new(path)
                    .is_absolute()
                    .then(|| {
                        mpidd_read::build_id(std::path::Path::new(path))
                            .ok()
                            .flatten()
                    })
                    .flatten()
                    .map(|id| mpidd_read::build_id_hex(&id)),
            })),
            way_out: Some(match &stated {
                Some(_) => format!(
                    "{DECODED}. No shipped profile places this build's hidden globals. Its \
                     message-queue library (libtvmpich.so of the same build, when it was \
                     configured with --enable-debuginfo) may read it: `mpidd queues --dll`. \
                     {IDENTIFY}"
                ),
                None => format!(
                    "{DECODED}; a library stripped of its dynamic symbols, or another \
                     implementation, is not told apart. Its vendor's message-queue library \
                     (the mqs interface, e.g. MPICH's libtvmpich.so of the same build) may \
                     read it: `mpidd queues --dll`. {IDENTIFY}"
                ),
            }),
        },
        None => DecodeError::Unsupported {
            reason: format!("{NEITHER}: no MPI library is loaded"),
            library: None,
            way_out: Some(
                "If this is the launcher (mpirun, mpiexec), read its ranks instead: \
                 `mpidd procs` lists them"
                    .to_string(),
            ),
        },
    }
}

/// Picks the decoder for the target's MPI ([`identify`]), builds it over
/// the target's layouts and keeps it with the target, ready to read
/// ([`QueueReader::read_queues`]).
pub fn detect<'t>(target: &'t dyn Target, limits: &Limits) -> Result<QueueReader<'t>, DecodeError> {
    let identified = identify(target.memory(), target.symbols(), limits)?;
    Ok(QueueReader {
        decoder: decoder_for(&identified, target, limits)?,
        identified,
        target,
        limits: *limits,
    })
}

/// The decoder for the target's MPI, built over the target's layouts, on
/// its own: [`detect`] without the target, for a caller that reads many
/// targets of one library build with it.
pub fn build_decoder(
    target: &dyn Target,
    limits: &Limits,
) -> Result<Box<dyn QueueDecoder>, DecodeError> {
    let found = identify(target.memory(), target.symbols(), limits)?;
    decoder_for(&found, target, limits)
}

/// The decoder for an MPI already identified in `target`.
fn decoder_for(
    found: &Identified,
    target: &dyn Target,
    limits: &Limits,
) -> Result<Box<dyn QueueDecoder>, DecodeError> {
    match found.kind {
        DecoderKind::MpichCh3 => Ok(Box::new(MpichCh3::new(
            target,
            &found.version,
            &found.device,
        )?)),
        DecoderKind::MpichCh4 => Ok(Box::new(MpichCh4::new(
            target,
            &found.version,
            &found.device,
        )?)),
        DecoderKind::OmpiOb1 | DecoderKind::OmpiUcx => ompi_decoder(target, limits),
    }
}

/// Open MPI's decoder for the PML the process selected
/// (`mca_pml_base_selected_component`): ob1's or UCX's. Another PML, or
/// none yet, is refused by ob1's decoder, which says why.
fn ompi_decoder(
    target: &dyn Target,
    limits: &Limits,
) -> Result<Box<dyn QueueDecoder>, DecodeError> {
    let pml = match CommLayout::of(target.layouts()) {
        Ok(comm) => selected_pml(target, &comm, limits)?,
        // Neither decoder can be built: ob1's says what is missing.
        Err(_) => String::new(),
    };
    match pml.as_str() {
        "ucx" => Ok(Box::new(OmpiUcx::new(target, limits)?)),
        _ => Ok(Box::new(OmpiOb1::new(target, limits)?)),
    }
}

/// The layouts to decode `found` with: the library's own DWARF (`dwarf`)
/// when it answers every question the decoder asks, else the first of
/// `profiles` made for the library's build-id (read from its file, found
/// through `objects`), else the first whose release family holds the
/// version the library states ([`LayoutOrigin::Family`], which the caller
/// checks on the process like any profile), else a [`NoLayouts`] that
/// says what is missing and the ways out. Under them, the profiles of the libraries loaded beside
/// it (UCX's) answer what they do not ([`LayeredLayouts`]).
pub fn decoder_layouts<'a>(
    found: &Identified,
    dwarf: &'a dyn Layouts,
    objects: &dyn LoadedObjects,
    profiles: &'a [LayoutProfile],
) -> Result<(LayeredLayouts<'a>, LayoutOrigin), NoLayouts> {
    choose_loaded_layouts(
        dwarf,
        &|l| found.kind.missing_layouts(l),
        &found.library,
        Some(found.kind.implementation()),
        (!found.version.is_empty()).then_some(found.version.as_str()),
        (!found.device.is_empty()).then_some(found.device.as_str()),
        objects,
        profiles,
    )
}

/// Reads a process's queues natively, start to end: [`identify`] its MPI,
/// choose the layouts ([`decoder_layouts`]: `dwarf` if it describes the
/// library, else a matching profile of `profiles`), build the decoder and
/// read. Also says where the layouts came from.
pub fn read_native_queues(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    objects: &dyn LoadedObjects,
    dwarf: &dyn Layouts,
    profiles: &[LayoutProfile],
    limits: &Limits,
) -> Result<(ProcessQueues, LayoutOrigin), DecodeError> {
    let found = identify(memory, symbols, limits)?;
    let (types, origin) = decoder_layouts(&found, dwarf, objects, profiles)?;
    let target = TargetParts {
        memory,
        symbols,
        layouts: &types,
    };
    Ok((detect(&target, limits)?.read_queues()?, origin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_read::{SymbolTable, SyntheticMemory};
    use mpidd_types::TargetAbi;

    const BUILD_ID: [u8; 20] = [
        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc,
        0xfe, 0x00, 0x11, 0x22, 0x33,
    ];

    /// The first bytes of a little-endian ELF64 shared object as mapped:
    /// its header, one PT_NOTE program header, and a GNU build-id note.
    fn mapped_headers(id: &[u8]) -> Vec<u8> {
        let mut b = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0];
        b.resize(16, 0);
        b.extend(3u16.to_le_bytes()); // ET_DYN
        b.extend(62u16.to_le_bytes()); // EM_X86_64
        b.extend(1u32.to_le_bytes());
        b.extend(0u64.to_le_bytes()); // e_entry
        b.extend(64u64.to_le_bytes()); // e_phoff
        b.extend(0u64.to_le_bytes()); // e_shoff
        b.extend(0u32.to_le_bytes());
        for v in [64u16, 56, 1, 64, 0, 0] {
            b.extend(v.to_le_bytes());
        }
        let note_len = 16 + id.len().next_multiple_of(4) as u64;
        b.extend(4u32.to_le_bytes()); // PT_NOTE
        b.extend(4u32.to_le_bytes()); // PF_R
        for v in [120u64, 120, 120, note_len, note_len, 4] {
            b.extend(v.to_le_bytes());
        }
        b.extend(4u32.to_le_bytes());
        b.extend((id.len() as u32).to_le_bytes());
        b.extend(3u32.to_le_bytes()); // NT_GNU_BUILD_ID
        b.extend(b"GNU\0");
        b.extend(id);
        b.resize(b.len().next_multiple_of(4), 0);
        b.resize(4096, 0);
        b
    }

    const LIBMPI: &str = "/opt/mpich-4.1.2/lib/libmpi.so.12.3.0";

    /// An MPICH process: its library mapped at 0x7000_0000 and listed by
    /// the dynamic linker, saying it is `version` with `device`.
    fn mpich(version: &str, device: &str) -> (SyntheticMemory, SymbolTable) {
        let mut m = SyntheticMemory::new(TargetAbi::X86_64);
        let words = |ws: &[u64]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<_>>();
        // r_debug, then two link_map nodes: the executable and libmpi.
        m.map(TargetAddr(0x1000), words(&[1, 0x3000]));
        m.map(
            TargetAddr(0x3000),
            words(&[0x40_0000, 0x8000, 0, 0x3100, 0]),
        );
        m.map(
            TargetAddr(0x3100),
            words(&[0x7000_0000, 0x8100, 0, 0, 0x3000]),
        );
        m.map(TargetAddr(0x8000), vec![0]);
        m.map(TargetAddr(0x8100), format!("{LIBMPI}\0").into_bytes());
        m.map(TargetAddr(0x7000_0000), mapped_headers(&BUILD_ID));
        m.map(TargetAddr(0x7000_2000), format!("{version}\0").into_bytes());
        m.map(TargetAddr(0x7000_2100), format!("{device}\0").into_bytes());
        let mut s = SymbolTable::new();
        s.insert(
            "/lib64/ld-linux-x86-64.so.2",
            "_r_debug",
            TargetAddr(0x1000),
            40,
        );
        s.insert(LIBMPI, "MPII_Version_string", TargetAddr(0x7000_2000), 8);
        s.insert(LIBMPI, "MPII_Version_device", TargetAddr(0x7000_2100), 8);
        (m, s)
    }

    fn refusal(m: &SyntheticMemory, s: &SymbolTable) -> (DecodeError, String) {
        let e = identify(m, s, &Limits::default()).unwrap_err();
        let text = e.to_string();
        (e, text)
    }

    #[test]
    fn an_unchecked_mpich_is_refused_naming_its_build_and_a_way_out() {
        let (m, s) = mpich("3.3.2", "ch4:ofi");
        let (e, text) = refusal(&m, &s);
        let DecodeError::Unsupported {
            library: Some(library),
            ..
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!(library.file_name(), "libmpi.so.12.3.0");
        assert_eq!(library.version.as_deref(), Some("MPICH 3.3.2"));
        assert_eq!(
            library.build_id.as_deref(),
            Some("0123456789abcdef1032547698badcfe00112233")
        );
        assert_eq!(
            text,
            "no native message-queue decoder for this target: MPICH 3.3.2 with the \
             \"ch4:ofi\" device: the CH4 decoder was checked on MPICH 3.4, 4.0, 4.1, 4.2, 4.3 and 5.0 only (the \
             library: \
             /opt/mpich-4.1.2/lib/libmpi.so.12.3.0, MPICH 3.3.2, build-id \
             0123456789abcdef1032547698badcfe00112233). The native decoders read MPICH with \
             the ch3 device, MPICH 3.4.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x and 5.0.x with the ch4 device (checked on \
             4.0.2, Debian 13's 4.2.1 and pip's 3.4.3, 4.0.3, 4.1.3, 4.2.3, 4.3.1, 4.3.2, 5.0.0, 5.0.1 and 5.0.2), and Open MPI with the ob1 or ucx PML (checked on 4.1). MPICH from 4.1 on, configured with \
             --enable-debuginfo, keeps debugger queues of its own that its message-queue \
             library reads: pass the libtvmpich.so of this same build with `mpidd queues \
             --dll`. `mpidd identify` says what was found of this build and why nothing reads it"
        );
        // MPICH 3.4 and 4.0 with CH4 are decoded.
        for version in ["3.4.3", "4.0.2"] {
            let (m, s) = mpich(version, "ch4:ucx");
            assert_eq!(
                identify(&m, &s, &Limits::default()).unwrap().kind,
                DecoderKind::MpichCh4
            );
        }
    }

    #[test]
    fn an_unknown_device_is_refused_naming_the_build() {
        let (m, s) = mpich("4.2.0", "ch5:new");
        let (_, text) = refusal(&m, &s);
        for needle in [
            "MPICH 4.2.0 with the \"ch5:new\" device, which no decoder reads",
            "libmpi.so.12.3.0",
            "build-id 0123456789abcdef1032547698badcfe00112233",
            "MPICH 3.4.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x and 5.0.x with the ch4 device",
            "--dll",
            "`mpidd identify` says what was found of this build",
        ] {
            assert!(text.contains(needle), "{needle:?} missing from: {text}");
        }
    }

    #[test]
    fn without_the_dynamic_linker_s_list_the_build_id_is_not_made_up() {
        let (m, mut s) = mpich("3.3.2", "ch4:ucx");
        // No _r_debug, and no file at the library's path.
        s = {
            let mut t = SymbolTable::new();
            for name in ["MPII_Version_string", "MPII_Version_device"] {
                let sym = s.lookup(name).unwrap();
                t.insert(LIBMPI, name, sym.addr, sym.size);
            }
            t
        };
        let (_, text) = refusal(&m, &s);
        assert!(text.contains("MPICH 3.3.2, no build-id found"), "{text}");
    }

    #[test]
    fn an_mpi_library_without_markers_is_named() {
        let m = SyntheticMemory::new(TargetAbi::X86_64);
        let mut s = SymbolTable::new();
        s.insert(
            "/opt/intel/mpi/lib/release/libmpi.so.12",
            "MPI_Init",
            TargetAddr(0x1000),
            8,
        );
        let (_, text) = refusal(&m, &s);
        for needle in [
            "neither MPICH's MPII_Version_string nor Open MPI's ompi_mpi_communicators is \
             there, though an MPI library is loaded",
            "(the library: /opt/intel/mpi/lib/release/libmpi.so.12, no build-id found)",
            "`mpidd queues --dll`. `mpidd identify`",
        ] {
            assert!(text.contains(needle), "{needle:?} missing from: {text}");
        }
    }

    #[test]
    fn a_process_without_mpi_points_at_the_ranks() {
        let m = SyntheticMemory::new(TargetAbi::X86_64);
        let mut s = SymbolTable::new();
        s.insert("/usr/bin/mpiexec.hydra", "main", TargetAddr(0x1000), 8);
        let (e, text) = refusal(&m, &s);
        assert!(matches!(e, DecodeError::Unsupported { library: None, .. }));
        assert!(text.contains("no MPI library is loaded"), "{text}");
        assert!(text.contains("`mpidd procs` lists them"), "{text}");
    }
}
