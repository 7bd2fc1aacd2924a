"""The `job_group` a job gets under the exporter's default rule (docs/internals.md "Job groups": the job
group, else the user's tag, else the call site, else empty), worked out from Spark's own REST
fields or event-log properties, for the truths the end-to-end tests compare with. The Rust
tests' twin is tests/support/groups.rs.
"""


def first_user_tag(tags):
    """The user's tag among job tags as Spark records them (Spark's own tags are skipped)."""
    user = []
    for t in tags:
        if not t:
            continue
        if t.startswith("spark-session-"):
            rest = t[len("spark-session-"):]
            if "-thread-" not in rest:
                continue
            t = rest.split("-thread-", 1)[1][37:]
        elif t.startswith("SparkConnect_"):
            if "_Tag_" not in t:
                continue
            t = t.split("_Tag_", 1)[1]
        if t:
            user.append(t)
    return min(user) if user else ""


def call_site(name):
    """`<method> at <file>:<line>` without the file's folders (Connect plan dumps aside)."""
    if " at " not in name:
        return name
    method, place = name.rsplit(" at ", 1)
    return f"{method} at {place.replace(chr(92), '/').rsplit('/', 1)[-1]}"


def job_group(group, tags, name):
    return group or first_user_tag(tags) or call_site(name or "")


def rest_job_group(j):
    """The group of a REST `JobData`."""
    return job_group(j.get("jobGroup") or "", j.get("jobTags") or [], j.get("name") or "")


def log_job_group(ev):
    """The group of an event log's `SparkListenerJobStart`: its properties, and its last stage's
    name as the call site."""
    props = ev.get("Properties") or {}
    tags = [t for t in (props.get("spark.job.tags") or "").split(",") if t]
    infos = ev.get("Stage Infos") or []
    name = max(infos, key=lambda s: s["Stage ID"])["Stage Name"] if infos else ""
    return job_group(props.get("spark.jobGroup.id") or "", tags, name)
