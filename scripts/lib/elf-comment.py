#!/usr/bin/env python3
"""Copies an ELF64 little-endian relocatable object, with one string of its
.comment section (the compiler's identification) replaced by another no
longer than it.

    elf-comment.py OLD NEW SRC DST

Used by scripts/rebuild-debian-mpich.sh on gcc's start files: the string is
hashed into the build-id of every shared library they are linked into. The
section keeps its place; only its size shrinks. Fails if OLD is absent."""
import struct
import sys


def main():
    old, new = sys.argv[1].encode(), sys.argv[2].encode()
    src, dst = sys.argv[3], sys.argv[4]
    if len(new) > len(old):
        sys.exit("elf-comment.py: the new string is longer than the old one")
    b = bytearray(open(src, "rb").read())
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1 or b[16] != 1:
        sys.exit(f"elf-comment.py: {src}: not an ELF64 little-endian relocatable object")
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)

    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize)

    names = header(shstrndx)[4]
    for i in range(shnum):
        name, _, _, _, off, size, _, _, _, _ = header(i)
        if bytes(b[names + name:b.index(b"\0", names + name)]) != b".comment":
            continue
        data = bytes(b[off:off + size])
        if old + b"\0" not in data:
            continue
        data = data.replace(old + b"\0", new + b"\0")
        b[off:off + size] = data + b"\0" * (size - len(data))
        struct.pack_into("<Q", b, shoff + i * shentsize + 0x20, len(data))
        open(dst, "wb").write(b)
        return
    sys.exit(f"elf-comment.py: {src}: no .comment holds {sys.argv[1]!r}")


main()
