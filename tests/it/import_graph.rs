//! No import cycles between the files of `src/`.
//!
//! Every `.rs` file under `src/` is read and every path it names inside the crate is collected:
//! `use crate::…`, `use super::…`, `use self::…`, paths into its own child modules, and the same
//! paths written inline (`crate::model::Model::new(..)` in a function body), in macro arguments
//! too. Each path is mapped to the file that defines what it names: a module `a::b` is
//! `src/a/b.rs` or `src/a/b/mod.rs`, an item `a::b::Item` belongs to the deepest module file on
//! its path, and an item a module only re-exports (`pub use child::Item`, also through `*`) is
//! followed to the file that defines it. So a child that uses a sibling's item through its parent's
//! re-export
//! depends on the sibling, not on the parent; a parent that re-exports a child and also defines
//! something the child uses is a real cycle.
//!
//! Test code is skipped: files named `*tests.rs`, and any item under `#[cfg(test)]` (the
//! `mod tests { … }` blocks). Comments and literals are skipped, so doc links do not count.
//! `mod` declarations are not edges (every child would otherwise close a loop with its parent).
//!
//! The test fails listing every cycle (as file paths, with the reference behind each step) that
//! is not in [`KNOWN_CYCLES`], and every entry there that no longer occurs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Cycles allowed to exist, each listed exactly (the files in order, starting with the
/// smallest path, without repeating the first). None: any cycle fails, and so does an entry here
/// once its cycle is gone.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// Cycles enumerated at most (a dense tangle could otherwise take forever to list).
const MAX_CYCLES: usize = 2000;

#[path = "../support/rust_tokens.rs"]
mod rust_tokens;
use rust_tokens::{ident, is, is_cfg_test, lex, skip_group, skip_item, use_tree, Tok};

type ModPath = Vec<String>;

/// What one file says: its references, its top-level names, and its top-level imports.
#[derive(Default)]
struct Scan {
    /// (module the reference is written in, path as written, line).
    refs: Vec<(ModPath, Vec<String>, usize)>,
    defs: BTreeSet<String>,
    /// Name brought in by a top-level `use` → the path as written (relative to the file).
    imports: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
}

/// Scan one file of module `module`; `children` are its child modules that have files, and
/// `roots` the first segments that name this crate's root (`crate` in the library,
/// `spark_exporter` in a binary).
fn scan(src: &str, module: &[String], children: &BTreeSet<String>, roots: &[&str]) -> Scan {
    let t = lex(src);
    let mut s = Scan::default();
    let (mut i, mut depth) = (0, 0usize);
    // Inline modules we are inside: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let here = |inline: &[(String, usize)]| -> ModPath {
        let mut m = module.to_vec();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    while i < t.len() {
        let prev = i.checked_sub(1).map(|p| &t[p].0);
        match &t[i].0 {
            Tok::Punct('#') if is(t.get(i + 1), '[') || is(t.get(i + 2), '[') => {
                let inner = is(t.get(i + 1), '!');
                let open = i + 1 + usize::from(inner);
                let end = skip_group(&t, open);
                let cfg_test = is_cfg_test(&t[(open + 1).min(end)..end.saturating_sub(1)]);
                i = end;
                if cfg_test && inner {
                    return Scan::default();
                }
                if cfg_test {
                    // Further attributes, then the item itself.
                    while is(t.get(i), '#') {
                        i = skip_group(&t, i + 1);
                    }
                    i = skip_item(&t, i);
                }
                continue;
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| depth < *d) {
                    inline.pop();
                }
            }
            Tok::Ident(w) if w == "use" => {
                let mut tree = Vec::new();
                let end = use_tree(&t, i + 1, &[], &mut tree);
                let line = t[i].1;
                for (path, name) in tree {
                    if depth == 0 {
                        if name == "*" {
                            s.globs.push(path.clone());
                        } else {
                            s.imports.insert(name, path.clone());
                        }
                    }
                    s.refs.push((here(&inline), path, line));
                }
                i = end;
                continue;
            }
            Tok::Ident(w) if depth == 0 && DEF_KEYWORDS.contains(&w.as_str()) => {
                if let Some(name) = ident(t.get(i + 1)) {
                    s.defs.insert(name.to_string());
                    if w == "mod" && is(t.get(i + 2), '{') {
                        inline.push((name.to_string(), depth + 1));
                    }
                }
            }
            Tok::Ident(w) if w == "macro_rules" && depth == 0 => {
                if let Some(name) = ident(t.get(i + 2)) {
                    s.defs.insert(name.to_string());
                }
            }
            Tok::Ident(w)
                if matches!(t.get(i + 1), Some((Tok::Sep, _)))
                    && !matches!(prev, Some(Tok::Sep | Tok::Punct('.')))
                    && ident(t.get(i.wrapping_sub(1))) != Some("in")
                    && (matches!(w.as_str(), "crate" | "self" | "super")
                        || roots.contains(&w.as_str())
                        || (inline.is_empty() && children.contains(w))) =>
            {
                let line = t[i].1;
                let mut path = vec![w.clone()];
                i += 1;
                while matches!(t.get(i), Some((Tok::Sep, _))) {
                    match ident(t.get(i + 1)) {
                        Some(n) => path.push(n.to_string()),
                        None => break,
                    }
                    i += 2;
                }
                s.refs.push((here(&inline), path, line));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    s
}

const DEF_KEYWORDS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
];

/// The source tree: module path → file, and what each file says.
struct Crate {
    files: BTreeMap<ModPath, String>,
    scans: BTreeMap<String, (ModPath, Scan)>,
}

impl Crate {
    /// `path` as written in module `cur` of `file`, made absolute; `None` if it leaves the
    /// library (another crate, or a binary's own `crate::`).
    fn absolute(&self, file: &str, cur: &[String], path: &[String]) -> Option<ModPath> {
        let bin = file == "src/main.rs" || file.starts_with("src/bin/");
        let (first, rest) = path.split_first()?;
        let mut abs = match first.as_str() {
            "crate" | "$crate" if !bin => vec![],
            "spark_exporter" if bin => vec![],
            "self" => cur.to_vec(),
            "super" => {
                let mut m = cur.to_vec();
                m.pop()?;
                let mut rest = rest;
                while rest.first().map(String::as_str) == Some("super") {
                    m.pop()?;
                    rest = &rest[1..];
                }
                m.extend(rest.iter().cloned());
                return Some(m);
            }
            _ if !bin => {
                // A child module of the file (a bare path in a `use`, or `child::item`).
                let mut m = cur.to_vec();
                m.push(first.clone());
                if !self.files.contains_key(&m) {
                    return None;
                }
                m
            }
            _ => return None,
        };
        abs.extend(rest.iter().cloned());
        Some(abs)
    }

    /// The file defining `abs`, and whether the item was found defined there (rather than
    /// assumed to be in the deepest module file on its path).
    fn resolve(&self, abs: &[String], hops: usize) -> (String, bool) {
        let k = (0..=abs.len())
            .rev()
            .find(|k| self.files.contains_key(&abs[..*k]))
            .unwrap_or(0);
        let file = self.files[&abs[..k]].clone();
        let Some(name) = abs.get(k) else {
            return (file, true);
        };
        let (module, scan) = &self.scans[&file];
        if scan.defs.contains(name) || hops > 16 {
            return (file.clone(), scan.defs.contains(name));
        }
        let follow = |target: &[String]| -> Option<(String, bool)> {
            let mut p = self.absolute(&file, module, target)?;
            p.extend(abs[k + 1..].iter().cloned());
            Some(self.resolve(&p, hops + 1))
        };
        if let Some(target) = scan.imports.get(name) {
            if let Some(r) = follow(target) {
                return r;
            }
        }
        for glob in &scan.globs {
            let mut target = glob.clone();
            target.push(name.clone());
            if let Some(r) = follow(&target).filter(|r| r.1) {
                return r;
            }
        }
        (file, false)
    }
}

/// The library's module path of a file under `src/` (`None` for binaries' roots).
fn module_of(rel: &str) -> Option<ModPath> {
    let p = rel.strip_prefix("src/")?.strip_suffix(".rs")?;
    if p == "main" || p.starts_with("bin/") {
        return None;
    }
    let mut m: ModPath = p.split('/').map(String::from).collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
        m.pop();
    }
    Some(m)
}

fn rs_files(dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Edges between files: from → to → the first reference behind it (`line: path`).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The crates of the workspace, each scanned on its own (a cycle between crates cannot
/// compile).
const CRATES: &[&str] = &["", "crates/core", "crates/diagnose"];

fn graph(dir: &str) -> Graph {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if dir.is_empty() {
        manifest.to_path_buf()
    } else {
        manifest.join(dir)
    };
    let root = root.as_path();
    let mut paths = Vec::new();
    rs_files(&root.join("src"), &mut paths);
    let rel = |p: &str| p[root.to_string_lossy().len() + 1..].to_string();
    let files: BTreeMap<ModPath, String> = paths
        .iter()
        .filter_map(|p| Some((module_of(&rel(p))?, rel(p))))
        .collect();
    let mut krate = Crate {
        files,
        scans: BTreeMap::new(),
    };
    for p in &paths {
        let file = rel(p);
        let module = module_of(&file).unwrap_or_default();
        let lib = module_of(&file).is_some();
        let children = krate
            .files
            .keys()
            .filter(|m| lib && m.len() == module.len() + 1 && m.starts_with(&module))
            .filter_map(|m| m.last().cloned())
            .collect();
        let roots: &[&str] = if lib { &[] } else { &["spark_exporter"] };
        let src = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {file}: {e}"));
        let scan = if file.ends_with("tests.rs") {
            Scan::default()
        } else {
            scan(&src, &module, &children, roots)
        };
        krate.scans.insert(file, (module, scan));
    }
    let mut g = Graph::new();
    for (file, (_, scan)) in &krate.scans {
        let edges = g.entry(file.clone()).or_default();
        for (cur, path, line) in &scan.refs {
            let Some(abs) = krate.absolute(file, cur, path) else {
                continue;
            };
            let (to, _) = krate.resolve(&abs, 0);
            if &to != file {
                edges
                    .entry(to)
                    .or_insert_with(|| format!("{file}:{line}: {}", path.join("::")));
            }
        }
    }
    g
}

/// Every elementary cycle, each starting at its smallest file (up to [`MAX_CYCLES`]).
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    fn walk(g: &Graph, start: &str, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        let Some(next) = g.get(path.last().map_or(start, String::as_str)) else {
            return;
        };
        for to in next.keys() {
            if out.len() >= MAX_CYCLES {
                return;
            }
            if to == start {
                out.push(path.clone());
            } else if to.as_str() > start && !path.contains(to) {
                path.push(to.clone());
                walk(g, start, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for start in g.keys() {
        walk(g, start, &mut vec![start.clone()], &mut out);
    }
    out
}

#[test]
fn src_files_import_no_cycles() {
    let mut g = Graph::new();
    for dir in CRATES {
        // Files named from the repository's root, so the crates' `src/` files stay apart.
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let name = |f: &str| format!("{prefix}{f}");
        for (from, edges) in graph(dir) {
            let edges = edges
                .into_iter()
                .map(|(to, why)| (name(&to), name(&why)))
                .collect();
            g.insert(name(&from), edges);
        }
    }
    assert!(
        g.keys().any(|f| f.starts_with("crates/core/src/model/"))
            && g.keys().any(|f| f.starts_with("src/export/")),
        "both crates are scanned"
    );
    let found = cycles(&g);
    let known: Vec<Vec<String>> = KNOWN_CYCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut report = String::new();
    for c in found.iter().filter(|c| !known.contains(c)) {
        report += &format!("\nnew cycle: {} -> {}\n", c.join(" -> "), c[0]);
        for (k, from) in c.iter().enumerate() {
            let to = &c[(k + 1) % c.len()];
            report += &format!("    {}  (-> {to})\n", g[from][to]);
        }
    }
    for c in known.iter().filter(|c| !found.contains(c)) {
        report += &format!("\nKNOWN_CYCLES lists a cycle that is gone (delete it): {c:?}\n");
    }
    if found.len() >= MAX_CYCLES {
        report += &format!("\n(stopped listing at {MAX_CYCLES} cycles)\n");
    }
    assert!(
        report.is_empty(),
        "files under src/ import each other in a circle. Each cycle below is followed by the \
         reference that makes each step (file:line: path as written). Break it by moving what \
         both sides need into one of them or a third file, or have the parent `mod.rs` only \
         declare and re-export its children.\n{report}"
    );
}

#[test]
fn the_scanner_sees_paths_in_bodies_and_skips_tests_comments_and_strings() {
    let src = r##"
        //! [`crate::doc::Link`]
        use super::{sib::{A, B as C}, *};
        use crate::x::{self, y::Z};
        fn f() { let s = "crate::in_string::X"; let r = r#"crate::raw"#; crate::body::call(); 'a'; }
        fn g<'a>(x: &'a str) { child::thing(x) }
        pub(in crate::vis) struct S;
        #[cfg(test)]
        mod tests { use crate::test_only::X; }
        #[cfg(test)]
        fn helper() { crate::test_fn::y() }
    "##;
    let module = vec!["m".to_string()];
    let children = BTreeSet::from(["child".to_string()]);
    let s = scan(src, &module, &children, &[]);
    let paths: Vec<String> = s.refs.iter().map(|(_, p, _)| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "super::sib::A",
            "super::sib::B",
            "super",
            "crate::x",
            "crate::x::y::Z",
            "crate::body::call",
            "child::thing",
        ]
    );
    assert_eq!(s.imports["C"], ["super", "sib", "B"]);
    assert_eq!(s.globs, [vec!["super".to_string()]]);
    assert!(s.defs.contains("f") && s.defs.contains("S") && !s.defs.contains("helper"));
}

/// The core crate (the model and the configuration) has no I/O dependency and does not depend
/// on the crate of the collectors: an import from it into a collector cannot compile.
#[test]
fn the_core_and_diagnose_crates_depend_on_no_io_and_no_collector() {
    for (krate, allowed_local) in [
        ("crates/core", &[][..]),
        ("crates/diagnose", &["spark-exporter-core"][..]),
    ] {
        let manifest = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("{krate}/Cargo.toml")),
        )
        .expect("a crate manifest");
        let deps: Vec<&str> = manifest
            .split("\n[")
            .filter(|section| section.starts_with("dependencies]"))
            .flat_map(|section| section.lines().skip(1))
            .filter_map(|l| l.split('=').next())
            .map(str::trim)
            .filter(|name| !name.is_empty() && !name.starts_with('#'))
            .collect();
        assert!(
            deps.contains(&"serde"),
            "the dependencies of {krate} are read: {deps:?}"
        );
        for io in [
            "tokio",
            "reqwest",
            "hyper",
            "hyper-util",
            "object_store",
            "tonic",
        ] {
            assert!(!deps.contains(&io), "{krate} depends on {io}");
        }
        // Of the workspace's own crates, only those below it in the layering.
        for d in deps.iter().filter(|d| d.starts_with("spark-exporter")) {
            assert!(
                allowed_local.contains(d),
                "{krate} depends on {d}, a crate above it"
            );
        }
    }
}

/// The benchmark harnesses' crate asks for each dependency exactly as the exporter does (same
/// version, same features), so a release build of the harnesses reuses the binary's compiled
/// dependencies (crates/bench/Cargo.toml says why).
#[test]
fn the_bench_crate_asks_for_no_feature_the_binary_does_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let deps = |path: &str| -> Vec<String> {
        std::fs::read_to_string(root.join(path))
            .expect("a manifest")
            .split("\n[")
            .filter(|section| section.starts_with("dependencies]"))
            .flat_map(|section| section.lines().skip(1))
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    let exporter = deps("Cargo.toml");
    let bench = deps("crates/bench/Cargo.toml");
    assert!(
        bench.len() > 3,
        "the bench crate's dependencies are read: {bench:?}"
    );
    for d in bench.iter().filter(|d| !d.starts_with("spark-exporter ")) {
        assert!(
            exporter.contains(d),
            "crates/bench asks for `{d}`, not as the exporter does"
        );
    }
}
