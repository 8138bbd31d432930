#!/usr/bin/python3
"""Measures how a release family's stripped libraries keep their hidden
globals, from a stand-in library of the family's source with symbols
(scripts/write-mpich-wheel-profile.sh links one from the objects it
compiles), and writes it into the family of a profile as
`hidden_globals` (mpidd_read::HiddenGlobalRecipes):

- records: each object allocator (`*_mem`, an MPIR_Object_alloc_t in
  .data) with the values its initialiser gives kind, size and
  direct_size, and the global its relocated `direct` pointer names;
- references: for each global the decoders start from, the exported
  functions of the stand-in that reference it, with the offsets into it
  that each references (from objdump's resolved RIP-relative operands),
  and where the stand-in put it (the distances between globals of one
  object hold in every library linked from it);
- strings: MPICH's version and device beside its configure line.

  hidden-global-recipes.py STANDIN PROFILE OBJECT GLOBAL...

Only facts go into the profile: sizes, offsets, values, function names.
"""
import json
import os
import re
import subprocess
import sys

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

MAX_FUNCTIONS = 8

standin, profile_path, object_name = sys.argv[1:4]
wanted = sys.argv[4:]

profile = json.load(open(profile_path))
layouts = profile["layouts"]
alloc = layouts["MPIR_Object_alloc_t"]["members"]

elf = ELFFile(open(standin, "rb"))
symtab = elf.get_section_by_name(".symtab")
sections = {s.name: s for s in elf.iter_sections()}


def section_of(address):
    for s in elf.iter_sections():
        if s["sh_flags"] & 2 and s["sh_addr"] <= address < s["sh_addr"] + s["sh_size"]:
            return s.name
    return None


objects = {}
for sym in symtab.iter_symbols():
    if sym["st_info"]["type"] == "STT_OBJECT" and sym["st_shndx"] != "SHN_UNDEF":
        objects.setdefault(sym.name, (sym["st_value"], sym["st_size"]))
by_address = {a: n for n, (a, _) in objects.items()}

relative = {}
for s in elf.iter_sections():
    if isinstance(s, RelocationSection):
        for r in s.iter_relocations():
            if r["r_info_type"] == 8:  # R_X86_64_RELATIVE
                relative[r["r_offset"]] = r["r_addend"]

data = sections[".data"]
data_bytes = data.data()


def field(address, member):
    m = alloc[member]
    off = address - data["sh_addr"] + m["offset"]
    return int.from_bytes(data_bytes[off : off + m["size"]], "little")


records = []
for name in sorted(objects):
    address, size = objects[name]
    if not name.endswith("_mem") or section_of(address) != ".data" or size != layouts["MPIR_Object_alloc_t"]["size"]:
        continue
    direct_at = address + alloc["direct"]["offset"]
    target = relative.get(direct_at)
    # The allocator's own direct array, else whatever object is there.
    pointee = name[: -len("_mem")] + "_direct"
    equal = [
        {"offset": alloc[m]["offset"], "size": alloc[m]["size"], "value": field(address, m)}
        for m in ("kind", "size", "direct_size")
    ]
    if target is None and field(address, "direct") == 0:
        # An allocator whose direct array its initialiser leaves NULL
        # (5.0's datatypes keep theirs for the predefined ones).
        equal.append({"offset": alloc["direct"]["offset"], "size": alloc["direct"]["size"], "value": 0})
        records.append({"symbol": name, "size": size, "section": ".data", "align": 8, "equal": equal})
        continue
    if target is None or objects.get(pointee, (None,))[0] != target:
        if target is None or target not in by_address:
            continue
        pointee = by_address[target]
    records.append(
        {
            "symbol": name,
            "size": size,
            "section": ".data",
            "align": 8,
            "equal": equal,
            "pointers": [
                {
                    "offset": alloc["direct"]["offset"],
                    "symbol": pointee,
                    "size": objects[pointee][1],
                    "section": section_of(target),
                }
            ],
        }
    )

# Exported functions and the globals they reference, from objdump's
# resolved operands: `# 1234 <MPIR_Process+0x8>`.
exported = set()
dynsym = elf.get_section_by_name(".dynsym")
for sym in dynsym.iter_symbols():
    if sym["st_info"]["type"] == "STT_FUNC" and sym["st_shndx"] != "SHN_UNDEF" and sym["st_other"]["visibility"] == "STV_DEFAULT":
        exported.add(sym.name)
refs = {}  # function -> global -> offsets
function = None
# `lea 0x38a17(%rip),%r14        # 41be0 <MPIR_Process>`: the address an
# operand references; one in the GOT stands for the global its slot's
# relative relocation gives.
operand = re.compile(r"#\s+([0-9a-f]+)\s+<")
head = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
ranges = sorted((a, a + max(size, 1), n) for n, (a, size) in objects.items())


def containing(address):
    lo, hi = 0, len(ranges)
    while lo < hi:
        mid = (lo + hi) // 2
        if ranges[mid][0] <= address:
            lo = mid + 1
        else:
            hi = mid
    if lo and ranges[lo - 1][0] <= address < ranges[lo - 1][1]:
        return ranges[lo - 1][2], address - ranges[lo - 1][0]
    return None


dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", standin], capture_output=True, text=True, check=True).stdout
for line in dump.splitlines():
    m = head.match(line)
    if m:
        function = m.group(1) if m.group(1) in exported else None
        continue
    if function is None:
        continue
    m = operand.search(line)
    if not m:
        continue
    address = int(m.group(1), 16)
    address = relative.get(address, address)
    found = containing(address)
    if found:
        refs.setdefault(function, {}).setdefault(found[0], set()).add(found[1])

# Each global's alignment (MPIDD_ALIGNMENTS: `NAME ALIGN` lines).
alignments = {}
if os.environ.get("MPIDD_ALIGNMENTS"):
    for line in open(os.environ["MPIDD_ALIGNMENTS"]):
        n, a = line.split()
        alignments[n] = int(a)

references = []
for name in wanted:
    if name not in objects:
        print(f"hidden-global-recipes: {name} is not in {standin}", file=sys.stderr)
        continue
    address, size = objects[name]
    users = [(f, g) for f, g in refs.items() if name in g]
    # The functions that reference the fewest other globals first, then
    # the most offsets into this one.
    users.sort(key=lambda fg: (len(fg[1]), -len(fg[1][name]), fg[0]))
    if not users:
        # Kept with no function, so that a locator names it as not found.
        print(f"hidden-global-recipes: no exported function references {name}", file=sys.stderr)
    references.append(
        {
            "symbol": name,
            "size": size,
            "align": alignments.get(name, 1),
            "sections": [section_of(address)],
            "functions": [{"function": f, "offsets": sorted(g[name])} for f, g in users[:MAX_FUNCTIONS]],
            # Globals one object defines keep their distances in every
            # library linked from it: a tie their sizes leave is undone so.
            "standin_address": address,
        }
    )

recipes = {
    "object": object_name,
    "strings": [
        {"symbol": "MPII_Version_string", "near": "--with-device=", "is": "version"},
        {"symbol": "MPII_Version_device", "near": "--with-device=", "is": "device"},
    ],
    "records": records,
    "references": references,
}
if profile.get("family") is None:
    sys.exit("the profile declares no family to hold the recipes")
profile["family"]["hidden_globals"] = recipes
with open(profile_path, "w") as f:
    json.dump(profile, f, indent=2)
    f.write("\n")
print(
    f"hidden-global-recipes: {len(records)} records, {len(references)} referenced globals",
    file=sys.stderr,
)
