#!/usr/bin/env python3
"""Print "passed failed skipped" for the leaf cases of a kunit.py --json file."""
import json
import sys


def walk(node, counts):
    cases = node.get("test_cases", [])
    for case in cases:
        # A parameterized case reports its parameters as sub-groups.
        status = case.get("status", "")
        key = {"PASS": 0, "FAIL": 1, "SKIP": 2}.get(status, 1)
        counts[key] += 1
    for group in node.get("sub_groups", []):
        walk(group, counts)


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    counts = [0, 0, 0]
    walk(data, counts)
    print(*counts)


if __name__ == "__main__":
    main()
