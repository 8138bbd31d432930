#!/usr/bin/env python3
"""Lists the public items of one crate from its rustdoc JSON, one per line,
sorted: "KIND PATH" for items reachable by a public path (re-exports
followed, so an item reachable two ways is listed twice), and
"impl TYPE: TRAIT" for the trait implementations of listed types.

Usage: public-api.py CRATE.json

The listing is what `cargo public-api` would compare, without its
dependency on a nightly toolchain: an item that disappears from a path is
a removal a user notices."""

import json
import sys

KIND_NAMES = {
    "struct_field": "field",
    "assoc_type": "trait-item",
}


def main(path):
    doc = json.load(open(path))
    index = doc["index"]
    lines = set()
    seen_modules = set()

    def inner(item):
        (kind, body), = item["inner"].items()
        return kind, body

    def visible(item):
        return item["visibility"] in ("public", "default")

    def list_trait_impls(type_path, impl_ids):
        for impl_id in impl_ids:
            impl = index.get(str(impl_id))
            if impl is None:
                continue
            _, body = inner(impl)
            if body.get("is_synthetic") or body.get("blanket_impl"):
                continue
            trait = body.get("trait")
            if trait is None:
                for member in body["items"]:
                    list_member(type_path, member)
            else:
                name = trait["path"].split("::")[-1]
                lines.add(f"impl {type_path}: {name}")

    def list_member(owner, member_id):
        member = index.get(str(member_id))
        if member is None or member["visibility"] != "public":
            return
        kind, _ = inner(member)
        lines.add(f"{KIND_NAMES.get(kind, kind)} {owner}::{member['name']}")

    def list_item(prefix, name, item):
        kind, body = inner(item)
        path = f"{prefix}::{name}" if prefix else name
        if kind == "module":
            lines.add(f"module {path}")
            # A module reachable by two paths lists its items under both;
            # the depth cap stops a module that re-exports its own parent.
            guard = (item["id"], path)
            if guard in seen_modules or path.count("::") > 12:
                return
            seen_modules.add(guard)
            for child in body["items"]:
                list_child(path, child)
            return
        if kind == "use":
            target = index.get(str(body["id"])) if body["id"] is not None else None
            if target is None:
                # Re-exported from another crate: only its name is ours.
                lines.add(f"use {path if not body['is_glob'] else prefix + '::*'} = {body['source']}")
                return
            if body["is_glob"]:
                _, tbody = inner(target)
                for child in tbody.get("items", []):
                    list_child(prefix, child)
                return
            list_item(prefix, body["name"], target)
            return
        lines.add(f"{KIND_NAMES.get(kind, kind)} {path}")
        if kind == "struct":
            fields = body["kind"].get("plain", {}).get("fields", [])
            for field in fields:
                list_member(path, field)
            list_trait_impls(path, body["impls"])
        elif kind == "enum":
            for variant_id in body["variants"]:
                variant = index[str(variant_id)]
                lines.add(f"variant {path}::{variant['name']}")
            list_trait_impls(path, body["impls"])
        elif kind == "union":
            list_trait_impls(path, body["impls"])
        elif kind == "trait":
            for member_id in body["items"]:
                member = index.get(str(member_id))
                if member is not None:
                    lines.add(f"trait-item {path}::{member['name']}")

    def list_child(prefix, child_id):
        child = index.get(str(child_id))
        if child is None or not visible(child) or child["visibility"] != "public":
            return
        kind, body = inner(child)
        if kind == "impl":
            return
        name = child["name"]
        list_item(prefix, name, child)

    root = index[str(doc["root"])]
    list_item("", root["name"], root)
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
