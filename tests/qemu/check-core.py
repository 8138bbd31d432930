#!/usr/bin/env python3
"""check-core.py: an independent reference reader for the qemu-user cores
made by make-cores.sh. Standard library only.

usage: check-core.py OUTDIR ARCH [--sysroot /usr/<triple>] [--segments] [-v]

Reads OUTDIR/mpir_target-ARCH.core with OUTDIR/mpir_target-ARCH, the way a
debugger has to for these cores:
  * byte order and word size from the core's e_ident,
  * notes (NT_PRSTATUS, NT_PRPSINFO, NT_AUXV) and the auxiliary vector,
  * PIE load bias = AT_PHDR - PT_PHDR.p_vaddr (checked against AT_ENTRY),
  * memory: a core PT_LOAD's bytes below p_filesz; above it (qemu leaves
    p_filesz 0 for executable mappings that start with an ELF header, i.e.
    the text segment of the executable, ld.so and libc, which on s390x,
    powerpc and armhf also holds .rodata) the bytes come from the ELF file
    mapped there: the executable (at the bias) or a shared library (at
    link_map.l_addr, found under --sysroot),
  * shared libraries: PT_DYNAMIC -> DT_DEBUG -> r_debug.r_map -> link_map,
then decodes MPIR_proctable and MPI2DD_info and compares every value with
the key=value lines in OUTDIR/mpir_target-ARCH.expected. Exit 0 if all agree.
"""
import os
import struct
import sys

SYSROOTS = {"s390x": "/usr/s390x-linux-gnu", "powerpc": "/usr/powerpc-linux-gnu",
            "armhf": "/usr/arm-linux-gnueabihf", "i686": "/usr/i686-linux-gnu"}
PT_LOAD, PT_DYNAMIC, PT_NOTE, PT_PHDR = 1, 2, 4, 6
DT_NULL, DT_DEBUG = 0, 21
AT_NAMES = {3: "AT_PHDR", 5: "AT_PHNUM", 7: "AT_BASE", 9: "AT_ENTRY", 31: "AT_EXECFN"}


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        assert d[:4] == b"\x7fELF", path
        self.is64 = d[4] == 2
        self.end = ">" if d[5] == 2 else "<"
        self.w = 8 if self.is64 else 4
        W = "Q" if self.is64 else "I"
        hdr = struct.unpack_from(self.end + "16sHHI" + W * 3 + "IHHHHHH", d, 0)
        (_, self.e_type, self.e_machine, _, self.e_entry, e_phoff, e_shoff,
         _, _, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx) = hdr
        self.phdrs = []
        for i in range(e_phnum):
            off = e_phoff + i * e_phentsize
            if self.is64:
                t, fl, o, va, _, fs, ms, al = struct.unpack_from(self.end + "IIQQQQQQ", d, off)
            else:
                t, o, va, _, fs, ms, fl, al = struct.unpack_from(self.end + "IIIIIIII", d, off)
            self.phdrs.append(dict(type=t, flags=fl, offset=o, vaddr=va, filesz=fs, memsz=ms))
        self.shdrs = []
        for i in range(e_shnum if e_shoff else 0):
            off = e_shoff + i * e_shentsize
            if self.is64:
                nm, t, _, a, o, sz, ln, _, _, es = struct.unpack_from(self.end + "IIQQQQIIQQ", d, off)
            else:
                nm, t, _, a, o, sz, ln, _, _, es = struct.unpack_from(self.end + "IIIIIIIIII", d, off)
            self.shdrs.append(dict(name=nm, type=t, addr=a, offset=o, size=sz, link=ln, entsize=es))

    def u(self, fmt, off):
        return struct.unpack_from(self.end + fmt, self.data, off)

    def symbols(self):
        """name -> st_value from .symtab (type SHT_SYMTAB == 2)."""
        out = {}
        for sh in self.shdrs:
            if sh["type"] != 2:
                continue
            strtab = self.shdrs[sh["link"]]
            for i in range(sh["size"] // sh["entsize"]):
                off = sh["offset"] + i * sh["entsize"]
                if self.is64:
                    nm, _, _, _, val, _ = self.u("IBBHQQ", off)
                else:
                    nm, val, _, _, _, _ = self.u("IIIBBH", off)
                s = strtab["offset"] + nm
                name = self.data[s:self.data.index(b"\0", s)].decode()
                if name:
                    out[name] = val
        return out

    def notes(self):
        for ph in self.phdrs:
            if ph["type"] != PT_NOTE:
                continue
            off, stop = ph["offset"], ph["offset"] + ph["filesz"]
            while off + 12 <= stop:
                namesz, descsz, ntype = self.u("III", off)
                name = self.data[off + 12:off + 12 + namesz].rstrip(b"\0").decode()
                doff = off + 12 + ((namesz + 3) & ~3)
                yield name, ntype, self.data[doff:doff + descsz]
                off = doff + ((descsz + 3) & ~3)


class Memory:
    """Guest memory: core PT_LOAD bytes, else file-backed ELF images."""

    def __init__(self, core):
        self.core = core
        self.images = []  # (bias, Elf)
        self.from_file = 0

    def add_image(self, bias, elf):
        self.images.append((bias, elf))

    def read(self, addr, n):
        for ph in self.core.phdrs:
            if ph["type"] == PT_LOAD and ph["vaddr"] <= addr and addr + n <= ph["vaddr"] + ph["memsz"]:
                rel = addr - ph["vaddr"]
                if rel + n <= ph["filesz"]:
                    o = ph["offset"] + rel
                    return self.core.data[o:o + n]
                break  # mapped, but not dumped: fall back to the file
        for bias, elf in self.images:
            for ph in elf.phdrs:
                va = bias + ph["vaddr"]
                if ph["type"] == PT_LOAD and va <= addr and addr + n <= va + ph["filesz"]:
                    self.from_file += 1
                    o = ph["offset"] + addr - va
                    return elf.data[o:o + n]
        raise KeyError("0x%x (+%d) is neither in the core nor in a mapped file" % (addr, n))

    def word(self, addr):
        c = self.core
        return struct.unpack(c.end + ("Q" if c.is64 else "I"), self.read(addr, c.w))[0]

    def i32(self, addr):
        return struct.unpack(self.core.end + "i", self.read(addr, 4))[0]

    def u32(self, addr):
        return struct.unpack(self.core.end + "I", self.read(addr, 4))[0]

    def cstr(self, addr):
        out = b""
        while True:
            b = self.read(addr + len(out), 1)
            if b == b"\0":
                return out.decode()
            out += b


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    if len(args) < 2:
        sys.exit(__doc__)
    outdir, arch = args[0], args[1]
    sysroot = SYSROOTS.get(arch, "/")
    if "--sysroot" in sys.argv:
        sysroot = sys.argv[sys.argv.index("--sysroot") + 1]
    base = os.path.join(outdir, "mpir_target-" + arch)
    exe, core = Elf(base), Elf(base + ".core")
    expected = dict(l.rstrip("\n").split("=", 1) for l in open(base + ".expected") if "=" in l)
    assert core.e_type == 4, "not a core file"
    W = core.w

    notes = list(core.notes())
    print("%s: ELF%d %s-endian e_machine=%d; notes: %s" % (
        arch, 64 if core.is64 else 32, "big" if core.end == ">" else "little", core.e_machine,
        ", ".join("%s/%d(%d bytes)" % (n, t, len(d)) for n, t, d in notes)))
    auxv_raw = [d for n, t, d in notes if t == 6][0]
    fmt = core.end + ("Q" if core.is64 else "I") * (len(auxv_raw) // W)
    words = struct.unpack(fmt, auxv_raw)
    auxv = {words[i]: words[i + 1] for i in range(0, len(words), 2)}
    phdr_vaddr = [p["vaddr"] for p in exe.phdrs if p["type"] == PT_PHDR][0]
    bias = auxv[3] - phdr_vaddr
    assert auxv[9] - exe.e_entry == bias, "AT_ENTRY disagrees with AT_PHDR"
    print("  auxv: " + " ".join("%s=0x%x" % (AT_NAMES[k], auxv[k]) for k in sorted(AT_NAMES) if k in auxv))
    print("  load bias 0x%x (AT_PHDR - PT_PHDR.p_vaddr == AT_ENTRY - e_entry)" % bias)

    loads = [p for p in core.phdrs if p["type"] == PT_LOAD]
    print("  %d PT_LOAD, %d with p_filesz 0 (not dumped), %d partly dumped" % (
        len(loads), sum(1 for p in loads if p["filesz"] == 0),
        sum(1 for p in loads if 0 < p["filesz"] < p["memsz"])))

    mem = Memory(core)
    mem.add_image(bias, exe)

    # Shared libraries: PT_DYNAMIC -> DT_DEBUG -> r_debug -> link_map chain.
    dyn = bias + [p["vaddr"] for p in exe.phdrs if p["type"] == PT_DYNAMIC][0]
    r_debug = None
    off = dyn
    while True:
        tag, val = mem.word(off), mem.word(off + W)
        if tag == DT_NULL:
            break
        if tag == DT_DEBUG:
            r_debug = val
        off += 2 * W
    assert r_debug, "DT_DEBUG is 0"
    r_version = mem.i32(r_debug)
    lm = mem.word(r_debug + W)  # r_map follows int r_version, padded to a word
    print("  DT_DEBUG -> r_debug 0x%x (r_version %d, r_map 0x%x)" % (r_debug, r_version, lm))
    libs = []
    while lm:
        l_addr, l_name, l_ld, l_next = (mem.word(lm + i * W) for i in range(4))
        name = mem.cstr(l_name) if l_name else ""
        libs.append((l_addr, name, l_ld))
        print("    link_map 0x%x: l_addr=0x%x l_ld=0x%x l_name=%r" % (lm, l_addr, l_ld, name))
        lm = l_next
    for l_addr, name, _ in libs:
        if name.startswith("/"):
            path = os.path.join(sysroot, name.lstrip("/"))
            if not os.path.exists(path):  # -L prefix not in the name: try sysroot/lib
                path = os.path.join(sysroot, "lib", os.path.basename(name))
            if os.path.exists(path):
                mem.add_image(l_addr, Elf(path))
    if "--segments" in sys.argv:  # label each core PT_LOAD with the file segment it maps
        rwx = lambda f: ("R" if f & 4 else "-") + ("W" if f & 2 else "-") + ("X" if f & 1 else "-")
        for p in loads:
            lab = []
            for k, (b, elf) in enumerate(mem.images):
                nm = "exe" if k == 0 else os.path.basename(elf.path)
                segs = [q for q in elf.phdrs if q["type"] == PT_LOAD]
                for i, q in enumerate(segs):
                    if p["vaddr"] < b + q["vaddr"] + q["memsz"] and b + q["vaddr"] < p["vaddr"] + p["memsz"]:
                        lab.append("%s LOAD#%d %s" % (nm, i, rwx(q["flags"])))
            print("    %#14x memsz %#9x filesz %#9x %s  %s" % (
                p["vaddr"], p["memsz"], p["filesz"], rwx(p["flags"]), ", ".join(lab) or "-"))

    # ---- decode the interface data ----
    sym = exe.symbols()
    hx = lambda v: "0x%x" % v
    got = {"load_bias": hx(bias), "auxv.AT_PHDR": hx(auxv[3]),
           "auxv.AT_ENTRY": hx(auxv[9]), "auxv.AT_BASE": hx(auxv[7])}
    for name in ("main", "MPIR_Breakpoint", "MPIR_proctable", "MPIR_proctable_size",
                 "MPIR_debug_state", "MPIR_executable_path", "MPIR_dll_name",
                 "MPI2DD_info", "comm_world_anchor"):
        got["addr." + name] = hx(bias + sym[name])
    pt = mem.word(bias + sym["MPIR_proctable"])
    n = mem.i32(bias + sym["MPIR_proctable_size"])
    got["MPIR_proctable"] = hx(pt)
    got["MPIR_proctable_size"] = str(n)
    for k in ("MPIR_debug_state", "MPIR_debug_gate", "MPIR_being_debugged",
              "MPIR_i_am_starter", "MPIR_partial_attach_ok"):
        got[k] = str(mem.i32(bias + sym[k]))
    a = mem.word(bias + sym["MPIR_debug_abort_string"])
    got["MPIR_debug_abort_string"] = hx(a)
    got["MPIR_debug_abort_string.str"] = mem.cstr(a)
    got["MPIR_dll_name.str"] = mem.cstr(bias + sym["MPIR_dll_name"])
    got["MPIR_executable_path.str"] = mem.cstr(bias + sym["MPIR_executable_path"])
    stride = 3 * W  # {char *, char *, int} padded to pointer alignment
    for i in range(n):
        e = pt + i * stride
        h, x, pid = mem.word(e), mem.word(e + W), mem.i32(e + 2 * W)
        p = "MPIR_proctable[%d]." % i
        got.update({p + "host_name": hx(h), p + "host_name.str": mem.cstr(h),
                    p + "executable_name": hx(x), p + "executable_name.str": mem.cstr(x),
                    p + "pid": str(pid)})

    info = bias + sym["MPI2DD_info"]
    assert mem.read(info, 5) == b"MPI2\x7f", "bad MPI2DD magic"
    version, variant, dstate = mem.read(info + 5, 3)
    got.update({"MPI2DD_info.version": str(version), "MPI2DD_info.variant": str(variant),
                "MPI2DD_info.debug_state": str(dstate),
                "MPI2DD_info.debugger_flags": hx(mem.u32(info + 8)),
                "MPI2DD_info.mpi_flags": hx(mem.u32(info + 12))})
    fields = ["dll_name_32", "dll_name_64", "meta_host_name", "meta_executable_name",
              "abort_string", "proctable", "directory_table", "metadirectory_table"]
    addrs = {}
    for i, f in enumerate(fields):
        addrs[f] = mem.word(info + 16 + i * W)
        got["MPI2DD_info." + f] = hx(addrs[f])
    ints = info + 16 + 8 * W
    for i, f in enumerate(["proctable_size", "directory_size", "metadirectory_size", "meta_pid"]):
        got["MPI2DD_info." + f] = str(mem.i32(ints + 4 * i))
    got["MPI2DD_info.meta_host_name.str"] = mem.cstr(addrs["meta_host_name"])
    pstride = 4 * W + 8  # MPI2DD_PROCDESC
    for i in range(int(got["MPI2DD_info.proctable_size"])):
        e = addrs["proctable"] + i * pstride
        p = "MPI2DD_proctable[%d]." % i
        h, x, sd, cw = (mem.word(e + j * W) for j in range(4))
        got.update({p + "host_name": hx(h), p + "host_name.str": mem.cstr(h),
                    p + "executable_name": hx(x), p + "executable_name.str": mem.cstr(x),
                    p + "spawn_desc": hx(sd), p + "comm_world_id": hx(cw),
                    p + "pid": str(mem.i32(e + 4 * W)), p + "rank": str(mem.i32(e + 4 * W + 4))})
        if sd:
            got["MPI2DD_spawndesc.parent_comm_world_id"] = hx(mem.word(sd))
            got["MPI2DD_spawndesc.parent_rank"] = str(mem.i32(sd + W))
            got["MPI2DD_spawndesc.sequence"] = str(mem.i32(sd + W + 4))
    dstride = (2 * W + 4 + W - 1) // W * W  # MPI2DD_DIRECTORYENTRY
    for i in range(int(got["MPI2DD_info.directory_size"])):
        e = addrs["directory_table"] + i * dstride
        p = "MPI2DD_directory[%d]." % i
        h, x = mem.word(e), mem.word(e + W)
        got.update({p + "host_name": hx(h), p + "host_name.str": mem.cstr(h),
                    p + "executable_name": hx(x), p + "executable_name.str": mem.cstr(x),
                    p + "pid": str(mem.i32(e + 2 * W))})

    bad = 0
    for k, v in got.items():
        if k in expected and expected[k] != v:
            bad += 1
            print("  MISMATCH %s: core %r, expected %r" % (k, v, expected[k]))
        elif verbose:
            print("  ok %s=%s" % (k, v))
    unchecked = [k for k in expected if k not in got and not k.startswith(("sizeof.", "format", "end", "pointer_size", "endian"))]
    print("  %d values compared, %d mismatches, %d reads served from ELF files "
          "instead of the core; unchecked keys: %s" % (len(got), bad, mem.from_file, unchecked or "none"))
    sys.exit(1 if bad or unchecked else 0)


if __name__ == "__main__":
    main()
