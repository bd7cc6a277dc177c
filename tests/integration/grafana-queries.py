#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every panel query of Grafana dashboards, ready for the influx client.

    grafana-queries.py VAR=VALUE... -- DASHBOARD.json...

Checks that each file is JSON with panels whose targets are raw InfluxQL,
substitutes Grafana's macros ($timeFilter: the last hour, $__interval: 10s) and
the template variables given, and prints one "FILE<TAB>TITLE<TAB>QUERY"
line per target.  Exit 1 with the reason when a file is not a dashboard
or a variable is left unset.
"""
import json
import re
import sys


def main(argv):
    sep = argv.index("--")
    values = dict(a.split("=", 1) for a in argv[1:sep])
    values.setdefault("timeFilter", "time > now() - 1h")
    values.setdefault("__interval", "10s")
    for path in argv[sep + 1:]:
        with open(path) as f:
            d = json.load(f)
        panels = d.get("panels")
        if not isinstance(panels, list) or not panels:
            sys.exit(f"{path}: no panels")
        names = {v["name"] for v in d.get("templating", {}).get("list", [])}
        for p in panels:
            targets = p.get("targets") or []
            if not targets:
                sys.exit(f"{path}: panel '{p.get('title')}' has no query")
            for t in targets:
                q = t.get("query")
                if not t.get("rawQuery") or not isinstance(q, str):
                    sys.exit(f"{path}: panel '{p.get('title')}' has no raw InfluxQL query")
                for name in re.findall(r"\$(\w+)", q):
                    if name not in values:
                        sys.exit(f"{path}: panel '{p.get('title')}': ${name} has no value")
                    if name not in names and not name.startswith("__") and name != "timeFilter":
                        sys.exit(f"{path}: ${name} is no variable of the dashboard")
                # longest names first: $__interval before anything shorter
                for name in sorted(values, key=len, reverse=True):
                    q = q.replace("$" + name, values[name])
                title = re.sub(r"\$(\w+)", lambda m: values.get(m.group(1), m.group(0)), p["title"])
                print(f"{path}\t{title}\t{q}")


if __name__ == "__main__":
    main(sys.argv)
