"""Compares what a compiler measured (the output of the program
layouts-in-c.py writes) with a layout table, fact by fact.

    python3 compare-layouts.py LAYOUTS MEASURED

Prints each difference and a count; exits 1 if any fact differs or none was
measured.
"""

import json
import sys

table = json.load(open(sys.argv[1]))
facts = differ = 0
for line in open(sys.argv[2]):
    kind, *rest = line.split()
    facts += 1
    if kind == "size":
        name, got = rest
        want = table[name]["size"]
    elif kind in ("offset", "msize"):
        name, path, got = rest
        want = table[name]["members"][path]["offset" if kind == "offset" else "size"]
    elif kind == "enum":
        name, enumerator, got = rest
        want = dict(table[name]["enumerators"])[enumerator]
    else:
        sys.exit(f"not a measured fact: {line!r}")
    if int(got) != want:
        differ += 1
        print(f"differs: {line.strip()}, the layouts say {want}")
print(f"{facts} facts measured, {differ} differ")
sys.exit(1 if differ or not facts else 0)
