#!/usr/bin/env python3
"""Compare every top-level item the series changes with mainline's.

  mainline_diff.py TREE PRISTINE_REF MAINLINE_DIR OUT_DIR

TREE is the patched 6.12 git tree (HEAD = the series on top of
PRISTINE_REF); MAINLINE_DIR an extracted mainline tree (linux-source-7.3).
For every C file or header the series changes (the test files aside),
the top-level items (functions, structs, unions, enums, macros, and the
Kconfig entries of Kconfig files) whose text the series changes or adds
are looked up in the same file of mainline (or, if absent there, in any
file of the same directories) and compared with white space folded.
Writes OUT_DIR/summary.md (one row per item: identical, differs, not in
mainline) and OUT_DIR/diffs/FILE--ITEM.diff (6.12 patched vs mainline).
"""
import difflib
import os
import re
import subprocess
import sys

ITEM_START = re.compile(
    r"^(?:static\s+|extern\s+|inline\s+|__always_inline\s+|noinline\s+|"
    r"__maybe_unused\s+|__init\s+|const\s+|unsigned\s+|struct\s+|enum\s+|"
    r"union\s+|[A-Za-z_][A-Za-z0-9_]*\s+|\*)*?"
    r"\**\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")
AGG_START = re.compile(r"^(struct|union|enum)\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")
DEFINE = re.compile(r"^#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)")
KCONFIG = re.compile(r"^(?:menu)?config\s+([A-Za-z0-9_]+)")


def strip_code(line):
    """The line without string/char literals and comments, for counting braces."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    line = re.sub(r"/\*.*?\*/", "", line)
    return line.split("//")[0]


def c_items(text):
    """{name: text} of the top-level items of a C file: functions, struct,
    union and enum definitions (by brace counting), and macros."""
    lines = text.split("\n")
    items = {}
    i = 0
    in_comment = False
    while i < len(lines):
        line = lines[i]
        if in_comment:
            in_comment = "*/" not in line
            i += 1
            continue
        if line.lstrip().startswith("/*") and "*/" not in line:
            in_comment = True
            i += 1
            continue
        m = DEFINE.match(line)
        if m:
            j = i
            while lines[j].endswith("\\") and j + 1 < len(lines):
                j += 1
            items.setdefault("#define " + m.group(1), "\n".join(lines[i:j + 1]))
            i = j + 1
            continue
        name = None
        m = AGG_START.match(line)
        if m:
            name = f"{m.group(1)} {m.group(2)}"
        elif line and not line[0].isspace() and line[0] not in "#/*}{" and "(" in line \
                and not line.startswith(("static_assert", "FOLIO_MATCH", "TABLE_MATCH",
                                         "EXPORT_SYMBOL", "DEFINE_", "module_", "late_initcall",
                                         "core_param", "__setup", "early_param")):
            m = ITEM_START.match(line)
            if m:
                name = m.group(1) + "()"
        if not name:
            i += 1
            continue
        depth, opened, j = 0, False, i
        while j < len(lines):
            code = strip_code(lines[j])
            if not opened and ";" in code and "{" not in code:
                break           # a prototype or declaration: no body
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                break
            j += 1
        if opened:
            items.setdefault(name, "\n".join(lines[i:j + 1]))
        i = j + 1
    return items


def kconfig_items(text):
    items, cur, buf = {}, None, []
    for line in text.split("\n"):
        m = KCONFIG.match(line)
        if m or (line and not line[0].isspace() and not line.startswith("#")):
            if cur:
                items.setdefault(cur, "\n".join(buf).rstrip())
            cur, buf = (("config " + m.group(1)) if m else None), [line]
        elif cur:
            buf.append(line)
    if cur:
        items.setdefault(cur, "\n".join(buf).rstrip())
    return items


def items_of(path, text):
    if os.path.basename(path).startswith("Kconfig"):
        return kconfig_items(text)
    return c_items(text)


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def git(tree, *args):
    return subprocess.run(["git", "-C", tree, *args], capture_output=True,
                          text=True, errors="replace").stdout


def main():
    tree, ref, mainline, out = sys.argv[1:5]
    os.makedirs(os.path.join(out, "diffs"), exist_ok=True)
    files = [f for f in git(tree, "diff", "--name-only", f"{ref}..HEAD").split()
             if (f.endswith((".c", ".h")) or os.path.basename(f).startswith("Kconfig"))
             and "/tests/" not in f]
    rows = []
    counts = {"identical": 0, "differs": 0, "not in mainline": 0}
    index = {}
    for f in sorted(files):
        new = git(tree, "show", f"HEAD:{f}")
        old = git(tree, "show", f"{ref}:{f}")
        new_items, old_items = items_of(f, new), items_of(f, old)
        mpath = os.path.join(mainline, f)
        main_text = open(mpath, errors="replace").read() if os.path.exists(mpath) else ""
        main_items = items_of(f, main_text)
        for name, text in new_items.items():
            if name in old_items and norm(old_items[name]) == norm(text):
                continue
            where = f
            mtext = main_items.get(name)
            if mtext is None:
                # Moved? Look in the files of the same top-level directory.
                top = f.split("/")[0]
                if top not in index:
                    index[top] = {}
                    for root, _, fs in os.walk(os.path.join(mainline, top)):
                        for n in fs:
                            if n.endswith((".c", ".h")) or n.startswith("Kconfig"):
                                p = os.path.join(root, n)
                                try:
                                    t = open(p, errors="replace").read()
                                except OSError:
                                    continue
                                for k, v in items_of(n, t).items():
                                    index[top].setdefault(k, (os.path.relpath(p, mainline), v))
                hit = index[top].get(name)
                if hit:
                    where, mtext = hit
            if mtext is None:
                status = "not in mainline"
                ndiff = 0
            elif norm(mtext) == norm(text):
                status = "identical"
                ndiff = 0
            else:
                status = "differs"
                d = list(difflib.unified_diff(text.split("\n"), mtext.split("\n"),
                                              f"6.12+series/{f}", f"mainline/{where}",
                                              lineterm="", n=3))
                ndiff = sum(1 for l in d if l[:1] in "+-" and not l.startswith(("+++", "---")))
                safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{f}--{name}")
                with open(os.path.join(out, "diffs", safe + ".diff"), "w") as fh:
                    fh.write("\n".join(d) + "\n")
            counts[status] += 1
            new_or_changed = "new" if name not in old_items else "changed"
            rows.append((f, name, new_or_changed, status, where if mtext else "", ndiff))
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write("| file | item | by the series | vs mainline | mainline file | changed lines |\n")
        fh.write("|---|---|---|---|---|---|\n")
        for r in rows:
            fh.write("| " + " | ".join(str(x) for x in r) + " |\n")
    print(f"{len(rows)} items the series changes or adds: "
          + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print(f"table: {os.path.join(out, 'summary.md')}; diffs: {os.path.join(out, 'diffs')}")


if __name__ == "__main__":
    main()
