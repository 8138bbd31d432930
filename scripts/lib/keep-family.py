"""Keeps a layout profile's release families across a rewrite: `mpidd profile
write` writes what the objects' DWARF answers, and the families (which builds
the layouts hold for, the variants that lay a few types out otherwise, and
the facts behind each claim) are written by a person, so a regenerated
profile takes them again from the file it replaces.

    python3 keep-family.py OLD NEW

OLD is the profile as it was (a copy taken before the rewrite; a missing
file or one without a family leaves NEW as it is). The family, then its
variants, go last in NEW, where the profile's own JSON writer puts them.
"""

import json
import os
import sys

old, new = sys.argv[1], sys.argv[2]
if not os.path.exists(old):
    sys.exit(0)
with open(old) as f:
    previous = json.load(f)
kept = [(key, previous[key]) for key in ("family", "family_variants") if key in previous]
if not kept:
    sys.exit(0)
with open(new) as f:
    text = f.read()
profile = json.loads(text)
if any(key in profile for key, _ in kept):
    sys.exit(0)
text = text.rstrip()
assert text.endswith("}"), f"{new} does not end its JSON object"
text = text[:-1].rstrip()
for key, value in kept:
    body = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
    text += f',\n  "{key}": ' + body
text += "\n}\n"
json.loads(text)
with open(new, "w") as f:
    f.write(text)
