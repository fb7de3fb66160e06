#!/usr/bin/env python3
"""Checks issue 22's size rules on the Rust sources git tracks: no file over 500 lines, no
function over 80 lines (from its `fn` line to its closing brace). Prints each breach and exits 1
when there is one, 0 otherwise. The functions in KNOWN are known breaches, printed but not
counted; one that is back within the limit is named so that it is struck from KNOWN.
tests/size_rules.rs runs this in the test suite.

Usage: scripts/check-size.py [--files N] [--functions N] [PATH ...]
(PATH: folders or files below the repository, relative to its root, from wherever the script is
run; the whole repository by default.)
"""

import argparse
import os
import re
import subprocess
import sys

# (path, function) known to be over the limit, each with its owner's reason: strike an entry
# once the function is split.
KNOWN = set()

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
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *a.paths],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    breaches = 0
    still_over = set()
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
                known = (path, name) in KNOWN
                print(f"{path}:{first}: fn {name} is {length} lines (over {a.functions})"
                      + (" (known: see KNOWN)" if known else ""))
                breaches += not known
                still_over.add((path, name))
    for path, name in sorted(KNOWN - still_over):
        if path in listed:
            print(f"{path}: fn {name} is within the limit now: strike it from KNOWN")
    print(f"{breaches} over the limits")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
