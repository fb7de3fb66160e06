#!/usr/bin/env python3
"""Checks issue 22's size rules on the Rust sources git tracks: no file over 500 lines, no
function over 80 lines (from its `fn` line to its closing brace). Prints each breach and exits 1
when there is one, 0 otherwise.

Usage: scripts/check-size.py [--files N] [--functions N] [PATH ...]
(PATH: folders or files below the repository; the whole repository by default.)
"""

import argparse
import re
import subprocess
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+(\w+)")


def strip(line):
    """The line without its string and char literals and its `//` comment, so that braces
    inside them are not counted (good enough for rustfmt-formatted code)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def functions(lines):
    """(name, first line, length) of each function with a body in `lines`."""
    out = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = strip(lines[j])
            if not opened and ";" in code and "{" not in code and depth == 0:
                if code.rstrip().endswith(";"):
                    break
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                out.append((m.group(5), i + 1, j - i + 1))
                break
    return out


def main():
    ap = argparse.ArgumentParser(description="issue 22's size rules")
    ap.add_argument("--files", type=int, default=500, help="most lines a file may have")
    ap.add_argument("--functions", type=int, default=80, help="most lines a function may have")
    ap.add_argument("paths", nargs="*", default=["."])
    a = ap.parse_args()
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *a.paths],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    breaches = 0
    for path in sorted(p for p in listed if p.endswith(".rs")):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        if len(lines) > a.files:
            print(f"{path}: {len(lines)} lines (over {a.files})")
            breaches += 1
        for name, first, length in functions(lines):
            if length > a.functions:
                print(f"{path}:{first}: fn {name} is {length} lines (over {a.functions})")
                breaches += 1
    print(f"{breaches} over the limits")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
