"""Writes a C program that prints how the headers it is compiled against lay
out the types of a layout table: a compiler's own answer to each question a
profile's layouts answer, to compare with them.

    python3 layouts-in-c.py LAYOUTS OUT.c --header H [--header H]... [--skip TYPE]...

LAYOUTS is a JSON file of a layout table as profiles write it (type name to
its size, members and enumerators: a profile's `layouts`, or a family
variant's layouts as mpidd_read serializes them). Each --header is
#included in order; each --skip leaves out a type those headers do not
define (and the enumerations named after its members). The program prints
one fact a line:

    size TYPE BYTES
    offset TYPE MEMBER.PATH BYTES
    msize TYPE MEMBER.PATH BYTES
    enum ENUMERATION NAME VALUE

Member paths are compiled as they are written (`ompio_fh.f_atomicity`):
GCC's offsetof takes nested members. An enumeration's values are compiled by
their enumerators' names, which is what makes them checkable.
"""

import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("layouts")
parser.add_argument("out")
parser.add_argument("--header", action="append", default=[])
parser.add_argument("--skip", action="append", default=[])
args = parser.parse_args()

with open(args.layouts) as f:
    table = json.load(f)


def skipped(name):
    return any(name == s or name.startswith(s + ".") for s in args.skip)


lines = ["#include <stddef.h>", "#include <stdio.h>"]
lines += [f'#include "{h}"' for h in args.header]
lines.append("int main(void)\n{")
for name in sorted(table):
    if skipped(name):
        continue
    entry = table[name]
    for enumerator, _ in entry.get("enumerators", []):
        lines.append(
            f'    printf("enum {name} {enumerator} %lld\\n", (long long)({enumerator}));'
        )
    if "enumerators" in entry or "size" not in entry:
        continue
    lines.append(f'    printf("size {name} %zu\\n", sizeof({name}));')
    for path, member in sorted(entry.get("members", {}).items()):
        lines.append(
            f'    printf("offset {name} {path} %zu\\n", offsetof({name}, {path}));'
        )
        if "size" in member:
            lines.append(
                f'    printf("msize {name} {path} %zu\\n", sizeof((({name} *)0)->{path}));'
            )
lines.append("    return 0;\n}")
with open(args.out, "w") as f:
    f.write("\n".join(lines) + "\n")
