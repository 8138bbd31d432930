#!/usr/bin/python3
"""Finds where the stock libmpich.so.12 keeps globals that it does not
export, from the code that references them.

    stock-symbols.py STOCK_LIB TREE NAME...

For every function of the PIC objects under TREE (a rebuild tree of the same
source with the same flags, `.libs/*.o`) that occurs exactly once in the
stock .text (relocation fields as wildcards), each relocation that names one
of NAME... is resolved against the stock bytes: a PC-relative field gives
the symbol's address directly, an unrelaxed GOT load gives the GOT slot,
whose R_X86_64_RELATIVE or GLOB_DAT relocation in the stock .rela.dyn gives
the address. Pointers to NAME in the initialized data of a global found
that way (a handle pool's `direct` member) are read from the stock
.rela.dyn too. Every reference must agree. Prints, per name, the address,
the stock section it falls in, the number of references that agree, and any
that do not.

Needs Debian's python3-pyelftools (run with /usr/bin/python3)."""
import collections
import glob
import os
import re
import struct
import sys

from elftools.elf.descriptions import describe_reloc_type
from elftools.elf.elffile import ELFFile

PCREL = {"R_X86_64_PC32", "R_X86_64_PLT32", "R_X86_64_GOTPCREL",
         "R_X86_64_GOTPCRELX", "R_X86_64_REX_GOTPCRELX"}


def main():
    stock = ELFFile(open(sys.argv[1], "rb"))
    tree, names = sys.argv[2], set(sys.argv[3:])
    text = stock.get_section_by_name(".text")
    tbase, tdata = text["sh_addr"], text.data()
    got_target = {}
    rela = stock.get_section_by_name(".rela.dyn")
    dynsym = stock.get_section_by_name(".dynsym")
    for r in rela.iter_relocations():
        kind = describe_reloc_type(r["r_info_type"], stock)
        if kind == "R_X86_64_RELATIVE":
            got_target[r["r_offset"]] = r["r_addend"]
        elif kind == "R_X86_64_GLOB_DAT":
            got_target[r["r_offset"]] = dynsym.get_symbol(r["r_info_sym"])["st_value"] + r["r_addend"]
    sections = [(s["sh_addr"], s["sh_addr"] + s["sh_size"], s.name)
                for s in stock.iter_sections() if s["sh_addr"]]

    def section_of(addr):
        return next((n for a, b, n in sections if a <= addr < b), "?")

    found = collections.defaultdict(collections.Counter)
    sizes = {}
    for path in sorted(glob.glob(os.path.join(tree, "**/.libs/*.o"), recursive=True)):
        e = ELFFile(open(path, "rb"))
        symtab = e.get_section_by_name(".symtab")
        if symtab is None:
            continue
        for sym in symtab.iter_symbols():
            if sym.name in names and isinstance(sym["st_shndx"], int):
                sizes[sym.name] = sym["st_size"]
        # A file-local static (MPIR_Topology_keyval) is referenced through
        # its section's symbol, the addend pointing at it less the bytes of
        # the instruction after the field (4 to 8).
        statics = collections.defaultdict(list)
        for sym in symtab.iter_symbols():
            if (sym.name in names and sym["st_info"]["bind"] == "STB_LOCAL"
                    and isinstance(sym["st_shndx"], int)):
                statics[sym["st_shndx"]].append(sym)

        def target_name(r, symtab=symtab, statics=statics):
            target = symtab.get_symbol(r["r_info_sym"])
            if target["st_info"]["type"] != "STT_SECTION":
                return target.name
            near = [t for t in statics.get(target["st_shndx"], [])
                    if 4 <= t["st_value"] - r["r_addend"] <= 8]
            return near[0].name if len(near) == 1 else None

        def target_offset(r, symtab=symtab, statics=statics):
            target = symtab.get_symbol(r["r_info_sym"])
            if target["st_info"]["type"] != "STT_SECTION":
                return 0
            return next(t["st_value"] for t in statics[target["st_shndx"]]
                        if 4 <= t["st_value"] - r["r_addend"] <= 8)

        for sym in symtab.iter_symbols():
            if sym["st_info"]["type"] != "STT_FUNC" or sym["st_size"] == 0:
                continue
            if not isinstance(sym["st_shndx"], int):
                continue
            sec = e.get_section(sym["st_shndx"])
            rsec = e.get_section_by_name(".rela" + sec.name)
            if rsec is None:
                continue
            v, size = sym["st_value"], sym["st_size"]
            rels = [r for r in rsec.iter_relocations() if v <= r["r_offset"] < v + size]
            wanted = [r for r in rels if target_name(r) in names]
            if not wanted:
                continue
            body = sec.data()[v:v + size]
            wild = [False] * size
            for r in rels:
                kind = describe_reloc_type(r["r_info_type"], e)
                off = r["r_offset"] - v
                span = range(off - 2, off + 4) if "GOTPCRELX" in kind else range(off, off + (8 if kind.endswith("64") else 4))
                for k in span:
                    if 0 <= k < size:
                        wild[k] = True
            pat = b"".join(b"." if w else re.escape(bytes([c])) for c, w in zip(body, wild))
            hits = [m.start() for m in re.finditer(pat, tdata, re.S)]
            if len(hits) != 1:
                continue
            at = tbase + hits[0]
            for r in wanted:
                name = target_name(r)
                kind = describe_reloc_type(r["r_info_type"], e)
                if kind not in PCREL:
                    continue
                off = r["r_offset"] - v
                p = at + off
                disp, = struct.unpack_from("<i", tdata, hits[0] + off)
                # S + A - P: the section's address for a static, plus the
                # static's place in it.
                value = p + disp - r["r_addend"] + target_offset(r)
                if section_of(value) == ".got":
                    # A GOT load the linker did not relax: the slot's
                    # dynamic relocation holds the address.
                    slot, value = value, got_target.get(value)
                    if value is None:
                        found[name][f"GOT slot {slot:#x} without relocation"] += 1
                        continue
                found[name][value] += 1
    # Pointers in initialized data: a global found above whose object holds
    # a relocation to NAME at some offset (e.g. MPIR_Comm_mem's `direct`
    # member pointing at MPIR_Comm_direct) is a R_X86_64_RELATIVE in the
    # stock .rela.dyn at the same offset from the stock address.
    known = {n: c.most_common(1)[0][0] for n, c in found.items()
             if isinstance(c.most_common(1)[0][0], int)}
    for path in sorted(glob.glob(os.path.join(tree, "**/.libs/*.o"), recursive=True)):
        e = ELFFile(open(path, "rb"))
        symtab = e.get_section_by_name(".symtab")
        if symtab is None:
            continue
        holders = [s for s in symtab.iter_symbols()
                   if s.name in known and isinstance(s["st_shndx"], int) and s["st_size"]]
        for holder in holders:
            sec = e.get_section(holder["st_shndx"])
            rsec = e.get_section_by_name(".rela" + sec.name)
            for r in rsec.iter_relocations() if rsec else []:
                off = r["r_offset"] - holder["st_value"]
                if not 0 <= off < holder["st_size"]:
                    continue
                if describe_reloc_type(r["r_info_type"], e) != "R_X86_64_64":
                    continue
                name = symtab.get_symbol(r["r_info_sym"]).name
                if name not in names or r["r_addend"] != 0:
                    continue
                value = got_target.get(known[holder.name] + off)
                if value is not None:
                    found[name][value] += 1
    for name in sorted(names):
        counts = found.get(name)
        if not counts:
            print(f"{name}: no matching function references it")
            continue
        (addr, n), *others = counts.most_common()
        where = section_of(addr) if isinstance(addr, int) else addr
        line = f"{name}: {addr:#x} in {where}, size {sizes.get(name, '?')}, {n} reference(s) agree"
        if others:
            line += "; DISAGREEING: " + ", ".join(f"{a} x{c}" for a, c in others)
        print(line)


main()
