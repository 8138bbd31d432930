#!/usr/bin/env python3
"""Reference reader (not a test dependency): dump MPIR_proctable of Open MPI 4.1 mpirun
from a live pid (/proc/PID/maps + /proc/PID/mem, no ptrace stop) or from a gcore file
(PT_LOAD + NT_FILE).  Symbol offsets come from libopen-rte's .dynsym (readelf).
Usage: mpir_peek.py PID | mpir_peek.py CORE_FILE"""
import os, struct, subprocess, sys

def dynsyms(lib):
    out = subprocess.run(["readelf", "-W", "--dyn-syms", lib], capture_output=True, text=True, check=True).stdout
    return {f[7]: int(f[1], 16) for f in (l.split() for l in out.splitlines()) if len(f) >= 8 and f[7].startswith("MPIR_")}

def live(pid):
    # base = start of the mapping of libopen-rte with file offset 0 (first PT_LOAD has p_vaddr 0)
    for l in open(f"/proc/{pid}/maps"):
        f = l.split()
        if len(f) >= 6 and "libopen-rte.so" in f[5] and int(f[2], 16) == 0:
            base, lib = int(f[0].split("-")[0], 16), f[5]; break
    else: sys.exit("libopen-rte not mapped")
    mem = open(f"/proc/{pid}/mem", "rb")
    def rd(a, n): mem.seek(a); return mem.read(n)
    return base, lib, rd

def core(path):
    d = open(path, "rb").read()
    phoff, = struct.unpack_from("<Q", d, 0x20); phnum, = struct.unpack_from("<H", d, 0x38)
    loads, base, lib = [], None, None
    for i in range(phnum):
        t, _, off, va, _, fs, _, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i)
        if t == 1: loads.append((va, off, fs))
        if t == 4:  # PT_NOTE: find NT_FILE (0x46494c45); gdb writes page_size=1 (offsets in bytes)
            p = off
            while p < off + fs:
                nsz, dsz, typ = struct.unpack_from("<III", d, p); dp = p + 12 + ((nsz + 3) & ~3)
                if typ == 0x46494C45:
                    cnt, pgsz = struct.unpack_from("<QQ", d, dp)
                    names = d[dp + 16 + 24 * cnt: dp + dsz].split(b"\0")
                    for j in range(cnt):
                        s, e, o = struct.unpack_from("<QQQ", d, dp + 16 + 24 * j)
                        if b"libopen-rte.so" in names[j] and o * pgsz == 0 and base is None:
                            base, lib = s, names[j].decode()
                p = dp + ((dsz + 3) & ~3)
    if base is None: sys.exit("libopen-rte not in NT_FILE")
    def rd(a, n):
        for va, off, fs in loads:
            if va <= a and a + n <= va + fs: return d[off + a - va: off + a - va + n]
        raise KeyError(hex(a))
    return base, lib, rd

arg = sys.argv[1]
base, lib, rd = live(int(arg)) if arg.isdigit() else core(arg)
sym = dynsyms(lib)
def cstr(a):
    s = b""
    while not s.endswith(b"\0"): s += rd(a + len(s), 1)
    return s[:-1].decode()
i32 = lambda name: struct.unpack("<i", rd(base + sym[name], 4))[0]
n, tab = i32("MPIR_proctable_size"), struct.unpack("<Q", rd(base + sym["MPIR_proctable"], 8))[0]
print(f"lib={lib} base={base:#x} MPIR_proctable={tab:#x} MPIR_proctable_size={n} "
      f"MPIR_debug_state={i32('MPIR_debug_state')} MPIR_being_debugged={i32('MPIR_being_debugged')} "
      f"MPIR_attach_fifo={cstr(base + sym['MPIR_attach_fifo'])!r}")
for i in range(n):
    h, e, pid = struct.unpack("<QQi4x", rd(tab + 24 * i, 24))   # 4 bytes padding: NOT zeroed
    print(f"{i} {cstr(h)} {cstr(e)} {pid}")
