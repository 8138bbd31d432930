"""Keeps a layout profile's release family across a rewrite: `mpidd profile
write` writes what the objects' DWARF answers, and the family (which builds
the layouts hold for, and the facts behind the claim) is written by a
person, so a regenerated profile takes it again from the file it replaces.

    python3 keep-family.py OLD NEW

OLD is the profile as it was (a copy taken before the rewrite; a missing
file or one without a family leaves NEW as it is). The family goes last in
NEW, where the profile's own JSON writer puts it.
"""

import json
import os
import sys

old, new = sys.argv[1], sys.argv[2]
if not os.path.exists(old):
    sys.exit(0)
with open(old) as f:
    family = json.load(f).get("family")
if family is None:
    sys.exit(0)
with open(new) as f:
    text = f.read()
profile = json.loads(text)
if "family" in profile:
    sys.exit(0)
body = json.dumps(family, indent=2, ensure_ascii=False).replace("\n", "\n  ")
text = text.rstrip()
assert text.endswith("}"), f"{new} does not end its JSON object"
text = text[:-1].rstrip() + ',\n  "family": ' + body + "\n}\n"
json.loads(text)
with open(new, "w") as f:
    f.write(text)
