//! The dependency rule (README, Layout): every top-level module of `src/` sits in a layer,
//! and imports only from its own layer or those below, without circles. Mechanisms (engines,
//! measurement, data set, storage map, verify) know nothing of the command line, job files
//! or reports. This reads the sources, as a reviewer would.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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
    ("commands", &["sweep", "sizing", "mem", "doctor", "cluster"]),
    ("front", &["cli", "app"]),
];

/// Imports allowed to run upward, each with its reason (the issue allows at most three).
const UPWARD: &[(&str, &str, &str)] = &[];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments and without its `#[cfg(test)]` tail (tests may reach
/// anywhere).
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
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
        "modules without a layer in tests/layers.rs (and the README's Layout): {unplaced:?}"
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
    let g = graph();
    // Depth-first search; a node met again while on the stack closes a circle.
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
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
        let mut stack = Vec::new();
        if let Some(circle) = visit(m, &g, &mut state, &mut stack) {
            panic!("import circle: {}", circle.join(" → "));
        }
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
