#!/usr/bin/env bash
# Writes tests/data/attempts-4.1.1/: one application with two attempts, as YARN writes the event
# logs of a driver that was retried, made from two REAL PySpark 4.1.1 runs (local[2], one after
# the other, so attempt 2 starts after attempt 1 ended; no time is shifted). Each run has one RDD
# job under the job group `attempt_job` ("One job per attempt"): 2 partitions (tasks) in
# attempt 1, 3 in attempt 2. Event logs: single file, uncompressed.
#
# The two `local-<ts>` logs are then rewritten into one application, byte for byte but for the
# SparkListenerApplicationStart line, where "App ID" becomes application_1796000000000_0001 and
# "App Attempt ID" ("1", "2") is added after "User", where Spark's JsonProtocol writes it. Spark's
# compact JSON is kept (the History Server's listing matches the literal prefix
# `{"Event":"SparkListenerApplicationStart"`). Everything else stays as the local run wrote it,
# `spark.app.id` and `spark.master` of the environment update included. Files are named as Spark
# names an attempt's log: <app-id>_<attempt-id>.
#
#   complete/   application_1796000000000_0001_1, application_1796000000000_0001_2
#   crashed/    the same, attempt 1 without its SparkListenerApplicationEnd line (its driver died)
#   history/    what a real History Server (PySpark 4.1.1's jars, Java 17) over complete/ served:
#               applications.json, <attempt>/jobs.json, <attempt>/stages.json
#   history-crashed/applications.json   the same over crashed/ (attempt 1: completed false,
#               endTimeEpoch -1); `lastUpdated` in both is the files' modification time
#   meta.json   how it was made; per attempt: job ids, task counts, start and end times
#
# Needs Java 17 and PyPI (scripts/pyspark-venv.sh 4.1.1, unless .venv has pyspark 4.1.1). About a
# minute. Usage: scripts/attempts-fixture.sh [OUT]     (default tests/data/attempts-4.1.1)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
VERSION=4.1.1
APP_ID=application_1796000000000_0001
out="${1:-$root/tests/data/attempts-$VERSION}"
if .venv/bin/python -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$VERSION')" 2>/dev/null; then
  py="$root/.venv/bin/python"
else
  py="$(scripts/pyspark-venv.sh "$VERSION")"
fi
tmp="$(mktemp -d)"
hs_pid=""
cleanup() {
  if [ -n "$hs_pid" ]; then kill "$hs_pid" 2>/dev/null || true; wait "$hs_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# 1. Two real runs, one after the other: attempt N has one job of PARTITIONS[N] tasks.
PARTITIONS=(_ 2 3)
for n in 1 2; do
  mkdir -p "$tmp/run$n"
  PYSPARK_PYTHON="$py" PYSPARK_DRIVER_PYTHON="$py" "$py" - "$tmp/run$n" "${PARTITIONS[$n]}" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "support"))
import sparkwork

log_dir, parts = sys.argv[1], int(sys.argv[2])
spark = sparkwork.session(
    "local[2]", "attempts-fixture", event_log_dir=log_dir, loopback=True, driver_memory=None,
    conf=[("spark.ui.enabled", "false"),
          ("spark.eventLog.compress", "false"),
          ("spark.eventLog.rolling.enabled", "false")])
sc = spark.sparkContext
sparkwork.set_group(sc, "attempt_job", "One job per attempt")
n = sc.parallelize(range(600), parts).map(lambda x: x * 2).count()
assert n == 600, n
ids = sc.statusTracker().getJobIdsForGroup("attempt_job")
assert len(ids) == 1, ids
print(f"run: {spark.version} {sc.applicationId}: job {ids[0]}, {parts} partitions", file=sys.stderr)
spark.stop()
PY
  find "$tmp/run$n" -name '.*.crc' -delete
done

# 2. Rewrite them into one application's two attempts; the crashed variant; checks.
rm -rf "$out"
mkdir -p "$out/complete" "$out/crashed"
python3 - "$tmp" "$out" "$APP_ID" "$VERSION" <<'PY'
import json, os, sys

tmp, out, app_id, version = sys.argv[1:5]
START = b'{"Event":"SparkListenerApplicationStart",'
END = b'{"Event":"SparkListenerApplicationEnd",'


def rewrite_start(line, attempt):
    """The start line with App ID and App Attempt ID set, every other byte as it was."""
    old = json.loads(line)
    new_line = line
    old_id = b'"App ID":' + json.dumps(old["App ID"]).encode()
    assert new_line.count(old_id) == 1, line
    new_line = new_line.replace(old_id, b'"App ID":' + json.dumps(app_id).encode())
    attempt_field = b'"App Attempt ID":' + json.dumps(attempt).encode()
    if "App Attempt ID" in old:
        old_field = b'"App Attempt ID":' + json.dumps(old["App Attempt ID"]).encode()
        assert new_line.count(old_field) == 1, line
        new_line = new_line.replace(old_field, attempt_field)
    else:
        # JsonProtocol writes App Attempt ID right after User.
        user = b'"User":' + json.dumps(old["User"]).encode()
        assert new_line.count(user) == 1, line
        new_line = new_line.replace(user, user + b"," + attempt_field)
    want = dict(old, **{"App ID": app_id, "App Attempt ID": attempt})
    assert json.loads(new_line) == want, new_line
    assert new_line.startswith(START), new_line
    # Undoing the two edits gives the line Spark wrote.
    undo = new_line.replace(b'"App ID":' + json.dumps(app_id).encode(), old_id)
    if "App Attempt ID" in old:
        assert undo.replace(attempt_field, old_field) == line
    else:
        assert undo.replace(b"," + attempt_field, b"", 1) == line
    return new_line


attempts = []
for n in (1, 2):
    run = os.path.join(tmp, f"run{n}")
    (name,) = os.listdir(run)
    assert name.startswith("local-") and "." not in name, name
    data = open(os.path.join(run, name), "rb").read()
    lines = data.split(b"\n")
    assert lines[-1] == b"", "the log ends with a newline"
    starts = [i for i, l in enumerate(lines) if l.startswith(START)]
    ends = [i for i, l in enumerate(lines) if l.startswith(END)]
    assert len(starts) == 1 and len(ends) == 1, (name, starts, ends)
    new = list(lines)
    new[starts[0]] = rewrite_start(lines[starts[0]], str(n))
    # Byte for byte but the start line.
    assert [l for i, l in enumerate(new) if i != starts[0]] == \
           [l for i, l in enumerate(lines) if i != starts[0]]
    complete = b"\n".join(new)
    crashed = b"\n".join(l for i, l in enumerate(new) if n != 1 or i != ends[0])
    file = f"{app_id}_{n}"
    open(os.path.join(out, "complete", file), "wb").write(complete)
    open(os.path.join(out, "crashed", file), "wb").write(crashed)

    events = [json.loads(l) for l in new if l]
    start = events[starts[0]]
    end = events[ends[0]]
    jobs = {}
    for e in events:
        if e["Event"] == "SparkListenerJobStart":
            p = e["Properties"]
            jobs[e["Job ID"]] = {"job_id": e["Job ID"], "job_group": p.get("spark.jobGroup.id"),
                                 "description": p.get("spark.job.description"),
                                 "submission_time": e["Submission Time"],
                                 "tasks": sum(s["Number of Tasks"] for s in e["Stage Infos"]),
                                 "stage_ids": e["Stage IDs"]}
        elif e["Event"] == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["completion_time"] = e["Completion Time"]
            jobs[e["Job ID"]]["result"] = e["Job Result"]["Result"]
    tasks = {}
    for e in events:
        if e["Event"] == "SparkListenerTaskEnd":
            r = e["Task End Reason"]["Reason"]
            tasks[r] = tasks.get(r, 0) + 1
    env = next(e for e in events if e["Event"] == "SparkListenerEnvironmentUpdate")
    attempts.append({
        "attempt_id": str(n),
        "file": file,
        "original_app_id": json.loads(lines[starts[0]])["App ID"],
        "spark_version": next(e for e in events
                              if e["Event"] == "SparkListenerLogStart")["Spark Version"],
        "app_name": start["App Name"],
        "user": start["User"],
        "start_time": start["Timestamp"],
        "end_time": end["Timestamp"],
        "jobs": sorted(jobs.values(), key=lambda j: j["job_id"]),
        "job_ids": sorted(jobs),
        "task_ends": tasks,
        "environment_spark_app_id": dict(env["Spark Properties"]).get("spark.app.id"),
        "lines": len(new) - 1,
        "crashed_variant_lines": len(new) - 1 - (1 if n == 1 else 0),
    })
assert attempts[1]["start_time"] > attempts[0]["end_time"], "attempt 2 starts after 1 ended"
assert [a["job_ids"] for a in attempts] == [[0], [0]]
assert [a["jobs"][0]["tasks"] for a in attempts] == [2, 3]
assert [a["task_ends"] for a in attempts] == [{"Success": 2}, {"Success": 3}]
meta = {
    "made_by": "scripts/attempts-fixture.sh",
    "how": "two real PySpark runs on local[2], one after the other, each one RDD job "
           "(parallelize(range(600), N).map.count) under setJobGroup('attempt_job', "
           "'One job per attempt'); single-file uncompressed event logs. Each log rewritten "
           "byte for byte but its SparkListenerApplicationStart line: App ID set to the YARN "
           "id, App Attempt ID added after User (as JsonProtocol orders it). Files named "
           "<app-id>_<attempt-id> as Spark names an attempt's log. crashed/: attempt 1 "
           "without its SparkListenerApplicationEnd line. The environment update still says "
           "the local run's spark.app.id and spark.master.",
    "spark_version": version,
    "app_id": app_id,
    "attempts": attempts,
}
with open(os.path.join(out, "meta.json"), "w") as f:
    json.dump(meta, f, indent=1)
    f.write("\n")
PY

# 3. A real History Server over complete/ (then over crashed/): one application, two attempts,
# each with its job. Its answers go to history/ (history-crashed/).
jars="$("$py" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
history() {
  local logs="$1" dest="$2" port
  port="$(free_port)"
  java -Xmx512m -cp "$jars/*" \
    "-Dspark.history.fs.logDirectory=file:$logs" \
    -Dspark.history.fs.update.interval=1s \
    "-Dspark.history.ui.port=$port" \
    org.apache.spark.deploy.history.HistoryServer > "$tmp/history-server.log" 2>&1 &
  hs_pid=$!
  python3 - "$port" "$out" "$APP_ID" "$dest" <<'PY' || { tail -40 "$tmp/history-server.log"; exit 1; }
import json, os, sys, time, urllib.request

port, out, app_id, dest = sys.argv[1:5]
crashed = dest.endswith("-crashed")
base = f"http://127.0.0.1:{port}/api/v1/applications"


def get(path):
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return r.read()


deadline = time.time() + 120
while True:
    try:
        apps = json.loads(get(""))
        if len(apps) == 1 and len(apps[0]["attempts"]) == 2:
            break
    except OSError:
        pass
    if time.time() > deadline:
        raise SystemExit("the History Server did not list one application with two attempts")
    time.sleep(1)
assert apps[0]["id"] == app_id, apps
by_id = {a["attemptId"]: a for a in apps[0]["attempts"]}
assert sorted(by_id) == ["1", "2"], apps
# A log with no SparkListenerApplicationEnd: not completed, no end time.
assert by_id["1"]["completed"] is not crashed and by_id["2"]["completed"], apps
hist = os.path.join(out, dest)
os.makedirs(hist)
open(os.path.join(hist, "applications.json"), "wb").write(get(""))
meta = json.load(open(os.path.join(out, "meta.json")))
for a in meta["attempts"]:
    n = a["attempt_id"]
    jobs_raw, stages_raw = get(f"/{app_id}/{n}/jobs"), get(f"/{app_id}/{n}/stages")
    jobs, stages = json.loads(jobs_raw), json.loads(stages_raw)
    assert [j["jobId"] for j in jobs] == a["job_ids"], (n, jobs)
    assert [j["numTasks"] for j in jobs] == [j["tasks"] for j in a["jobs"]], (n, jobs)
    assert all(j["jobGroup"] == "attempt_job" for j in jobs), (n, jobs)
    if not crashed:
        os.makedirs(os.path.join(hist, n))
        open(os.path.join(hist, n, "jobs.json"), "wb").write(jobs_raw)
        open(os.path.join(hist, n, "stages.json"), "wb").write(stages_raw)
    print(f"{dest}: attempt {n}: jobs {[(j['jobId'], j['status'], j['numTasks']) for j in jobs]}"
          f", stages {[(s['stageId'], s['status'], s['numTasks']) for s in stages]}")
print(f"{dest}: " + json.dumps(apps[0]))
PY
  kill "$hs_pid" && wait "$hs_pid" 2>/dev/null || true
  hs_pid=""
}
history "$out/complete" history
history "$out/crashed" history-crashed
chmod -R u+rwX,go+rX "$out"
du -sh "$out"/*
echo "wrote $out"
