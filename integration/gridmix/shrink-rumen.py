#!/usr/bin/env python3
"""Writes a small Rumen trace from a big one, for tests that must run in minutes on 2 cores.

  shrink-rumen.py IN.json OUT.json [--jobs 3] [--maps 2] [--gap-ms 3000] [--task-ms 3000]

Job k of OUT is IN's job (k mod the number of IN's jobs) with its first --maps map tasks and
first reduce task (if any), a new job ID, submitted --gap-ms after job k-1, every task
attempt lasting --task-ms. Everything else (user, queue, properties) is kept, so GridMix
reads OUT as it reads IN. integration/gridmix/tiny-rumen.json was made with the defaults
from /work/shared/traces/sls/2jobs2min-rumen-jh.json.
"""
import argparse
import copy
import json
import sys


def read_jobs(path):
    """A Rumen trace is a stream of JSON objects, one per job, not one array."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        sys.exit(f"shrink-rumen: cannot read {path}: {e}")
    dec, i, jobs = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return jobs
        try:
            job, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            sys.exit(f"shrink-rumen: {path}: job {len(jobs) + 1}: {e}")
        if "jobID" not in job:
            sys.exit(f"shrink-rumen: {path}: job {len(jobs) + 1} has no jobID: not a Rumen trace")
        jobs.append(job)


def retime(task, start, length, job_id):
    task["startTime"], task["finishTime"] = start, start + length
    old = task["taskID"].split("_")
    task["taskID"] = "_".join(["task"] + job_id.split("_")[1:] + old[-2:])
    for a in task.get("attempts", []):
        a["startTime"], a["finishTime"] = start, start + length
        a["attemptID"] = "_".join(["attempt"] + job_id.split("_")[1:] + old[-2:] + ["0"])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--jobs", type=int, default=3)
    p.add_argument("--maps", type=int, default=2)
    p.add_argument("--gap-ms", type=int, default=3000)
    p.add_argument("--task-ms", type=int, default=3000)
    a = p.parse_args()
    if a.jobs < 1 or a.maps < 1 or a.gap_ms < 0 or a.task_ms < 1:
        sys.exit("shrink-rumen: --jobs, --maps and --task-ms must be > 0, --gap-ms >= 0")
    src = read_jobs(a.input)
    if not src:
        sys.exit(f"shrink-rumen: {a.input} has no job")
    t0 = src[0]["submitTime"]
    out = []
    for k in range(a.jobs):
        job = copy.deepcopy(src[k % len(src)])
        cluster = job["jobID"].split("_")[1]
        job_id = f"job_{cluster}_{9000 + k:04d}"
        job["jobID"] = job_id
        submit = t0 + k * a.gap_ms
        job["submitTime"], job["launchTime"] = submit, submit + 500
        job["mapTasks"] = job["mapTasks"][: a.maps]
        job["reduceTasks"] = job["reduceTasks"][:1]
        job["otherTasks"] = []
        for t in job["mapTasks"]:
            retime(t, submit + 1000, a.task_ms, job_id)
        for t in job["reduceTasks"]:
            retime(t, submit + 1000 + a.task_ms, a.task_ms, job_id)
        job["totalMaps"], job["totalReduces"] = len(job["mapTasks"]), len(job["reduceTasks"])
        job["finishTime"] = submit + 1000 + a.task_ms * (2 if job["reduceTasks"] else 1)
        out.append(job)
    with open(a.output, "w", encoding="utf-8") as f:
        for job in out:
            json.dump(job, f, indent=1)
            f.write("\n")
    print(f"shrink-rumen: {len(out)} jobs of {a.maps} maps written to {a.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
