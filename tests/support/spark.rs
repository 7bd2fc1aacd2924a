//! The Python interpreter of the tests that run real PySpark applications.

use std::io::Write as _;
use std::path::PathBuf;

/// Whether a Spark test must run: `SPARK_E2E_REQUIRED` set to anything but "" or "0" (CI and
/// `scripts/test.sh` set it to 1).
pub fn required() -> bool {
    std::env::var("SPARK_E2E_REQUIRED").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The interpreter with pyspark: `$SPARK_E2E_PYTHON` (relative to the repository if relative),
/// default `.venv/bin/python` under the repository. When it is missing: `None` (the test then
/// passes vacuously) with a loud message on the real stderr, unless [`required`], in which case
/// it panics.
pub fn python(test: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let p = std::env::var_os("SPARK_E2E_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv/bin/python"));
    let p = if p.is_relative() { root.join(p) } else { p };
    if p.exists() {
        return Some(p);
    }
    skip_unless_required(&format!(
        "{test}: no PySpark interpreter at {} (create it with `python3 -m venv .venv && \
         .venv/bin/pip install pyspark==4.1.1`, or point SPARK_E2E_PYTHON at one)",
        p.display()
    ));
    None
}

/// Runs the Python `code` with `py` (`python -c code args...`), `stdin` written to its input;
/// its output once it exited.
pub fn run_python(
    py: &std::path::Path,
    code: &str,
    args: &[&str],
    stdin: &[u8],
) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(py)
        .arg("-c")
        .arg(code)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// `tests/review_page.py PAGE ARGS...` (a diagnose page in headless Chromium): whether it
/// passed, and what it printed (stdout, then stderr).
pub fn check_page(page: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new("python3")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/review_page.py"))
        .arg(page)
        .args(args)
        .output()
        .expect("python3");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The program `name` on `PATH`.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A Spark test cannot run (`why`): panic if [`required`], else say so loudly. Straight to the
/// stderr handle: `eprintln!` is captured for passing tests, and a skip must be seen.
pub fn skip_unless_required(why: &str) {
    if required() {
        panic!("{why}; SPARK_E2E_REQUIRED is set, so this is a failure");
    }
    let bar = "!".repeat(80);
    let _ = writeln!(
        std::io::stderr(),
        "\n{bar}\n!!! SKIPPED {why}.\n\
         !!! Set SPARK_E2E_PYTHON, or SPARK_E2E_REQUIRED=1 to make this a failure.\n{bar}"
    );
}

/// The committed schema `schema` (a path from the repository's root) validates `json`
/// (Python's `jsonschema` from the test venv; skipped without it, unless Spark is required).
pub fn assert_valid(schema: &str, json: &str, what: &str) {
    let Some(py) = python(schema) else {
        return;
    };
    let schema = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(schema);
    let code = "import json, sys, jsonschema\n\
                s = json.load(open(sys.argv[1]))\n\
                jsonschema.Draft202012Validator.check_schema(s)\n\
                jsonschema.Draft202012Validator(s).validate(json.load(sys.stdin))\n";
    let out = run_python(&py, code, &[schema.to_str().unwrap()], json.as_bytes());
    assert!(
        out.status.success(),
        "{what}: not valid against {}:\n{}",
        schema.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
