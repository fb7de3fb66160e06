#!/usr/bin/env python3
"""Finds module circles inside each crate of the workspace (issue 38) and exits 1 when there is
one that KNOWN does not name, 0 otherwise. tests/circle_rules.rs runs this in the test suite.

What a module circle is here:
- The graph is one crate's files: a node is a `.rs` file (an inline `mod x { … }` belongs to its
  file). The crates are the root crate (`src/lib.rs`) and each `crates/*/src/lib.rs`; the module
  tree is read from their `mod` declarations (`x.rs` or `x/mod.rs`, beside or below the parent).
- An arrow A → B means that code in file A names a path that reaches a module whose file is B:
  a `use` (`crate::…`, `super::…`, `self::…`, or a path starting with a child module's name or a
  module imported by an earlier `use`), or the same kinds of path written inline in code
  (`crate::x::y(…)`, `super::model::Figures`, `kinds::moves_datagrams(…)`). A path reaches the
  deepest module it names (`crate::build::rate` reaches `build.rs`), and a name that module
  only imports is followed to the file that defines it: with `pub use finding::Finding;` in
  `lib.rs`, `use crate::Finding` reaches `finding.rs`. The re-export is an arrow of its own,
  from the file that re-exports to the file that defines.
- Declaring a module (`mod x;`) is not an arrow: a parent naturally declares its children. A
  parent that re-exports or calls into a child, while the child uses something defined in the
  parent, is a circle (move what the child needs into a leaf of its own).
- Test code is left out: a `#[cfg(test)]` item (a `mod tests`, inline or its own file, or a lone
  test helper) adds no arrow, since tests may reach anything in their crate.
- Comments (doc links included) and string literals are not read.
- A circle is a strongly connected component of two files or more. Each is printed with its
  files and every arrow inside it (each such arrow lies on some cycle), with one line that makes
  the arrow, so a reader knows what to move to break it.

KNOWN names circles known and owned elsewhere by where they lie: a circle is known when each of
its files lies under one of an entry's folders (or is one of its files). It is printed but not
counted; an entry with no circle left is named so that it is struck from KNOWN.

Usage: scripts/check-circles.py [CRATE_DIR ...]   (the whole workspace by default)
"""

import bisect
import glob
import os
import re
import sys

# Circles known and owned elsewhere (issue 38 breaks them): the folders (or files) a circle
# lies in, and its owner. Strike an entry once no circle is left in it.
KNOWN = {
    ("crates/engine/",): "issue 38, a kind brings its own state (kind.rs, path.rs, profile)",
    ("src/cli/", "src/controller/"): "issue 38, no clap type below src/commands",
}

MOD = re.compile(r"((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])")
CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
USE = re.compile(r"\buse\s+([^;]*);")
PATH = re.compile(r"(?<![\w:$])\$?(\w+)((?:\s*::\s*\w+)+)")
TOKEN = re.compile(r"::|[{},*]|\w+")
RAW = re.compile(r'(?<![\w])b?r(#*)"')
CHAR = re.compile(r"'(\\[^']+|[^\\'])'")


def clean(text):
    """The text with comments, strings and char literals blanked (newlines kept), so that what
    is left is code whose offsets and lines are the file's."""
    out, i, n = [], 0, len(text)
    while i < n:
        c, j = text[i], i + 1
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                step = 2 if text.startswith(("/*", "*/"), j) else 1
                depth += {"/*": 1, "*/": -1}.get(text[j : j + 2], 0) if step == 2 else 0
                j += step
        elif c in "br" and (m := RAW.match(text, i)):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
        elif c == '"' or text.startswith('b"', i):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
        elif c == "'" and (m := CHAR.match(text, i)):
            j = m.end()
        else:
            out.append(c)
            i = j
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def item_end(code, start):
    """Where the item beginning at `start` ends: its `;` or its closing brace."""
    depth, i = 0, start
    while i < len(code):
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        elif c == "{" and depth == 0:
            level = 0
            for j in range(i, len(code)):
                level += {"{": 1, "}": -1}.get(code[j], 0)
                if level == 0:
                    return j + 1
            return len(code)
        i += 1
    return len(code)


class Source:
    """One file: its cleaned code, its module path, its inline modules and test regions."""

    def __init__(self, path, modpath):
        self.path, self.modpath = path, modpath
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.lines = self.text.splitlines()
        self.code = clean(self.text)
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.code)]
        self.inline = []  # (start, end, name)
        self.tests = []  # (start, end)
        self.decls = []  # (inline module path, name, is test) of `mod x;`
        for m in MOD.finditer(self.code):
            test = bool(CFG_TEST.search(m.group(1)))
            if m.group(3) == "{":
                end = item_end(self.code, m.start(3))
                self.inline.append((m.start(3), end, m.group(2)))
                if test:
                    self.tests.append((m.start(), end))
            else:
                self.decls.append((self.inner(m.start()), m.group(2), test))
        for m in CFG_TEST.finditer(self.code):
            self.tests.append((m.start(), item_end(self.code, m.end())))
        self.uses = []  # (offset, module path, segments, alias, glob) of each `use`
        rest = self.code
        for m in USE.finditer(self.code):
            rest = rest[: m.start()] + re.sub(r"[^\n]", " ", m.group(0)) + rest[m.end() :]
            if not self.in_test(m.start()):
                inner = modpath + self.inner(m.start())
                for segs, alias, is_glob in use_paths(m.group(1)):
                    self.uses.append((m.start(), inner, segs, alias, is_glob))
        self.rest = rest  # the code without its `use` items

    def inner(self, pos):
        """The inline module names enclosing `pos`, outermost first."""
        return tuple(name for s, e, name in self.inline if s < pos < e)

    def in_test(self, pos):
        return any(s <= pos < e for s, e in self.tests)

    def line(self, pos):
        return bisect.bisect_right(self.starts, pos)

    def children_dir(self):
        base = os.path.basename(self.path)
        if base in ("lib.rs", "main.rs", "mod.rs"):
            return os.path.dirname(self.path)
        return self.path[: -len(".rs")]


class Crate:
    """One crate's module tree, read from its root file's `mod` declarations."""

    def __init__(self, name, root):
        self.name = name
        self.files = {}  # path -> Source
        self.module_file = {}  # module path -> file path
        self.children = {}  # module path -> {name: module path}
        self.load(root, ())
        self.imports = {}  # module path -> {name: (module path, segments)} of its `use`s
        for src in self.files.values():
            for _, current, segs, alias, is_glob in src.uses:
                if not is_glob:
                    self.imports.setdefault(current, {})[alias or segs[-1]] = (current, segs)

    def load(self, path, modpath):
        src = Source(path, modpath)
        self.files[path] = src
        self.module_file[modpath] = path
        self.children.setdefault(modpath, {})
        for s, e, name in src.inline:
            inner = modpath + src.inner(s + 1)
            self.children.setdefault(inner[:-1], {})[inner[-1]] = inner
            self.module_file[inner] = path
            self.children.setdefault(inner, {})
        for inner, name, test in src.decls:
            parent = modpath + inner
            child = parent + (name,)
            here = os.path.join(src.children_dir(), *inner)
            for candidate in (os.path.join(here, name + ".rs"), os.path.join(here, name, "mod.rs")):
                if os.path.isfile(candidate):
                    self.children.setdefault(parent, {})[name] = child
                    if not test:
                        self.load(candidate, child)
                    break

    def resolve(self, current, segments, aliases, depth=0):
        """The module path that `segments`, written in module `current`, reaches; None when the
        path leaves the crate. A name the reached module only imports (`pub use x::Y;`, or a
        private `use` a child reaches through `super::`) is followed to where it is defined."""
        first, rest = segments[0], list(segments[1:])
        if first == "crate":
            at = ()
        elif first == "self":
            at = current
        elif first == "super":
            at = current[:-1]
            while rest and rest[0] == "super":
                at, rest = at[:-1], rest[1:]
        elif first in self.children.get(current, {}):
            at = self.children[current][first]
        elif first in aliases:
            at = aliases[first]
        else:
            return None
        while rest and rest[0] in self.children.get(at, {}):
            at, rest = self.children[at][rest[0]], rest[1:]
        imported = self.imports.get(at, {}).get(rest[0]) if rest else None
        if imported and depth < 16:
            home, path = imported
            return self.resolve(home, path + rest[1:], {}, depth + 1)
        return at


def use_paths(tree):
    """The paths a `use` tree names: [(segments, alias or None, glob)]."""
    tokens = TOKEN.findall(tree)
    out = []

    def walk(i, prefix):
        segs = list(prefix)
        while i < len(tokens):
            t = tokens[i]
            if t == "::":
                i += 1
            elif t == "{":
                i += 1
                while tokens[i] != "}":
                    i = walk(i, segs)
                    if tokens[i] == ",":
                        i += 1
                return i + 1
            elif t == "*":
                out.append((segs, None, True))
                return i + 1
            elif t in (",", "}"):
                break
            else:
                segs.append(t)
                i += 1
                if i < len(tokens) and tokens[i] == "as":
                    out.append((segs, tokens[i + 1], False))
                    return i + 2
        if segs:
            out.append((segs, None, False))
        return i

    try:
        walk(0, [])
    except IndexError:
        pass
    return [(s[:-1] if s[-1] == "self" else s, a, g) for s, a, g in out if s and s != ["self"]]


def arrows(crate):
    """{(from file, to file): (line number, line)} for every arrow of the crate."""
    found = {}

    def add(src, pos, target):
        if target is None:
            return
        dst = crate.module_file.get(target)
        if dst and dst != src.path and (src.path, dst) not in found:
            n = src.line(pos)
            found[(src.path, dst)] = (n, src.lines[n - 1].strip())

    for src in crate.files.values():
        aliases = {}
        for pos, current, segs, alias, is_glob in src.uses:
            at = crate.resolve(current, segs, aliases)
            add(src, pos, at)
            if at is None:
                continue
            if is_glob:
                for name, child in crate.children.get(at, {}).items():
                    aliases.setdefault(name, child)
            elif crate.children.get(at[:-1], {}).get(segs[-1]) == at or alias:
                aliases[alias or segs[-1]] = at
        for m in PATH.finditer(src.rest):
            if src.in_test(m.start()):
                continue
            segs = [m.group(1)] + re.findall(r"\w+", m.group(2))
            current = src.modpath + src.inner(m.start())
            add(src, m.start(), crate.resolve(current, segs, aliases))
    return found


def circles(graph):
    """The strongly connected components of two nodes or more (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def known_entry(files):
    """The KNOWN entry whose folders hold every one of `files`, or None."""
    for entry in KNOWN:
        if all(any(f.startswith(place) for place in entry) for f in files):
            return entry
    return None


def workspace(args):
    """(name, root file) of each crate to check."""
    dirs = args or ["."] + sorted(glob.glob("crates/*"))
    out = []
    for d in dirs:
        root = os.path.normpath(os.path.join(d, "src", "lib.rs"))
        if os.path.isfile(root):
            out.append((os.path.normpath(d) if d != "." else "fathom", root))
    return out


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    unknown, seen = 0, set()
    for name, root in workspace(sys.argv[1:]):
        crate = Crate(name, root)
        found = arrows(crate)
        graph = {}
        for a, b in found:
            graph.setdefault(a, set()).add(b)
        for comp in circles(graph):
            entry = known_entry(comp)
            seen.add(entry)
            unknown += entry is None
            tag = f" (known: {KNOWN[entry]})" if entry else ""
            print(f"{name}: a circle of {len(comp)} files{tag}:")
            for f in comp:
                print(f"  {f}")
            print("  arrows inside it:")
            inside = set(comp)
            for (a, b), (n, line) in sorted(found.items()):
                if a in inside and b in inside:
                    print(f"    {a}:{n} -> {b}: {line}")
    for entry in sorted(set(KNOWN) - seen) if not sys.argv[1:] else ():
        print(f"{', '.join(entry)}: no circle left: strike it from KNOWN")
    print(f"{unknown} circles outside KNOWN")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
