#!/usr/bin/env python3
"""Read a kunit.py --json result file.

  kunit_results.py counts FILE   print "passed failed skipped" of the leaf cases
  kunit_results.py failed FILE   print "suite.case" for every case that failed
                                 (a parameterized case fails if one of its
                                 parameters does)
  kunit_results.py missing FILE  print how many leaf results kunit.py made up
                                 for subtests its parser expected but did not
                                 find in the output (no name, status ERROR)
"""
import json
import sys

STATUS = {"PASS": 0, "FAIL": 1, "SKIP": 2}


def leaves(node, path):
    """Yield (path, status) for every leaf case below node."""
    for case in node.get("test_cases", []):
        yield path + [case.get("name", "?")], case.get("status", "FAIL")
    for group in node.get("sub_groups", []):
        yield from leaves(group, path + [group.get("name", "?")])


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("counts", "failed", "missing"):
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        data = json.load(f)
    results = list(leaves(data, []))
    if sys.argv[1] == "missing":
        print(sum(1 for path, status in results
                  if path[-1] == "" and status == "ERROR"))
        return
    if sys.argv[1] == "counts":
        counts = [0, 0, 0]
        for _, status in results:
            counts[STATUS.get(status, 1)] += 1
        print(*counts)
        return
    failed = []
    for path, status in results:
        if STATUS.get(status, 1) == 1:
            name = ".".join(path[:2])  # suite.case, without the parameter
            if name not in failed:
                failed.append(name)
    print("\n".join(failed))


if __name__ == "__main__":
    main()
