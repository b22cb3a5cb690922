#!/usr/bin/env python3
"""Turn the boot logs of make bench into a table and a plot.

  bench_report.py --out PREFIX [--timing TEXT] [--setup TEXT] LOG...

Each LOG is named KERNEL-roundN.log (KERNEL: stock, patched, npm) and holds
the lines "BENCH,<size_kb>,<op>,<rep>,<ns>" that bench/folio_bench.c prints.
Writes PREFIX.csv (every kernel, folio size and operation: median, spread,
samples; ratios to stock), PREFIX.md (the ratio tables) and PREFIX.png
(the ratios against the folio size, with gnuplot).  A kernel, size or
operation without samples is an error: a table with holes would pass for a
result.
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys

KERNELS = ["stock", "patched", "npm"]
LABEL = {"stock": "stock 6.12", "patched": "patched",
         "npm": "patched + NO_PAGE_MAPCOUNT"}
OPS = ["munmap", "fork", "cow-byte", "reuse-byte", "child-reuse-byte"]
SAMPLE = re.compile(r"BENCH,(\d+),([a-z-]+),\d+,(\d+)")


def parse(logs):
    samples = collections.defaultdict(list)   # (kernel, size, op) -> [ns]
    warnings = []
    for path in logs:
        m = re.match(r"(\w+)-round(\d+)\.log$", os.path.basename(path))
        if not m or m.group(1) not in KERNELS:
            sys.exit(f"bench_report: cannot tell the kernel of {path}")
        kernel = m.group(1)
        with open(path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("BENCH,"):
                    b = SAMPLE.fullmatch(line)
                    if not b or b.group(2) not in OPS:
                        sys.exit(f"bench_report: {path}: malformed sample "
                                 f"line: {line!r}")
                    samples[(kernel, int(b.group(1)), b.group(2))].append(
                        int(b.group(3)))
                elif line.startswith(("BENCH-WARN", "BENCH-ERROR")):
                    warnings.append(f"{kernel} round {m.group(2)}: {line}")
    return samples, warnings


def spread(values):
    """Half the interquartile range, relative to the median, in percent."""
    med = statistics.median(values)
    if len(values) < 2 or not med:
        return 0.0
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return 100.0 * (q3 - q1) / 2 / med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--timing", default="")
    ap.add_argument("--setup", default="")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()

    samples, warnings = parse(args.logs)
    sizes = sorted({size for (_, size, _) in samples})
    if not sizes:
        sys.exit("bench_report: no BENCH samples in the logs")
    missing = [f"{k}/{s} KiB/{op}" for k in KERNELS for s in sizes for op in OPS
               if not samples.get((k, s, op))]
    if missing:
        sys.exit("bench_report: no samples for " + ", ".join(missing))
    med = {key: statistics.median(v) for key, v in samples.items()}
    zero = [f"{s} KiB/{op}" for s in sizes for op in OPS
            if not med[("stock", s, op)]]
    if zero:
        sys.exit("bench_report: the stock median is 0 ns (no ratio) for " +
                 ", ".join(zero))

    def ratio(kernel, size, op):
        return med[(kernel, size, op)] / med[("stock", size, op)]

    with open(args.out + ".csv", "w") as f:
        f.write("size_kb,op," + ",".join(
            f"{k}_median_us,{k}_spread_pct,{k}_samples" for k in KERNELS) +
            ",patched_over_stock,npm_over_stock\n")
        for size in sizes:
            for op in OPS:
                cols = [str(size), op]
                for k in KERNELS:
                    v = samples[(k, size, op)]
                    cols += [f"{med[(k, size, op)] / 1000:.1f}",
                             f"{spread(v):.1f}", str(len(v))]
                cols += [f"{ratio('patched', size, op):.3f}",
                         f"{ratio('npm', size, op):.3f}"]
                f.write(",".join(cols) + "\n")

    nsamples = len(samples[("stock", sizes[0], OPS[0])])
    md = [f"Timing: {args.timing}. Setup: {args.setup}; "
          f"{nsamples} samples per kernel, folio size and operation.",
          "Each cell: median of the kernel / median of stock 6.12 "
          "(below 1: faster than stock), and the larger spread "
          "(half the interquartile range / median) of the two.", ""]
    for k in ("patched", "npm"):
        md += [f"**{LABEL[k]} / stock 6.12**", "",
               "| folio size | " + " | ".join(OPS) + " |",
               "|---:|" + "---:|" * len(OPS)]
        for size in sizes:
            cells = []
            for op in OPS:
                sp = max(spread(samples[(k, size, op)]),
                         spread(samples[("stock", size, op)]))
                cells.append(f"{ratio(k, size, op):.2f} ±{sp:.0f}%")
            md.append(f"| {size} KiB | " + " | ".join(cells) + " |")
        md.append("")
    md += ["**Medians on stock 6.12 (µs)**", "",
           "| folio size | " + " | ".join(OPS) + " |",
           "|---:|" + "---:|" * len(OPS)]
    for size in sizes:
        md.append(f"| {size} KiB | " + " | ".join(
            f"{med[('stock', size, op)] / 1000:.0f}" for op in OPS) + " |")
    if warnings:
        md += ["", "Warnings printed by the benchmark:", ""]
        md += [f"- {w}" for w in warnings]
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(md) + "\n")

    plot(args.out, sizes, ratio, args.timing)


def plot(out, sizes, ratio, timing):
    dat = out + ".dat"
    with open(dat, "w") as f:
        f.write("# size_kb " + " ".join(
            f"{k}:{op}" for k in ("patched", "npm") for op in OPS) + "\n")
        for size in sizes:
            f.write(f"{size} " + " ".join(
                f"{ratio(k, size, op):.4f}"
                for k in ("patched", "npm") for op in OPS) + "\n")
    script = [
        "set terminal pngcairo size 1400,560 font ',11' noenhanced",
        f"set output '{out}.png'",
        "set multiplot layout 1,2 title 'PTE-mapped folios: median time / "
        f"stock 6.12 median ({timing})'",
        "set logscale x 2", "set grid", "set key bottom left",
        "set xlabel 'folio size (KiB)'", "set ylabel 'ratio to stock'",
        "set yrange [0:*]",
        "set xtics (" + ", ".join(f"'{s}' {s}" for s in sizes) + ")",
    ]
    for i, k in enumerate(("patched", "npm")):
        cols = ", ".join(
            f"'{dat}' using 1:{2 + i * len(OPS) + j} with linespoints "
            f"lw 2 dt {2 if op == 'child-reuse-byte' else 1} ps 1.5 "
            f"title '{op}'" for j, op in enumerate(OPS))
        script += [f"set title '{LABEL[k]}'",
                   f"plot 1 with lines dt 2 lc 'black' notitle, {cols}"]
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True,
                   check=True)


if __name__ == "__main__":
    main()
