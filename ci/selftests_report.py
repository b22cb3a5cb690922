#!/usr/bin/env python3
"""Side-by-side results of make selftests (ci/selftests.sh).

  selftests_report.py --out PREFIX ARCH:KERNEL=LOG...

Each LOG is the console of one boot of selftests/init.c.  Every program's
cases are read from its output: TAP lines ("ok N desc", "not ok N desc",
"# SKIP"; named by the "# [RUN] ..." line before them, as cow prints)
for cow, split_huge_page_test and folio_proc_test, and the
"Run test: NAME (context:memory)" blocks with Ok/Fail/Skip lines of
khugepaged.  Each program's exit status is one more case.

Prints, per architecture, a table of passed/failed/skipped per program and
kernel, and every case whose result differs between the kernels or that
failed on one.  Writes PREFIX.md (the same) and PREFIX.csv (every case).

Exits 1 if on some architecture a patched kernel (patched, npm) does not
pass a case that stock passes, if folio_proc_test (our own expectations,
written per kernel) does not pass on every kernel, or if a kernel warned
(WARNING:, BUG:, Oops...), crashed or did not finish.
"""
import argparse
import collections
import csv
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TAP = re.compile(r"^(not ok|ok) \d+ (.*)$")
OURS = "folio_proc_test"
# What the kernel prints when something is wrong, as ci/kunit.sh checks.
KERNEL_BUG = re.compile(r"WARNING:|BUG:|Bad page|Oops|Kernel panic|"
                        r"Unable to handle|general protection fault")


def parse(path):
    """Return ({program: {case: status}}, [notes], done) from one log."""
    progs = collections.OrderedDict()
    notes = []
    current = {}        # program -> current khugepaged case
    seen = collections.Counter()
    done = False
    bails = []
    oops = []           # kernel warnings and crashes in the console
    run = {}            # program -> the case its last "# [RUN]" line named
    skips = {}          # program -> {case: why it was skipped}
    try:
        text = open(path, errors="replace").read()
    except OSError as e:
        return progs, [f"no log: {e}"], False, {}, []
    for raw in text.splitlines():
        line = ANSI.sub("", raw).rstrip("\r")
        k = KERNEL_BUG.search(line)
        if k:
            notes.append(f"kernel: {line.strip()}")
            oops.append(line.strip())
        if line.startswith("SELFTEST-BEGIN "):
            progs.setdefault(line.split(" ", 1)[1], collections.OrderedDict())
            continue
        if line.startswith("SELFTEST-END "):
            m = re.match(r"SELFTEST-END (.*) (exit|signal|timeout)=(\d+)", line)
            if not m:
                continue
            prog, how, val = m.groups()
            cases = progs.setdefault(prog, collections.OrderedDict())
            if how == "exit" and val == "0":
                status = "PASS"
            elif how == "exit" and val == "4":
                status = "SKIP"     # KSFT_SKIP
            else:
                status = "FAIL"
                notes.append(f"{prog}: {how} {val}")
            cases["(exit status)"] = status
            continue
        if line.startswith("SELFTESTS-DONE"):
            done = True
            continue
        m = re.match(r"^(.+?)\| (.*)$", line)
        if not m or m.group(1) not in progs:
            continue
        prog, out = m.groups()
        cases = progs[prog]
        if out.startswith("Bail out!"):
            bails.append((prog, out))
        r = re.match(r"^# \[RUN\] (.*)$", out)
        if r:           # cow names its case before the result line
            run[prog] = r.group(1).strip()
            continue
        t = TAP.match(out)
        if t:
            desc = t.group(2)
            if prog in run:
                named = run.pop(prog)
                desc = named + re.sub(r"^[^#]*", " ", desc)
            sk = re.search(r"#\s*SKIP\s*(.*)$", desc, re.I)
            desc = re.sub(r"\s*#.*$", "", desc).strip()
            skip = sk is not None
            if skip:
                skips.setdefault(prog, {})[desc or "(unnamed)"] = sk.group(1).strip()
            seen[(prog, desc)] += 1
            if seen[(prog, desc)] > 1:
                desc += f" [{seen[(prog, desc)]}]"
            if t.group(1) == "not ok":
                cases[desc] = "FAIL"
            else:
                cases[desc] = "SKIP" if skip else "PASS"
            continue
        r = re.match(r"^Run test: (.*)$", out)
        if r:
            current[prog] = r.group(1).strip()
            cases[current[prog]] = "PASS?"
            continue
        if prog in current:
            word = out.strip().split(" ")[-1] if out.strip() else ""
            case = current[prog]
            if word == "Fail":
                cases[case] = "FAIL"
            elif word == "OK" and cases[case] != "FAIL":
                cases[case] = "PASS"
            elif word == "Skip" and cases[case] == "PASS?":
                cases[case] = "SKIP"
    for cases in progs.values():
        for case, status in cases.items():
            if status == "PASS?":   # a block with no verdict line
                cases[case] = "FAIL"
    for prog, line in bails:
        notes.append(f"{prog}: {line}")
    return progs, notes, done, skips, oops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--known-stock-warnings", action="append", default=[],
                    metavar="WORD",
                    help="in the groups (ARCH/GROUP) whose name contains WORD, "
                    "stock's kernel warnings are a known base-tree bug: "
                    "listed, not failed")
    ap.add_argument("runs", nargs="+", help="ARCH:KERNEL=LOG")
    args = ap.parse_args()

    runs = collections.OrderedDict()     # arch -> kernel -> (progs, notes)
    for spec in args.runs:
        # ARCH may be ARCH/GROUP, and a group's name may hold '='.
        arch, rest = spec.split(":", 1)
        kernel, path = rest.split("=", 1)
        runs.setdefault(arch, collections.OrderedDict())[kernel] = parse(path)

    out = []
    rows = []
    bad = []
    for arch, kernels in runs.items():
        names = list(kernels)
        progs = []
        for progs_k, *_ in kernels.values():
            for p in progs_k:
                if p not in progs:
                    progs.append(p)
        out.append(f"### {arch}\n")
        out.append("| program | " + " | ".join(f"{k} (pass/fail/skip)" for k in names) + " |")
        out.append("|---|" + "---|" * len(names))
        diffs = []
        for p in progs:
            cells = []
            cases = []
            for k in names:
                for c in kernels[k][0].get(p, {}):
                    if c not in cases:
                        cases.append(c)
            for k in names:
                st = kernels[k][0].get(p, {})
                n = collections.Counter(st.values())
                cells.append(f"{n['PASS']}/{n['FAIL']}/{n['SKIP']}")
            out.append(f"| {p} | " + " | ".join(cells) + " |")
            for c in cases:
                res = [kernels[k][0].get(p, {}).get(c, "-") for k in names]
                rows.append([arch, p, c] + res)
                if len(set(res)) > 1 or "FAIL" in res:
                    diffs.append(f"| {p}: {c} | " + " | ".join(res) + " |")
                stock = res[names.index("stock")] if "stock" in names else None
                for k, r in zip(names, res):
                    if k == "stock":
                        continue
                    if stock == "PASS" and r != "PASS":
                        bad.append(f"{arch} {k}: {p}: {c}: {r}, stock passes")
                    if p == OURS and r != "PASS" and c != "(exit status)" and r != "SKIP":
                        bad.append(f"{arch} {k}: {p}: {c}: {r}")
                if p == OURS and stock not in (None, "PASS", "SKIP"):
                    bad.append(f"{arch} stock: {p}: {c}: {stock}")
        for k in names:
            st = kernels[k][0].get(OURS)
            if st is None:
                bad.append(f"{arch} {k}: {OURS} did not run")
            elif st.get("(exit status)") != "PASS":
                bad.append(f"{arch} {k}: {OURS} exited with "
                           f"{st.get('(exit status)', 'no status')} (Bail out?)")
            known = k == "stock" and "/" in arch and any(
                w in arch.split("/", 1)[1] for w in args.known_stock_warnings)
            if kernels[k][4] and known:
                out.append(f"- {arch} stock: known base-tree bug, not counted "
                           f"({len(kernels[k][4])} reports, first: "
                           f"{kernels[k][4][0]})")
            elif kernels[k][4]:
                bad.append(f"{arch} {k}: the kernel warned or crashed: "
                           f"{kernels[k][4][0]}")
            if not kernels[k][2]:
                bad.append(f"{arch} {k}: the boot did not reach SELFTESTS-DONE "
                           "(crash or time-out: see its log)")
        out.append("")
        if diffs:
            out.append("Cases that differ between the kernels or fail on one:\n")
            out.append("| case | " + " | ".join(names) + " |")
            out.append("|---|" + "---|" * len(names))
            out.extend(diffs)
            out.append("")
        for k in names:
            for n in kernels[k][1]:
                out.append(f"- {arch} {k}: {n}")
        why = collections.OrderedDict()
        for k in names:
            for p, cs in kernels[k][3].items():
                for c, r in cs.items():
                    why.setdefault((p, c, r or "no reason given"), []).append(k)
        if why:
            out.append("\nSkipped cases, and why (as the program says):\n")
            for (p, c, r), ks in why.items():
                on = "all kernels" if len(ks) == len(names) else ", ".join(ks)
                out.append(f"- {p}: {c}: {r} ({on})")
        out.append("")

    verdict = ("PASS: every patched kernel passes every case stock passes, "
               "and folio_proc_test passes on every kernel")
    if bad:
        verdict = "FAIL:\n" + "\n".join(f"- {b}" for b in sorted(set(bad)))
    out.append(verdict)
    text = "\n".join(out) + "\n"
    print(text)
    with open(args.out + ".md", "w") as f:
        f.write(text)
    with open(args.out + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arch", "program", "case"] + list(next(iter(runs.values()))))
        w.writerows(rows)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
