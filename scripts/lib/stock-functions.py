#!/usr/bin/python3
"""Compares functions compiled in a rebuild tree of Debian's MPICH with the
stock libmpich.so.12, object by object, before (or without) the final link.

    stock-functions.py STOCK_LIB TREE [SUBSTRING]

For every function of every PIC object under TREE (`.libs/*.o`, restricted
to paths containing SUBSTRING), its bytes are searched in the stock .text
with the relocation fields as wildcards (and the two opcode bytes before a
GOTPCRELX field, which the linker may relax from mov to lea). A function
exported in the stock .dynsym is also compared at its exported address and
size. Prints the functions not found, then the counts.

Needs Debian's python3-pyelftools (run with /usr/bin/python3)."""
import glob
import os
import re
import sys

from elftools.elf.descriptions import describe_reloc_type
from elftools.elf.elffile import ELFFile


def wildcard_pattern(e, sec, value, size):
    body = sec.data()[value:value + size]
    wild = [False] * size
    rela = e.get_section_by_name(".rela" + sec.name)
    for r in rela.iter_relocations() if rela else []:
        kind = describe_reloc_type(r["r_info_type"], e)
        off = r["r_offset"] - value
        if "GOTPCRELX" in kind:
            span = range(off - 2, off + 4)
        else:
            span = range(off, off + (8 if kind.endswith("64") else 4))
        for k in span:
            if 0 <= k < size:
                wild[k] = True
    return body, wild


def main():
    stock = ELFFile(open(sys.argv[1], "rb"))
    tree = sys.argv[2]
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    text = stock.get_section_by_name(".text")
    tbase, tdata = text["sh_addr"], text.data()
    exported = {}
    for s in stock.get_section_by_name(".dynsym").iter_symbols():
        if s["st_info"]["type"] == "STT_FUNC" and s["st_shndx"] != "SHN_UNDEF":
            exported[s.name] = (s["st_value"], s["st_size"])
    n = found = n_exp = same_exp = 0
    for path in sorted(glob.glob(os.path.join(tree, "**/.libs/*.o"), recursive=True)):
        if only not in path:
            continue
        e = ELFFile(open(path, "rb"))
        symtab = e.get_section_by_name(".symtab")
        for sym in symtab.iter_symbols() if symtab else []:
            if sym["st_info"]["type"] != "STT_FUNC" or sym["st_size"] == 0:
                continue
            if not isinstance(sym["st_shndx"], int):
                continue
            sec = e.get_section(sym["st_shndx"])
            size = sym["st_size"]
            body, wild = wildcard_pattern(e, sec, sym["st_value"], size)
            pat = b"".join(b"." if w else re.escape(bytes([c])) for c, w in zip(body, wild))
            n += 1
            if re.search(pat, tdata, re.S):
                found += 1
            else:
                print(f"not found: {sym.name} ({os.path.relpath(path, tree)}, {size} bytes)")
            if sym["st_info"]["bind"] == "STB_GLOBAL" and sym.name in exported:
                n_exp += 1
                addr, ssize = exported[sym.name]
                at = tdata[addr - tbase:addr - tbase + ssize]
                if ssize == size and re.fullmatch(pat, at, re.S):
                    same_exp += 1
                else:
                    print(f"differs at its exported address {addr:#x}: {sym.name} (stock size {ssize}, rebuilt {size})")
    print(f"{n} functions: {found} found in the stock .text (relocation fields as wildcards), {n - found} not")
    print(f"{n_exp} of them exported: {same_exp} equal at their stock .dynsym address and size")


main()
