"""Reads a rank's queues from its core through the Python module (mpidd.Rank),
as a debugger at a stop does, for the instruction budgets
(scripts/speed-budgets.sh): the memory reader and the object list are
plain Python over the core file, so what is counted beyond Python's own
start is the module's work: the first stop (objects read, layouts
resolved) and LATER later ones (default 0; every page read again).

    python3 module-queues-core.py SITE CORE [LATER]

SITE is where scripts/build-python-module.sh installed the module. The
objects are the core's file-backed mappings whose first page is the
file's (path, path, bias); memory is the core's PT_LOAD segments, else
the files' own bytes (a core holds no read-only file-backed page).
Prints the number of operations read at each stop (their "status" keys).
"""

import struct
import sys

sys.path.insert(0, sys.argv[1])

from mpidd import Rank  # noqa: E402

core_path = sys.argv[2]
with open(core_path, "rb") as f:
    core = f.read()

assert core[:4] == b"\x7fELF" and core[4] == 2 and core[5] == 1, "a 64-bit little-endian core"
phoff, = struct.unpack_from("<Q", core, 0x20)
phentsize, phnum = struct.unpack_from("<HH", core, 0x36)
segments = []  # (vaddr, memsz, offset, filesz)
mapped = []  # (start, end, file offset, path)
for i in range(phnum):
    p_type, _flags, offset, vaddr, _paddr, filesz, memsz, _align = struct.unpack_from(
        "<IIQQQQQQ", core, phoff + i * phentsize
    )
    if p_type == 1:
        segments.append((vaddr, memsz, offset, filesz))
    elif p_type == 4:
        # NT_FILE: the file-backed mappings.
        at = offset
        end = offset + filesz
        while at < end:
            namesz, descsz, ntype = struct.unpack_from("<III", core, at)
            name_at = at + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            if ntype == 0x46494C45:
                count, page = struct.unpack_from("<QQ", core, desc_at)
                entries = desc_at + 16
                names = entries + count * 24
                paths = core[names : desc_at + descsz].split(b"\0")
                for k in range(count):
                    start, stop, pgoff = struct.unpack_from("<QQQ", core, entries + k * 24)
                    mapped.append((start, stop, pgoff * page, paths[k].decode()))
            at = desc_at + ((descsz + 3) & ~3)

files = {}


def file_bytes(path):
    if path not in files:
        try:
            with open(path, "rb") as f:
                files[path] = f.read()
        except OSError:
            files[path] = b""
    return files[path]


def read(address, size):
    for vaddr, memsz, offset, filesz in segments:
        if vaddr <= address < vaddr + memsz and address - vaddr < filesz:
            at = offset + address - vaddr
            return core[at : at + min(size, filesz - (address - vaddr))]
    for start, stop, file_offset, path in mapped:
        if start <= address < stop:
            data = file_bytes(path)
            at = file_offset + address - start
            return data[at : at + min(size, stop - address)] or None
    return None


def objects():
    placed, seen = [], set()
    for start, _stop, file_offset, path in mapped:
        if file_offset == 0 and path not in seen:
            seen.add(path)
            # The first page of a shared object or PIE is its link-time 0.
            placed.append((path, path, start))
    return placed


later = int(sys.argv[3]) if len(sys.argv) > 3 else 0
rank = Rank(read, objects)
for stop in ["first"] + ["later"] * later:
    reading = rank.queues(model=False)
    print(stop, reading["json"].count('"status"'))
    rank.clear_cache()
