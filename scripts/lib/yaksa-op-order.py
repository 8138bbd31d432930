#!/usr/bin/python3
"""Which orders of the operation cases of one generated yaksa function
reproduce the stock library's machine code?

    yaksa-op-order.py STOCK_LIB YAKSA_DIR FILE.c FUNCTION COMPILE_LINE

YAKSA_DIR is modules/yaksa of a configured rebuild tree, FILE.c a
generated pack/unpack file under it, COMPILE_LINE the build's compile
command for such a file with SRC in place of the source (copy it from the
build log, without -o). For every permutation of FUNCTION's `case
YAKSA_OP__...` blocks, the function alone is compiled and searched in the
stock .text (relocation fields as wildcards); each order is printed with
the address it was found at, or None. See docs/stock-mpich.md.

Needs Debian's python3-pyelftools (run with /usr/bin/python3)."""
import itertools
import os
import re
import shlex
import subprocess
import sys
import tempfile

from elftools.elf.elffile import ELFFile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def split_function(path, name):
    s = open(path).read()
    head = s[:s.index("\nint ") + 1]
    i = s.index("int %s(" % name)
    j = s.find("\nint ", i + 1)
    fn = s[i:j + 1 if j > 0 else len(s)]
    a = fn.index("        case YAKSA_OP__")
    b = fn.index("        default:")
    blocks = [c for c in re.split(r"(?m)^(?=        case YAKSA_OP__)", fn[a:b]) if c]
    ops = [re.match(r"        case YAKSA_OP__(\w+):", c).group(1) for c in blocks]
    return head, fn[:a], dict(zip(ops, blocks)), fn[b:], ops


def pattern(obj, name):
    from elftools.elf.descriptions import describe_reloc_type
    e = ELFFile(open(obj, "rb"))
    sym = [s for s in e.get_section_by_name(".symtab").iter_symbols() if s.name == name][0]
    sec = e.get_section(sym["st_shndx"])
    v, size = sym["st_value"], sym["st_size"]
    body = sec.data()[v:v + size]
    wild = [False] * size
    rela = e.get_section_by_name(".rela" + sec.name)
    for r in rela.iter_relocations() if rela else []:
        kind = describe_reloc_type(r["r_info_type"], e)
        off = r["r_offset"] - v
        span = range(off - 2, off + 4) if "GOTPCRELX" in kind else range(off, off + (8 if kind.endswith("64") else 4))
        for k in span:
            if 0 <= k < size:
                wild[k] = True
    return b"".join(b"." if w else re.escape(bytes([c])) for c, w in zip(body, wild))


def main():
    stock_path, ydir, src, name, line = sys.argv[1:6]
    text = ELFFile(open(stock_path, "rb")).get_section_by_name(".text")
    tdata, tbase = text.data(), text["sh_addr"]
    head, pre, blocks, post, ops = split_function(src, name)
    print("order in", src, ":", ops, flush=True)
    work = tempfile.mkdtemp(prefix="yaksa-op-order-")
    for n, order in enumerate(itertools.permutations(ops)):
        c = os.path.join(work, "t%d.c" % n)
        open(c, "w").write(head + pre + "".join(blocks[o] for o in order) + post)
        obj = c[:-2] + ".o"
        subprocess.run(shlex.split(line.replace("SRC", c)) + ["-o", obj], cwd=ydir, check=True)
        m = re.search(pattern(obj, name), tdata, re.S)
        print(list(order), hex(tbase + m.start()) if m else None, flush=True)


main()
