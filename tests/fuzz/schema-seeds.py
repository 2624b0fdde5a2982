#!/usr/bin/env python3
"""Seeds for fuzz-json-schema: the `schema` fields of the golden JSON Schema test files.

usage: schema-seeds.py SRC_DIR OUT_DIR [--max-bytes N] [--all]

Each SRC_DIR/*.json is {"schema": ..., "meta": {"features": [...], "raw_features": [...]},
"tests": [...]}. Its schema is written compactly (key order kept) to OUT_DIR/<name>.json, unless
it is longer than --max-bytes (default 16384, the fuzzer's -max_len: a longer input would be cut
into text that is no JSON). By default only the shortest schema of each distinct pair of feature
lists is written; --all writes every schema. Identical schemas are written once.

Loading the seeds costs the fuzzer one compile each before it mutates anything (under ASan with
leak checks, ~2,400 schemas up to 16 KiB: ~140 s; one per feature list up to 1 KiB, ~700: ~15 s),
so run-fuzz.sh takes the small set for `make test`'s short budget and every schema for long runs.
"""
import argparse
import json
import pathlib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--max-bytes", type=int, default=16384)
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    chosen = {}  # key → (length, name, text)
    too_long = 0
    for f in sorted(args.src.glob("*.json")):
        try:
            case = json.loads(f.read_text(encoding="utf-8"))
            schema = case["schema"]
        except (ValueError, KeyError, TypeError):
            continue
        text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
        size = len(text.encode("utf-8"))
        if size > args.max_bytes:
            too_long += 1
            continue
        meta = case.get("meta", {}) if isinstance(case, dict) else {}
        key = text if args.all else json.dumps([sorted(meta.get("features", [])), sorted(meta.get("raw_features", []))])
        if key not in chosen or size < chosen[key][0]:
            chosen[key] = (size, f.name, text)
    seen = set()
    for size, name, text in chosen.values():
        if text in seen:
            continue
        seen.add(text)
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"schema-seeds: {len(seen)} schemas from {args.src} ({too_long} longer than {args.max_bytes} bytes left out"
          f"{'' if args.all else ', one per feature list'})")


if __name__ == "__main__":
    main()
