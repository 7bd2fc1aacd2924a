//! What the bench harnesses share.

use std::ffi::OsString;

/// The command line, without the `--bench` that `cargo bench` appends. Exits instead when there
/// is no mode to run: `cargo test --all-targets` and `cargo bench` start every bench target with
/// no arguments, or only the harness's flags (`--list`, ...). Then `usage` is printed and the
/// exit status is 0 when cargo started the process (so those commands pass), 64 otherwise.
pub fn args_or_usage(usage: &str) -> Vec<OsString> {
    let args: Vec<OsString> = std::env::args_os().filter(|a| a != "--bench").collect();
    let first = args.get(1).map(|a| a.to_string_lossy().into_owned());
    let help = matches!(first.as_deref(), Some("-h" | "--help" | "-V" | "--version"));
    if help || first.is_some_and(|a| !a.starts_with('-')) {
        return args;
    }
    eprintln!("{usage}");
    std::process::exit(if std::env::var_os("CARGO").is_some() {
        0
    } else {
        64
    });
}
