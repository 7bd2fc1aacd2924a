#!/usr/bin/env python3
"""Fail unless every alert of a rule file has a promtool test where it fires and one where it must not,
and a firing one whose alerts carry the routing labels (cluster, namespace, pod).

Usage: scripts/alerts-coverage.py RULES_FILE TEST_FILE...

Reads the generated rule file and the promtool test files with a line scanner (standard library
only; both follow the layout of this repository: `- alert: NAME`, and in tests `alertname: NAME`
followed by `exp_alerts: []` for "must not fire" or by `exp_alerts:` with items for "fires",
each item's `exp_labels` a one-line map).
"""
import re
import sys

# The default GROUPING_LABELS of scripts/alerts-generate.py: Alertmanager routes by them.
ROUTING_LABELS = ("cluster", "namespace", "pod")
# Alerts that compare the runs of one application name drop the labels that name one run
# (RUN_LABELS of scripts/alerts-generate.py: `pod`, a sidecar's driver pod).
CROSS_RUN = {"SparkJoinStrategyChanged": ("cluster", "namespace"),
             "SparkPlanChanged": ("cluster", "namespace"),
             "SparkDiagnosisCostHigh": ("cluster", "namespace"),
             "SparkJobGroupDiagnosisCostHigh": ("cluster", "namespace"),
             "SparkRunSlowerThanUsual": ("cluster", "namespace"),
             "SparkRunCostlierThanUsual": ("cluster", "namespace"),
             "SparkNewFindingKind": ("cluster", "namespace")}


def alerts_in(rules_path):
    with open(rules_path, encoding="utf-8") as f:
        return re.findall(r"^\s*-\s*alert:\s*(\S+)\s*$", f.read(), re.M)


def routed(lines, alert=None):
    """True if the alerts expected in `lines` (one case's exp_alerts) all carry ROUTING_LABELS
    (for a CROSS_RUN alert, its own list)."""
    expected = [line for line in lines if re.match(r"^\s*-\s*exp_labels:", line)]
    return bool(expected) and all(re.search(rf"[{{,]\s*{label}:", line) for line in expected
                                  for label in CROSS_RUN.get(alert, ROUTING_LABELS))


def cases_in(test_paths):
    """{alert: {"fires": n, "silent": n, "routed": n}} over all test files."""
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
                    c = cases.setdefault(m.group(1), {"fires": 0, "silent": 0, "routed": 0})
                    c[kind] += 1
                    if kind == "fires":
                        # This case's lines: up to the next case (eval_time) or test (interval).
                        end = next((j for j in range(i + 1, len(lines))
                                    if re.match(r"^\s*-\s*(eval_time|interval):", lines[j])), len(lines))
                        c["routed"] += routed(lines[i + 1:end], m.group(1))
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
        c = cases.get(a, {"fires": 0, "silent": 0, "routed": 0})
        status = "ok" if c["fires"] and c["silent"] and c["routed"] else "MISSING"
        if status != "ok":
            bad.append(a)
        print(f"{status:8} {a}: {c['fires']} firing case(s) ({c['routed']} with "
              f"{'/'.join(ROUTING_LABELS)}), {c['silent']} must-not-fire case(s)")
    unknown = sorted(set(cases) - set(alerts))
    for a in unknown:
        print(f"UNKNOWN  {a}: tested but not in {sys.argv[1]}")
    if bad or unknown:
        raise SystemExit(f"alert test coverage incomplete: {', '.join(bad + unknown)}")


if __name__ == "__main__":
    main()
