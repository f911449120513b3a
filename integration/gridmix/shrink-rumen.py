#!/usr/bin/env python3
"""Writes a small Rumen trace from a big one, for tests that must run in minutes on 2 cores.

  shrink-rumen.py IN.json OUT.json [--jobs 3] [--maps 2] [--gap-ms 3000] [--task-ms 3000]
  shrink-rumen.py IN.json OUT.json --sls SLS.json     # an SLS trace (`sojourn to-sls`) as Rumen

Job k of OUT is IN's job (k mod the number of IN's jobs) with its first --maps map tasks and
first reduce task (if any), a new job ID, submitted --gap-ms after job k-1, every task
attempt lasting --task-ms. Everything else (user, queue, properties) is kept, so GridMix
reads OUT as it reads IN. integration/gridmix/tiny-rumen.json was made with the defaults
from /work/shared/traces/sls/2jobs2min-rumen-jh.json.

With --sls, OUT has one job per job of the SLS trace (as `sojourn to-sls` writes it: a SWIM
day, a generator), with its submission time, map and reduce tasks and their durations; IN's
first job is only the template for the fields SLS has no word for (properties, counters).
GridMix reads no more than that from a Rumen job in SLEEPJOB mode.
"""
import argparse
import copy
import json
import sys


def read_jobs(path, key="jobID"):
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
        if key not in job:
            sys.exit(f"shrink-rumen: {path}: job {len(jobs) + 1} has no {key}: not the trace expected")
        jobs.append(job)


def retime(task, start, length, job_id):
    task["startTime"], task["finishTime"] = start, start + length
    old = task["taskID"].split("_")
    task["taskID"] = "_".join(["task"] + job_id.split("_")[1:] + old[-2:])
    for a in task.get("attempts", []):
        a["startTime"], a["finishTime"] = start, start + length
        a["attemptID"] = "_".join(["attempt"] + job_id.split("_")[1:] + old[-2:] + ["0"])


def from_sls(template, sls_path):
    """Rumen jobs of an SLS trace, each built on `template` (a Rumen job)."""
    out, cluster = [], template["jobID"].split("_")[1]
    t0 = template["submitTime"]
    proto_map = template["mapTasks"][0] if template["mapTasks"] else None
    if proto_map is None:
        sys.exit("shrink-rumen: the template job has no map task to copy")
    for k, sjob in enumerate(read_jobs(sls_path, key="job.tasks")):
        job = copy.deepcopy(template)
        job_id = f"job_{cluster}_{k + 1:04d}"
        try:
            submit = t0 + int(sjob["job.start.ms"])
            tasks = [(t["container.type"], int(t["container.duration.ms"]))
                     for t in sjob["job.tasks"] for _ in range(int(t.get("count", 1)))]
        except (KeyError, TypeError, ValueError) as e:
            sys.exit(f"shrink-rumen: {sls_path}: job {k + 1}: bad or missing field {e}")
        job["jobID"], job["jobName"] = job_id, sjob.get("job.id", job_id)
        job["submitTime"], job["launchTime"] = submit, submit + 500
        job["mapTasks"], job["reduceTasks"], job["otherTasks"] = [], [], []
        maps = [d for kind, d in tasks if kind == "map"]
        reduces = [d for kind, d in tasks if kind == "reduce"]
        end = submit + 1000
        for i, d in enumerate(maps):
            t = copy.deepcopy(proto_map)
            t["taskID"] = f"task_{cluster}_{k + 1:04d}_m_{i:06d}"
            retime(t, submit + 1000, max(d, 1), job_id)
            job["mapTasks"].append(t)
            end = max(end, submit + 1000 + d)
        for i, d in enumerate(reduces):
            t = copy.deepcopy(proto_map)
            t["taskType"] = "REDUCE"
            t["taskID"] = f"task_{cluster}_{k + 1:04d}_r_{i:06d}"
            retime(t, end, max(d, 1), job_id)
            job["reduceTasks"].append(t)
        job["totalMaps"], job["totalReduces"] = len(maps), len(reduces)
        job["finishTime"] = end + max(reduces, default=0)
        out.append(job)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--jobs", type=int, default=3)
    p.add_argument("--maps", type=int, default=2)
    p.add_argument("--gap-ms", type=int, default=3000)
    p.add_argument("--task-ms", type=int, default=3000)
    p.add_argument("--sls", help="write this SLS trace's jobs as Rumen, IN's first job as template")
    a = p.parse_args()
    if a.jobs < 1 or a.maps < 1 or a.gap_ms < 0 or a.task_ms < 1:
        sys.exit("shrink-rumen: --jobs, --maps and --task-ms must be > 0, --gap-ms >= 0")
    src = read_jobs(a.input)
    if not src:
        sys.exit(f"shrink-rumen: {a.input} has no job")
    if a.sls:
        write(from_sls(src[0], a.sls), a.output)
        return
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
    write(out, a.output)


def write(jobs, path):
    with open(path, "w", encoding="utf-8") as f:
        for job in jobs:
            json.dump(job, f, indent=1)
            f.write("\n")
    tasks = sum(len(j["mapTasks"]) + len(j["reduceTasks"]) for j in jobs)
    print(f"shrink-rumen: {len(jobs)} jobs, {tasks} tasks written to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
