#!/usr/bin/env python3
"""Fill in the cover letter that git format-patch --cover-letter wrote.

  cover_letter.py COVER TEXT BENCH PATCH...

COVER is the 0000-cover-letter.patch with its *** SUBJECT HERE *** and
*** BLURB HERE *** placeholders; TEXT the blurb (patches/cover-letter.txt)
with @@PATCH_TABLE@@ (filled from the patches' "commit <hash> upstream."
lines) and @@BENCH_TABLE@@ (the first table of bench/results/bench.md);
PATCH... the series, in order.  Rewrites COVER in place.
"""
import re
import sys
import textwrap

SUBJECT = "mm: MM owner tracking for large folios, backported to 6.12"


def patch_table(patches):
    rows = []
    for i, p in enumerate(patches, 1):
        text = open(p, errors="replace").read()
        m = re.search(r"^Subject: \[PATCH[^\]]*\] (.*(?:\n .*)*)", text, re.M)
        subj = " ".join(m.group(1).split()) if m else p
        up = re.search(r"^commit ([0-9a-f]{12})[0-9a-f]* upstream\.$", text, re.M)
        rows.append(f"  {i:02d} {up.group(1) if up else 'not upstream'}"
                    f"  {subj}")
    return "\n".join(rows)


def bench_table(path):
    try:
        text = open(path).read()
    except OSError:
        return "  (no make bench results in the tree)"
    blocks = re.findall(r"\*\*(.*?)\*\*\n\n((?:\|.*\n)+)", text)
    out = []
    for title, table in blocks[:2]:
        out.append(f"  {title}:")
        rows = [[c.strip() for c in line.strip("|").split("|")]
                for line in table.strip().split("\n")]
        rows = [r for r in rows if not set("".join(r)) <= set("-:")]
        widths = [max(len(r[i]) for r in rows) + 2 for i in range(len(rows[0]))]
        for r in rows:
            out.append("  " + "".join(f"{c:>{w}}" for c, w in zip(r, widths)))
        out.append("")
    return "\n".join(out).rstrip()


def main():
    cover, text, bench, *patches = sys.argv[1:]
    blurb = open(text).read().rstrip("\n")
    blurb = blurb.replace("@@PATCH_TABLE@@", patch_table(patches))
    blurb = blurb.replace("@@BENCH_TABLE@@", bench_table(bench))
    c = open(cover).read()
    assert "*** SUBJECT HERE ***" in c and "*** BLURB HERE ***" in c, cover
    c = c.replace("*** SUBJECT HERE ***", SUBJECT)
    c = c.replace("*** BLURB HERE ***", blurb)
    open(cover, "w").write(c)


if __name__ == "__main__":
    main()
