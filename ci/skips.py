#!/usr/bin/env python3
"""Expected skips of a KUnit run: every skip is listed, every listed skip is a skip.

  skips.py check LIST JSON LOG   compare the run (kunit.py --json JSON, the
                                 kernel's KTAP output LOG) with LIST; print
                                 what differs; exit 1 if anything does
  skips.py list JSON LOG         print the run's skips in LIST's format

LIST has one skipped test per line, "PATH :: REASON": PATH is suite.case
for a case, suite.case[PARAM] for one parameter of a parameterized case;
REASON is the text after "# SKIP" on the test's line in the kernel log (the
kernel's own words: a list entry whose reason the log does not give for that
test is wrong too).  Lines starting with "#" and empty lines are comments.
"""
import json
import re
import sys


def leaves(node, path):
    """Yield (path, name, status) for every leaf test below node."""
    for case in node.get("test_cases", []):
        yield path + [case.get("name", "?")], case.get("status", "FAIL")
    for group in node.get("sub_groups", []):
        yield from leaves(group, path + [group.get("name", "?")])


def ident(path):
    if len(path) >= 3:
        return f"{path[0]}.{path[1]}[{path[2]}]"
    return ".".join(path)


def log_skips(log):
    """{PATH: reason} for every "ok N NAME # SKIP REASON" line of the KTAP
    log, PATH built from the "# Subtest: NAME" lines around it (a subtest's
    results are indented as its "# Subtest:" line)."""
    stack, out = [], {}
    for line in log.splitlines():
        m = re.match(r"^( *)# Subtest: (.*)$", line)
        if m:
            stack.append((len(m.group(1)), m.group(2).strip()))
            continue
        m = re.match(r"^( *)(?:not )?ok \d+ (.*?)(?: # SKIP ?(.*))?$", line)
        if not m:
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] > indent:
            stack.pop()
        if m.group(3) is not None:
            path = [name for _, name in stack] + [m.group(2).strip()]
            out[ident(path)] = m.group(3).strip()
    return out


def skips(json_file, log_file):
    """{PATH: reason the log gives} for every skipped leaf test of the run."""
    with open(json_file) as f:
        data = json.load(f)
    reasons = log_skips(open(log_file, errors="replace").read())
    return {ident(path): reasons.get(ident(path), "?")
            for path, status in leaves(data, []) if status == "SKIP"}


def read_list(path):
    entries = {}
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if " :: " not in line:
            sys.exit(f"{path}:{n}: not 'PATH :: REASON': {line}")
        test, reason = line.split(" :: ", 1)
        entries[test.strip()] = reason.strip()
    return entries


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        expected = read_list(sys.argv[2])
        actual = skips(sys.argv[3], sys.argv[4])
        bad = 0
        for test in sorted(set(actual) - set(expected)):
            print(f"unexpected skip: {test} :: {actual[test]}")
            bad += 1
        for test in sorted(set(expected) - set(actual)):
            print(f"listed skip did not skip (it ran, or is gone): {test} :: {expected[test]}")
            bad += 1
        for test in sorted(set(expected) & set(actual)):
            if expected[test] != actual[test]:
                print(f"skipped for another reason: {test} :: listed "
                      f"'{expected[test]}', the log says '{actual[test]}'")
                bad += 1
        sys.exit(1 if bad else 0)
    if len(sys.argv) == 4 and sys.argv[1] == "list":
        for test, reason in sorted(skips(sys.argv[2], sys.argv[3]).items()):
            print(f"{test} :: {reason}")
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
