"""The PySpark application of tests/e2e_fleet.py (aggregation by application name), run several
times, one run after another: the same `spark.app.name` every run, a known number of jobs, some in
a job group, some that fail.

    python tests/e2e_fleet_workload.py --events DIR --name NAME --control DIR --plan 3,2f,1x,2s,...

Each entry of --plan is one run, a separate Spark application (a new SparkContext, so a new
application id and event log; the JVM is kept between runs, which saves its start-up): N jobs in
group `load` (each task sleeps, so a job lasts about a second and the run spans several scrapes),
then with `s` one skewed job in group `skewed` (SKEW_TASKS tasks, on local[2]'s 2 cores: the
first sleeps the long task's seconds, the others SKEW_SHORT_SECONDS each, so its stage's longest
task runs far longer than its median one, a `skew` finding, and the run is slower by about as
long), then one job outside any group, then with `f` one job in group `bad` whose task raises
(local mode: no task retries, so the job fails); with `x` the run ends with exit code 1 (Spark's
ApplicationEnd carries it: a failed run), else 0. Each run then holds --hold seconds before it
stops, so a job group first seen in this run is scraped at zero before the run ends and counts.

Run i starts once the file CONTROL/go-i exists (the test creates it, renamed into place once
written); for a run with `s` it may hold the skewed job's long task's seconds (else
--skew-seconds). After its end the workload writes CONTROL/truth-i.json: the application id, its
exit code and its jobs by (group, status) as Spark's own status tracker reported them. Spark has
stopped, so the application has ended and its log is complete, when the file appears. The driver
UI is off (the test reads event logs).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import sparkwork  # noqa: E402
from groups import call_site  # noqa: E402

log = sparkwork.logger("fleet-workload")


def slow(x):
    time.sleep(0.5)
    return x


SKEW_TASKS = 8
SKEW_SHORT_SECONDS = 0.1


def skewed(long_seconds):
    """The skewed job's task function: element 0 (the first partition's, which starts first)
    sleeps `long_seconds`, every other one SKEW_SHORT_SECONDS."""
    def task(x):
        time.sleep(long_seconds if x == 0 else SKEW_SHORT_SECONDS)
        return x
    return task


def fail(x):
    raise ValueError("the bad job fails on purpose")


def one_run(a, load, skew, failing, exit_code):
    spark = sparkwork.session("local[2]", a.name, event_log_dir=a.events, loopback=True,
                              conf=[("spark.ui.enabled", "false")])
    sc = spark.sparkContext
    app = sc.applicationId
    log(f"application {app}: {load} load job(s), skewed job: {skew or 'no'}, failing job: {failing}, "
        f"exit code {exit_code}")
    for _ in range(load):
        sparkwork.set_group(sc, "load", "load step")
        sc.parallelize(range(2), 2).map(slow).count()
    if skew:
        sparkwork.set_group(sc, "skewed", "skewed step")
        sc.parallelize(range(SKEW_TASKS), SKEW_TASKS).map(skewed(skew)).count()
    sparkwork.set_group(sc, None, None)
    sc.parallelize(range(4), 2).sum()
    if failing:
        sparkwork.set_group(sc, "bad", "bad step")
        try:
            sc.parallelize(range(2), 2).map(fail).count()
        except Exception:  # py4j's error: the job failed, as intended
            log("the bad job failed, as intended")
    # Spark's own account of the jobs, by (group, status), from its status tracker; a job with no
    # group counts under its call site (its last stage's name), the exporter's default rule.
    st = sc.statusTracker()
    # The tracker follows the listener bus, a little behind: wait until no job is running.
    deadline = time.time() + 20
    while st.getActiveJobsIds() and time.time() < deadline:
        time.sleep(0.1)
    jobs = {}
    for group in ("load", "skewed", "bad", None):
        for i in st.getJobIdsForGroup(group):
            info = st.getJobInfo(i)
            g = group or call_site(st.getStageInfo(max(info.stageIds)).name)
            key = f"{g}\t{str(info.status).lower()}"
            jobs[key] = jobs.get(key, 0) + 1
    time.sleep(a.hold)
    if exit_code:
        sc._jsc.sc().stop(exit_code)  # SparkContext.stop(exitCode): the end event carries it
    spark.stop()
    return {"app_id": app, "jobs": jobs, "exit_code": exit_code}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--hold", type=float, default=2.0)
    ap.add_argument("--skew-seconds", type=float, default=20.0,
                    help="the skewed job's long task, unless the run's go file says")
    a = ap.parse_args()
    plan = [(int(p.rstrip("sfx")), "s" in p, "f" in p, 1 if "x" in p else 0) for p in a.plan.split(",")]
    sparkwork.exit_with_parent(log)
    for i, (load, skew, failing, exit_code) in enumerate(plan):
        go = os.path.join(a.control, f"go-{i}")
        if not sparkwork.wait_for_file(go, 600):
            log(f"no go for run {i}; exiting")
            sys.exit(3)
        text = open(go).read().strip()
        t = one_run(a, load, (float(text) if text else a.skew_seconds) if skew else 0, failing, exit_code)
        sparkwork.write_json(os.path.join(a.control, f"truth-{i}.json"), t)
        log(f"run {i} ended")


if __name__ == "__main__":
    main()
