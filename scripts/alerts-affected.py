#!/usr/bin/env python3
"""Which alert tests can see a change of the rules: alerts-affected.py ORIGINAL MUTATED TEST...

Prints the test files (of TEST...) that name a rule of MUTATED whose text differs from
ORIGINAL's, or that depends on one: a rule whose expression reads a changed recording rule
changes with it, transitively. A test file that names none of these evaluates only rules that
behave as before, so it passes or fails as it did: scripts/alerts-test.sh runs each mutation
against the files printed here, not against every file (the same verdict, a fraction of the
promtool time).

Rules are read as the generator writes them (`- alert: NAME` or `- record: NAME` opening each
rule, its other lines indented deeper), so no YAML library is needed. A rule is keyed by its
name and how many rules of that name came before it.
"""
import re
import sys

OPENING = re.compile(r"^(\s*)- (alert|record): *(\S+)\s*$")


def rules(path):
    """{(name, occurrence): text} and {(name, occurrence): kind} of a rule file."""
    out, kinds, seen = {}, {}, {}
    current, indent = None, None
    for line in open(path, encoding="utf-8"):
        m = OPENING.match(line)
        if m:
            name = m.group(3).strip("'\"")
            seen[name] = seen.get(name, 0) + 1
            current, indent = (name, seen[name]), len(m.group(1))
            out[current], kinds[current] = line, m.group(2)
            continue
        if current is not None:
            stripped = line.rstrip("\n")
            depth = len(stripped) - len(stripped.lstrip())
            if stripped.strip() and depth <= indent:
                current = None  # the next group, or the end of the rules
            else:
                out[current] += line
    return out, kinds


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    before, _ = rules(argv[1])
    after, kinds = rules(argv[2])
    changed = {key[0] for key in set(before) | set(after) if before.get(key) != after.get(key)}
    # A rule reading a changed recording rule changes too.
    while True:
        grown = {
            key[0]
            for key, text in after.items()
            if key[0] not in changed
            and any(re.search(r"(?<![\w:])" + re.escape(name) + r"(?![\w:])", text) for name in changed)
        }
        if not grown:
            break
        changed |= grown
    for test in argv[3:]:
        text = open(test, encoding="utf-8").read()
        if any(re.search(r"(?<![\w:])" + re.escape(name) + r"(?![\w:])", text) for name in changed):
            print(test)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
