#!/usr/bin/env python3
"""Fail unless every alert of a rule file has a promtool test where it fires and one where it must not.

Usage: scripts/alerts-coverage.py RULES_FILE TEST_FILE...

Reads the generated rule file and the promtool test files with a line scanner (standard library
only; both follow the layout of this repository: `- alert: NAME`, and in tests `alertname: NAME`
followed by `exp_alerts: []` for "must not fire" or by `exp_alerts:` with items for "fires").
"""
import re
import sys


def alerts_in(rules_path):
    with open(rules_path, encoding="utf-8") as f:
        return re.findall(r"^\s*-\s*alert:\s*(\S+)\s*$", f.read(), re.M)


def cases_in(test_paths):
    """{alert: {"fires": n, "silent": n}} over all test files."""
    cases = {}
    for path in test_paths:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^\s*alertname:\s*(\S+)\s*$", line)
            if not m:
                continue
            # The exp_alerts key belongs to the same list item: the next exp_alerts line.
            for nxt in lines[i + 1:]:
                e = re.match(r"^\s*exp_alerts:\s*(.*?)\s*$", nxt)
                if e:
                    kind = "silent" if e.group(1) == "[]" else "fires"
                    cases.setdefault(m.group(1), {"fires": 0, "silent": 0})[kind] += 1
                    break
                if re.match(r"^\s*-\s*eval_time:", nxt):
                    raise SystemExit(f"{path}:{i + 1}: alertname {m.group(1)} without exp_alerts")
    return cases


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    alerts = alerts_in(sys.argv[1])
    if not alerts:
        raise SystemExit(f"no alerts found in {sys.argv[1]}")
    cases = cases_in(sys.argv[2:])
    bad = []
    for a in alerts:
        c = cases.get(a, {"fires": 0, "silent": 0})
        status = "ok" if c["fires"] and c["silent"] else "MISSING"
        if status != "ok":
            bad.append(a)
        print(f"{status:8} {a}: {c['fires']} firing case(s), {c['silent']} must-not-fire case(s)")
    unknown = sorted(set(cases) - set(alerts))
    for a in unknown:
        print(f"UNKNOWN  {a}: tested but not in {sys.argv[1]}")
    if bad or unknown:
        raise SystemExit(f"alert test coverage incomplete: {', '.join(bad + unknown)}")


if __name__ == "__main__":
    main()
