#!/usr/bin/env python3
"""Read a kunit.py --json result file.

  kunit_results.py counts FILE   print "passed failed skipped" of the leaf cases
  kunit_results.py failed FILE   print "suite.case" for every case that failed
                                 (a parameterized case fails if one of its
                                 parameters does)
  kunit_results.py status FILE   print "suite.case STATUS" for every case, with
                                 STATUS FAIL if one of its parameters failed,
                                 PASS if all passed, else SKIP
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
    if len(sys.argv) != 3 or sys.argv[1] not in ("counts", "failed", "missing",
                                                 "status"):
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
    if sys.argv[1] == "status":
        rank = {"SKIP": 0, "PASS": 1, "FAIL": 2}
        case_status = {}
        for path, status in results:
            if path[-1] == "":
                continue  # a made-up "missing" result has no name
            name = ".".join(path[:2])
            status = status if status in ("PASS", "SKIP") else "FAIL"
            if rank[status] >= rank[case_status.get(name, "SKIP")]:
                case_status[name] = status
        for name, status in case_status.items():
            print(name, status)
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
