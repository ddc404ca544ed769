//! The dependency rule (ARCHITECTURE.md): every top-level module of `src/` sits in a layer,
//! and imports only from its own layer or those below, without circles. Mechanisms (engines,
//! measurement, data set, storage map, verify) know nothing of the command line, job files
//! or reports. This reads the sources, as a reviewer would.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::util::rust_files;

/// The layers, lowest first. A module imports from its own layer or lower ones.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundations",
        &["error", "units", "sys", "clock", "warnings", "progress"],
    ),
    (
        "mechanisms",
        &["safety", "engine", "measure", "storage", "verify"],
    ),
    ("data set", &["dataset"]),
    ("workload", &["workload"]),
    ("report", &["report"]),
    ("one run, the store", &["run", "store"]),
    ("options", &["options"]),
    (
        "commands",
        &[
            "sweep", "sizing", "mem", "doctor", "cluster", "capture", "database",
        ],
    ),
    ("front", &["cli", "app"]),
];

/// Imports allowed to run upward, each with its reason: none today (an entry must say why).
const UPWARD: &[(&str, &str, &str)] = &[];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// The source without comments and without what only tests compile (tests may reach
/// anywhere): a one-line `#[cfg(test)]` item (`mod fixture;`, a `use`) is left out and
/// what follows it still counts; a `#[cfg(test)]` block (`mod tests { ... }`) ends the code.
fn code_of(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == "#[cfg(test)]" {
            match lines.peek() {
                Some(next) if next.trim_end().ends_with(';') => {
                    lines.next();
                    continue;
                }
                _ => break,
            }
        }
        out.push(match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        });
    }
    out.join("\n")
}

#[test]
fn code_after_a_one_line_test_item_still_counts() {
    let code = code_of(
        "#[cfg(test)]\nmod fixture;\nuse crate::sweep::X;\n#[cfg(test)]\nmod tests {\n    use crate::app::Y;\n}\n",
    );
    assert!(code.contains("crate::sweep::X"), "{code}");
    assert!(!code.contains("crate::app"), "{code}");
}

/// The top-level modules `code` names through `crate::` (paths and `use crate::{a, b}`).
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            let mut depth = 0;
            let mut start = 0;
            for (j, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(group[start..j].trim()));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            out.insert(ident(group[start..end].trim()));
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// module → (imported module → the files that import it).
fn graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "main" || module == "lib" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        let entry = g.entry(module.clone()).or_default();
        for m in imports(&code) {
            if m != module {
                entry
                    .entry(m)
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    g
}

#[test]
fn every_module_has_a_layer_and_imports_only_downward() {
    let g = graph();
    let unplaced: Vec<&String> = g.keys().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "modules without a layer in tests/layers.rs (and ARCHITECTURE.md's Layers): {unplaced:?}"
    );
    let mut upward = Vec::new();
    for (from, tos) in &g {
        for (to, files) in tos {
            let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) else {
                panic!("{from} imports {to}, which is not a module of src/ with a layer");
            };
            let allowed = UPWARD.iter().any(|(f, t, _)| f == from && t == to);
            if b > a && !allowed {
                upward.push(format!(
                    "{from} ({}) imports {to} ({}) in {files:?}",
                    LAYERS[a].0, LAYERS[b].0
                ));
            }
        }
    }
    assert!(UPWARD.len() <= 3, "at most three upward imports");
    assert!(
        upward.is_empty(),
        "imports from a lower layer up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_modules_import_no_circle() {
    if let Some(circle) = find_circle(&graph()) {
        panic!("import circle: {}", circle.join(" → "));
    }
}

#[test]
fn the_reader_sees_every_import() {
    // The reader itself: a path, a group with a nested group, comments and tests left out.
    let code = code_of(
        "use crate::engine::Engine;\nuse crate::{dataset, report::{a, b}};\n\
         // crate::app in a comment\nfn f() { crate::sys::now(); }\n#[cfg(test)]\nuse crate::cli;",
    );
    let found: Vec<String> = imports(&code).into_iter().collect();
    assert_eq!(found, ["dataset", "engine", "report", "sys"]);
}

// ---- Inside each folder ---------------------------------------------------------------------
//
// Every folder of `src/` (a module with a `mod.rs`) is a small graph of its own: its files, and
// each sub-folder as one node. An edge runs from a file to the file that DEFINES what it names
// through `super::`, `self::`, `crate::…` or (in a `mod.rs`) a child's name: a path through a
// `use` line (`super::Event`, where `mod.rs` says `pub use event::Event`) is followed to the
// file that defines the item, so a child → `mod.rs` edge is counted only for items `mod.rs`
// defines itself. `mod.rs` is the folder's front and sits above its children: it declares
// them, shows their items and assembles them, so its own imports of its children are not
// counted — a child may use what the front defines (shared types, small helpers), and the
// children among themselves must not go round in a circle. Tests (`#[cfg(test)]` tails and
// test files) are left out.

/// A file of `src/` as a module path (`src/workload/span.rs` → `["workload", "span"]`).
struct SourceFile {
    rel: String,
    path: Vec<String>,
    is_front: bool,
    code: String,
}

fn ident_of(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// The `use` statements of `code`: (byte range, `pub`?, the tree without spaces).
fn use_statements(code: &str) -> Vec<(std::ops::Range<usize>, bool, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("use ") {
        let i = at + i;
        at = i + 4;
        let line_start = code[..i].rfind('\n').map_or(0, |n| n + 1);
        // A statement: what precedes `use` on its line is nothing or a visibility.
        let before = code[line_start..i].trim();
        if !(before.is_empty() || before.starts_with("pub")) {
            continue;
        }
        let Some(end) = code[i..].find(';') else {
            break;
        };
        // `a as b` keeps its name as `a@b` once the spaces are gone.
        let tree = code[i + 4..i + end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" as ", "@")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        out.push((line_start..i + end + 1, before.starts_with("pub"), tree));
        at = i + end;
    }
    out
}

/// The `use` trees of `code`, expanded to paths: (`pub`?, path, name it is known by).
/// `use a::{b, c::{d as e}}` gives `a::b` (b) and `a::c::d` (e).
fn use_paths(code: &str) -> Vec<(bool, Vec<String>, String)> {
    let mut out = Vec::new();
    for (_, public, tree) in use_statements(code) {
        expand(&tree, &[], public, &mut out);
    }
    out
}

/// `code` without its `use` statements (their paths are read by [`use_paths`]).
fn without_uses(code: &str) -> String {
    let mut out = String::new();
    let mut at = 0;
    for (range, _, _) in use_statements(code) {
        out.push_str(&code[at..range.start]);
        at = range.end;
    }
    out.push_str(&code[at..]);
    out
}

fn expand(tree: &str, prefix: &[String], public: bool, out: &mut Vec<(bool, Vec<String>, String)>) {
    // Split the top level of a group on commas.
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (j, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let mut path = prefix.to_vec();
        let mut rest = part;
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                expand(group.strip_suffix('}').unwrap_or(group), &path, public, out);
                break;
            }
            if rest == "*" {
                out.push((public, path, "*".into()));
                break;
            }
            let name = ident_of(rest);
            if name.is_empty() {
                break;
            }
            rest = &rest[name.len()..];
            if name == "self" && rest.is_empty() {
                let known = path.last().cloned().unwrap_or_default();
                out.push((public, path, known));
                break;
            }
            path.push(name.to_string());
            if let Some(r) = rest.strip_prefix("::") {
                rest = r;
                continue;
            }
            let known = rest.strip_prefix('@').map_or(name, ident_of).to_string();
            out.push((public, path, known));
            break;
        }
    }
}

/// Paths in code outside `use`: chains starting with `crate::`, `super::`, `self::` or one of
/// `children` (the modules a `mod.rs` declares).
fn code_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = bytes[i];
        let starts = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let first = ident_of(&code[i..]);
        let mut j = i + first.len();
        if !code[j..].starts_with("::")
            || !(matches!(first, "crate" | "super" | "self") || children.contains(first))
        {
            i = j;
            continue;
        }
        let mut path = vec![first.to_string()];
        while let Some(r) = code[j..].strip_prefix("::") {
            let name = ident_of(r);
            if name.is_empty() {
                break;
            }
            path.push(name.to_string());
            j += 2 + name.len();
        }
        out.push(path);
        i = j;
    }
    out
}

/// Test-only modules: `#[cfg(test)] mod name;` in `text`.
fn test_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("#[cfg(test)]") {
        let rest = text[i + 12..].trim_start();
        let rest = rest.strip_prefix("pub(crate)").unwrap_or(rest).trim_start();
        let rest = rest.strip_prefix("pub").unwrap_or(rest).trim_start();
        if let Some(r) = rest.strip_prefix("mod ") {
            let name = ident_of(r.trim_start());
            if r.trim_start()[name.len()..].starts_with(';') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

fn source_files() -> Vec<SourceFile> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut tests = BTreeSet::new();
    let mut out = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let mut path: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let last = path.pop().unwrap();
        let is_front = last == "mod.rs";
        if !is_front {
            path.push(last.trim_end_matches(".rs").to_string());
        }
        if path.len() == 1 && (path[0] == "main" || path[0] == "lib") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for t in test_modules(&text) {
            let mut p = path.clone();
            p.push(t);
            tests.insert(p);
        }
        out.push(SourceFile {
            rel: format!("src/{}", rel.display()),
            path,
            is_front,
            code: code_of(&text),
        });
    }
    out.retain(|f| !tests.contains(&f.path));
    out
}

/// Absolute path of `path` as written in the module `at` (`super`, `self`, `crate`, children).
fn absolute(path: &[String], at: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let mut base: Vec<String> = at.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) if children.contains(first) => {}
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The folder-level graphs: folder (module path) → node → nodes it imports → files naming it.
type FolderGraphs = BTreeMap<String, BTreeMap<String, BTreeMap<String, BTreeSet<String>>>>;

fn folder_graphs() -> FolderGraphs {
    let files = source_files();
    let by_path: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.clone(), i))
        .collect();
    let children_of = |p: &[String]| -> BTreeSet<String> {
        files
            .iter()
            .filter(|f| f.path.len() == p.len() + 1 && f.path.starts_with(p))
            .map(|f| f.path.last().unwrap().clone())
            .collect()
    };
    // Each file's names from its `use` lines: name → absolute path.
    let aliases: Vec<BTreeMap<String, Vec<String>>> = files
        .iter()
        .map(|f| {
            let kids = if f.is_front {
                children_of(&f.path)
            } else {
                BTreeSet::new()
            };
            use_paths(&f.code)
                .into_iter()
                .filter(|(_, _, name)| name != "*")
                .filter_map(|(_, p, name)| Some((name, absolute(&p, &f.path, &kids)?)))
                .collect()
        })
        .collect();
    // The file defining the item at an absolute path, following `use` lines.
    let resolve = |mut path: Vec<String>| -> Option<usize> {
        for _ in 0..16 {
            let (n, &file) = (1..=path.len())
                .rev()
                .find_map(|n| by_path.get(&path[..n]).map(|f| (n, f)))?;
            let Some(next) = path.get(n) else {
                return Some(file);
            };
            match aliases[file].get(next) {
                Some(target) if target.as_slice() != &path[..=n] => {
                    let mut p = target.clone();
                    p.extend(path[n + 1..].iter().cloned());
                    path = p;
                }
                _ => return Some(file),
            }
        }
        None
    };
    let mut graphs = FolderGraphs::new();
    for f in &files {
        let kids = if f.is_front {
            children_of(&f.path)
        } else {
            BTreeSet::new()
        };
        let body = without_uses(&f.code);
        let mut named: Vec<Vec<String>> = Vec::new();
        for (_, p, _) in use_paths(&f.code) {
            if let Some(a) = absolute(&p, &f.path, &kids) {
                named.push(a);
            }
        }
        for p in code_paths(&body, &kids) {
            if let Some(a) = absolute(&p, &f.path, &kids) {
                named.push(a);
            }
        }
        for a in named {
            let Some(to) = resolve(a) else { continue };
            let t = &files[to];
            // Every folder holding both files sees an edge between its nodes.
            let fp = &f.path;
            let tp = &t.path;
            let common = fp.iter().zip(tp).take_while(|(x, y)| x == y).count();
            let folder = &fp[..common];
            if folder.is_empty()
                || !by_path.contains_key(folder)
                || !files[by_path[folder]].is_front
            {
                continue;
            }
            let node = |p: &[String]| p.get(common).cloned().unwrap_or_else(|| "mod.rs".into());
            let (a, b) = (node(fp), node(tp));
            // The front's own imports of its children are not edges (see above).
            if a != b && a != "mod.rs" {
                graphs
                    .entry(folder.join("/"))
                    .or_default()
                    .entry(a)
                    .or_default()
                    .entry(b)
                    .or_default()
                    .insert(f.rel.clone());
            }
        }
    }
    graphs
}

/// One circle of `g`, if it has any, as the nodes along it (the first repeated at the end).
fn find_circle<V>(g: &BTreeMap<String, BTreeMap<String, V>>) -> Option<Vec<String>> {
    fn visit<T>(
        m: &str,
        g: &BTreeMap<String, BTreeMap<String, T>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(1) => {
                let at = stack.iter().position(|x| x == m).unwrap();
                let mut circle = stack[at..].to_vec();
                circle.push(m.to_string());
                return Some(circle);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for to in g.get(m).map(|t| t.keys()).into_iter().flatten() {
            if let Some(c) = visit(to, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if let Some(c) = visit(m, g, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_folder_has_an_import_circle() {
    let graphs = folder_graphs();
    // The reader must see the folders at all: `workload/` has files importing one another.
    assert!(
        graphs.get("workload").is_some_and(|g| g.len() > 3),
        "the folder graphs were not read: {:?}",
        graphs.keys().collect::<Vec<_>>()
    );
    let mut circles = Vec::new();
    for (folder, g) in &graphs {
        // Every circle: name one, set aside its closing edge, look again.
        let mut g = g.clone();
        while let Some(circle) = find_circle(&g) {
            let (last, first) = (&circle[circle.len() - 2], &circle[circle.len() - 1]);
            let files = g
                .get_mut(last.as_str())
                .unwrap()
                .remove(first.as_str())
                .unwrap();
            let why: Vec<String> = circle
                .windows(2)
                .map(|w| {
                    let files = g[&w[0]].get(&w[1]).unwrap_or(&files);
                    format!("{} → {} in {files:?}", w[0], w[1])
                })
                .collect();
            circles.push(format!(
                "src/{folder}/: {}\n    {}",
                circle.join(" → "),
                why.join("\n    ")
            ));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles inside folders:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_circles_and_only_circles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeMap<String, ()>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string())
                .or_default()
                .insert(b.to_string(), ());
        }
        g
    };
    // A diamond and a chain: no circle.
    assert_eq!(
        find_circle(&graph(&[
            ("a", "b"),
            ("a", "c"),
            ("b", "d"),
            ("c", "d"),
            ("d", "e")
        ])),
        None
    );
    // A circle of three behind a tail, named in order and closed.
    let c = find_circle(&graph(&[("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")])).unwrap();
    assert_eq!(c, ["b", "c", "d", "b"]);
    // Two files importing each other.
    let c = find_circle(&graph(&[("span", "spec"), ("spec", "span")])).unwrap();
    assert_eq!(c, ["span", "spec", "span"]);
    // A file importing itself is a circle too.
    assert_eq!(find_circle(&graph(&[("x", "x")])).unwrap(), ["x", "x"]);
}

#[test]
fn the_folder_reader_follows_paths_and_fronts() {
    let code = "use super::{spec::RunConfig, Event as E, redo};\npub use self::a::B;\n\
                use crate::workload::span::Span;\nfn f() { super::think(); x::y(); child::f(); }";
    let uses: Vec<(bool, String, String)> = use_paths(code)
        .into_iter()
        .map(|(p, path, n)| (p, path.join("::"), n))
        .collect();
    assert_eq!(
        uses,
        [
            (false, "super::spec::RunConfig".into(), "RunConfig".into()),
            (false, "super::Event".into(), "E".into()),
            (false, "super::redo".into(), "redo".into()),
            (true, "self::a::B".into(), "B".into()),
            (false, "crate::workload::span::Span".into(), "Span".into()),
        ]
    );
    let body = without_uses(code);
    assert!(!body.contains("use "), "{body}");
    let kids: BTreeSet<String> = ["child".to_string()].into();
    let paths: Vec<String> = code_paths(&body, &kids)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(paths, ["super::think", "child::f"]);
    let at = ["workload".to_string(), "span".to_string()];
    let abs = absolute(
        &["super".into(), "spec".into(), "RunConfig".into()],
        &at,
        &kids,
    )
    .unwrap();
    assert_eq!(abs, ["workload", "spec", "RunConfig"]);
    assert_eq!(
        test_modules("#[cfg(test)]\nmod tests;\n#[cfg(test)]\npub(crate) mod fixture;"),
        ["fixture".to_string(), "tests".to_string()].into()
    );
}

/// A file does one job: none of `src/` is over 1,000 lines (split it by job, as
/// `dataset/`, `run/` and `options/table/` are).
#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 1000).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "over 1,000 lines: {long:?}");
}

/// Every function of `code` (its `fn` lines to the closing brace at the same indent):
/// (name, first line, lines).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = l.len() - t.len();
        let after_fn = [
            "pub fn ",
            "fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p));
        let Some(rest) = after_fn else { continue };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // A declaration without a body (a trait's) ends with `;` before any `{`.
        let closing = " ".repeat(indent) + "}";
        let end = lines[i..]
            .iter()
            .position(|m| m.trim_end() == closing)
            .map(|k| i + k);
        let body_starts = lines[i..]
            .iter()
            .position(|m| m.trim_end().ends_with('{') || m.trim_end().ends_with(';'))
            .map(|k| i + k);
        if let (Some(end), Some(b)) = (end, body_starts)
            && lines[b].trim_end().ends_with('{')
        {
            out.push((name, i + 1, end - i + 1));
        }
    }
    out
}

#[test]
fn no_function_of_the_database_code_is_over_150_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/database");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 5, "{files:?}");
    let mut long = Vec::new();
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (name, line, n) in functions(&text) {
            seen += 1;
            if n > 150 {
                long.push(format!("{}:{line} {name}: {n} lines", f.display()));
            }
        }
    }
    assert!(seen > 50, "only {seen} functions found: the scan is broken");
    assert!(long.is_empty(), "over 150 lines: {long:#?}");
}

#[test]
fn the_function_scan_measures_what_it_finds() {
    let code = "fn a() {\n    x();\n}\n\nimpl T {\n    pub fn b(\n        y: u8,\n    ) -> u8 {\n        y\n    }\n    fn c();\n}\n";
    let f = functions(code);
    assert_eq!(f, vec![("a".into(), 1, 3), ("b".into(), 6, 5)], "{f:?}");
}

#[test]
fn one_measured_window_loop() {
    // The per-second history of a measured window (measure::Sampler) is kept by one loop:
    // run/window.rs, for `dbio run` and a test through a database alike.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut users = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        if !rel.starts_with("measure/") && code.contains("Sampler::new(") {
            users.push(rel);
        }
    }
    assert_eq!(users, vec!["run/window.rs".to_string()]);
}
