#!/usr/bin/env python3
"""Where a real run's jobs spend their start-up: from the ResourceManager's log, per job, the
scheduler's part (the AM's registration to its first task container's allocation) against the
host's (the AM container running to the AM's registration: its JVM start; a task container
running to its completion). Used by integration/results/gridmix.md §2c to tell a scheduler
cost from host load when two schedulers' jobs take different times.

    integration/gridmix/startup-breakdown.py [--first N] NAME=RUN_DIR ...

RUN_DIR holds hadoop.log (compare.sh's) or rm-events.log (its container and attempt lines,
which `--extract` writes beside it). --first N: only applications 1..N (e.g. a trace's jobs
that ran on an idle cluster).
"""
import argparse
import collections
import datetime
import os
import re
import statistics
import sys

CONTAINER = re.compile(
    r"^(\S+ \S+) INFO rmcontainer\.RMContainerImpl: container_\d+_(\d+)_01_(\d+) "
    r"Container Transitioned from \w+ to (\w+)")
ATTEMPT = re.compile(
    r"^(\S+ \S+) INFO attempt\.RMAppAttemptImpl: appattempt_\d+_(\d+)_000001 "
    r"State change from LAUNCHED to RUNNING")


def stamp(s):
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def events(path):
    """(container states: (app, container) -> {state: first time}, AM registrations: app -> time)"""
    states, registered = collections.defaultdict(dict), {}
    with open(path, errors="replace") as f:
        for line in f:
            m = CONTAINER.match(line)
            if m:
                states[(int(m.group(2)), int(m.group(3)))].setdefault(m.group(4), stamp(m.group(1)))
                continue
            m = ATTEMPT.match(line)
            if m:
                registered[int(m.group(2))] = stamp(m.group(1))
    return states, registered


def first_task(states, app):
    """The states of the app's first task container to be allocated: not always the one
    numbered 2 (a scheduler's reservation takes a container id that may never run)."""
    tasks = [st for (a, c), st in states.items() if a == app and c >= 2 and "ALLOCATED" in st]
    return min(tasks, key=lambda st: st["ALLOCATED"], default={})


def log_of(run_dir):
    for name in ("rm-events.log", "hadoop.log"):
        p = os.path.join(run_dir, name)
        if os.path.exists(p):
            return p
    sys.exit(f"startup-breakdown: {run_dir}: neither rm-events.log nor hadoop.log")


def median(xs):
    return f"{statistics.median(xs):6.2f}" if xs else "     -"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="NAME=RUN_DIR")
    ap.add_argument("--first", type=int, default=0, help="only applications 1..N")
    ap.add_argument("--extract", action="store_true",
                    help="write each run's container and attempt lines to RUN_DIR/rm-events.log")
    a = ap.parse_args()
    print("| scheduler | jobs | AM running → registered (host: AM JVM start) | registered → first task "
          "allocated (scheduler) | first task running → completed (host) |")
    print("|---|---:|---:|---:|---:|")
    for spec in a.runs:
        name, sep, run_dir = spec.partition("=")
        if not sep:
            sys.exit(f"startup-breakdown: '{spec}': expected NAME=RUN_DIR")
        path = log_of(run_dir)
        if a.extract and path.endswith("hadoop.log"):
            with open(path, errors="replace") as f, open(os.path.join(run_dir, "rm-events.log"), "w") as g:
                g.writelines(l for l in f if CONTAINER.match(l) or ATTEMPT.match(l))
        states, registered = events(path)
        apps = [app for app in sorted(registered) if not a.first or app <= a.first]
        am_start, sched, task = [], [], []
        for app in apps:
            am, first = states.get((app, 1), {}), first_task(states, app)
            if "RUNNING" in am:
                am_start.append(registered[app] - am["RUNNING"])
            if "ALLOCATED" in first:
                sched.append(first["ALLOCATED"] - registered[app])
            if "RUNNING" in first and "COMPLETED" in first:
                task.append(first["COMPLETED"] - first["RUNNING"])
        print(f"| {name} | {len(apps)} | {median(am_start)} s | {median(sched)} s | {median(task)} s |")


if __name__ == "__main__":
    main()
