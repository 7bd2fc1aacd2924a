//! Build facts for `spark_exporter_build_info`: the git revision the binary is built from and
//! the Rust compiler's version. Neither is required: outside a git checkout (a source tarball)
//! the revision is `unknown`. Uncommitted changes are not marked.

use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

// Not SPARK_EXPORTER_*: cargo also sets these for `cargo run` and tests, and that prefix is the
// configuration's environment.
fn main() {
    let revision =
        run("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rust_version = run(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SE_BUILD_REVISION={revision}");
    println!("cargo:rustc-env=SE_BUILD_RUSTC={rust_version}");
    // A checkout changes HEAD; a commit changes the branch HEAD names (or packed-refs).
    let mut watch = vec![".git/HEAD".to_string(), ".git/packed-refs".to_string()];
    if let Ok(head) = std::fs::read_to_string(".git/HEAD") {
        if let Some(r) = head.trim().strip_prefix("ref: ") {
            watch.push(format!(".git/{r}"));
        }
    }
    for p in watch.iter().filter(|p| std::path::Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={p}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
