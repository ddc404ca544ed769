//! A test that cannot run must say so, and must fail in CI: every early return of a test for
//! a missing precondition goes through `util::skip`, which counts it, prints it where libtest
//! does not hide it, and panics under `DBIO_TESTS_STRICT=1`. This reads the test sources, as
//! a reviewer would, and runs this test binary to see `skip` behave.

use std::collections::BTreeSet;
use std::path::Path;

/// `text` with comments removed and the insides of string and char literals blanked (quotes
/// kept), so braces and words in them do not count; lines stay where they were.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: u8| if c == b'\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                out.push(blank(b[i]));
                i += 1;
            }
            i += 2;
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            out.push_str("r\"");
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                out.push(blank(b[j]));
                j += 1;
            }
            out.push('"');
            i = j + close.len();
        } else if c == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '{'); a lifetime ('a) is left alone.
            let end = if b.get(i + 1) == Some(&b'\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == b'\'')
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match end {
                Some(e) => {
                    out.push_str("' '");
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The index of the brace closing the one at `open`.
fn closing(code: &str, open: usize) -> usize {
    let mut depth = 0;
    for (k, c) in code.bytes().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Where word `w` stands in `code` (not part of a longer identifier).
fn words<'a>(code: &'a str, w: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(w).map(|(k, _)| k).filter(move |&k| {
        let b = code.as_bytes();
        (k == 0 || !is_ident(b[k - 1])) && b.get(k + w.len()).is_none_or(|&c| !is_ident(c))
    })
}

/// A function of the test sources: `Type::name` inside an impl, else `name`.
struct Function {
    name: String,
    file: String,
    line: usize,
    is_test: bool,
    body: String,
}

fn functions(file: &str, code: &str) -> Vec<Function> {
    // The impl blocks: their span and their type.
    let mut impls = Vec::new();
    for k in words(code, "impl") {
        let line_start = code[..k].rfind('\n').map_or(0, |p| p + 1);
        if !code[line_start..k].trim().is_empty() {
            continue; // `-> impl Trait`, not an impl block
        }
        let Some(open) = code[k..].find('{').map(|o| k + o) else {
            continue;
        };
        let header = &code[k + 4..open];
        let ty = header.rsplit(" for ").next().unwrap_or(header);
        let ty = ty.split('<').next().unwrap_or(ty).trim();
        let ty = ty.rsplit("::").next().unwrap_or(ty).to_string();
        impls.push((open, closing(code, open), ty));
    }
    let mut out = Vec::new();
    for k in words(code, "fn") {
        let rest = &code[k + 2..];
        let name: String = rest
            .trim_start()
            .bytes()
            .take_while(|&c| is_ident(c))
            .map(char::from)
            .collect();
        let Some(open) = rest.find(['{', ';']).map(|o| k + 2 + o) else {
            continue;
        };
        if name.is_empty() || code.as_bytes()[open] == b';' {
            continue;
        }
        let body = code[open..=closing(code, open).min(code.len() - 1)].to_string();
        let item_start = code[..k].rfind(['}', ';']).map_or(0, |p| p + 1);
        let is_test = code[item_start..k].contains("#[test]");
        let owner = impls
            .iter()
            .filter(|(o, c, _)| *o < k && k < *c)
            .max_by_key(|(o, _, _)| *o);
        let name = match owner {
            Some((_, _, ty)) => format!("{ty}::{name}"),
            None => name,
        };
        let line = code[..k].matches('\n').count() + 1;
        out.push(Function {
            name,
            file: file.to_string(),
            line,
            is_test,
            body,
        });
    }
    out
}

/// Whether `code` calls function `name` (`Type::name(...)`, or `name(...)` possibly through
/// a module path, never `.name(...)`).
fn calls(code: &str, name: &str) -> bool {
    let b = code.as_bytes();
    code.match_indices(name).any(|(k, _)| {
        let after = code[k + name.len()..].trim_start();
        if !after.starts_with('(') {
            return false;
        }
        if k > 0 && (is_ident(b[k - 1]) || b[k - 1] == b'.') {
            return false;
        }
        if k >= 2 && &code[k - 2..k] == "::" {
            if name.contains("::") {
                return true;
            }
            // A free function reached through a module path (`crate::util::shm_dir`), not a
            // method of a type (`Env::new`).
            let seg: String = code[..k - 2]
                .bytes()
                .rev()
                .take_while(|&c| is_ident(c))
                .map(char::from)
                .collect();
            return seg.chars().last().is_some_and(|c| c.is_ascii_lowercase());
        }
        true
    })
}

/// The functions that reach `skip`: `skip` itself and every function calling one of them.
fn skipping(all: &[Function]) -> BTreeSet<String> {
    let mut s: BTreeSet<String> = ["skip".to_string()].into();
    loop {
        let more: Vec<String> = all
            .iter()
            .filter(|f| !s.contains(&f.name) && s.iter().any(|n| calls(&f.body, n)))
            .map(|f| f.name.clone())
            .collect();
        if more.is_empty() {
            return s;
        }
        s.extend(more);
    }
}

/// The early returns of test functions that do not go through `skip`: each bare `return`
/// must be `return skip(..)`, follow a `skip(..);` statement, or end a statement that calls
/// a function reaching `skip` (`let Some(d) = shm_dir() else { return };`).
fn unannounced_returns(all: &[Function]) -> Vec<String> {
    let skippers = skipping(all);
    let mut bad = Vec::new();
    for f in all.iter().filter(|f| f.is_test) {
        for k in words(&f.body, "return") {
            let after = f.body[k + 6..].trim_start();
            if !after.starts_with([';', '}', ',']) {
                continue;
            }
            let before = &f.body[..k];
            let mut statements = before.rsplit(';');
            let current = statements.next().unwrap_or("");
            let previous = statements.next().unwrap_or("");
            let announced = skippers.iter().any(|n| calls(current, n))
                || (current.trim().is_empty() && calls(previous, "skip"));
            if !announced {
                let line = f.line + before.matches('\n').count();
                bad.push(format!("{}:{line} in {}", f.file, f.name));
            }
        }
    }
    bad
}

fn test_sources() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

fn all_functions(sources: &[(String, String)]) -> Vec<Function> {
    sources
        .iter()
        .flat_map(|(name, text)| functions(name, &code_only(text)))
        .collect()
}

#[test]
fn every_early_return_of_a_test_goes_through_skip() {
    let sources = test_sources();
    let all = all_functions(&sources);
    assert!(
        all.iter().filter(|f| f.is_test).count() > 150,
        "the scan finds the tests"
    );
    let skippers = skipping(&all);
    for helper in [
        "shm_dir",
        "Loop::new",
        "Loop::with",
        "Loop::blank",
        "Mount::new",
    ] {
        assert!(skippers.contains(helper), "{helper} must reach skip");
    }
    let bad = unannounced_returns(&all);
    assert!(
        bad.is_empty(),
        "tests returning early without util::skip (a test that cannot run must say so, and \
         fail under DBIO_TESTS_STRICT=1): {bad:#?}"
    );
}

#[test]
fn no_test_prints_its_own_skip_message() {
    let mut bad = Vec::new();
    for (name, text) in test_sources() {
        if name == "util.rs" {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let l = line.to_lowercase();
            let prints = ["eprintln!(", "println!(", "eprint!(", "print!("]
                .iter()
                .any(|m| l.contains(m));
            if prints && l.contains("skip") {
                bad.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "use util::skip instead: {bad:#?}");
}

/// The rule itself, on made-up sources: what it lets through and what it catches.
#[test]
fn the_scan_catches_a_silent_return_and_accepts_announced_ones() {
    let src = r#"
fn helper() -> Option<u32> {
    if std::env::var("X").is_err() {
        skip("no X");
        return None;
    }
    Some(1)
}
struct Dev;
impl Dev {
    fn new() -> Option<Dev> { let _ = helper()?; Some(Dev) }
}
#[test]
fn good() {
    let Some(x) = helper() else { return };
    let Some(d) = Dev::new() else {
        return;
    };
    if !is_root() {
        skip("needs root; really");
        return;
    }
    if x > 1 {
        return skip("big");
    }
    let s = "return; in a string";
    let c = '{';
}
#[test]
fn silent() {
    if !is_root() {
        eprintln!("needs root");
        return;
    }
}
#[test]
fn returns_after_the_work() {
    assert!(true);
    return;
}
#[test]
fn a_method_named_like_a_helper_is_not_it() {
    let Some(v) = things.helper() else { return };
}
"#;
    let all = all_functions(&[("made_up.rs".into(), src.into())]);
    let s = skipping(&all);
    assert!(s.contains("helper") && s.contains("Dev::new"), "{s:?}");
    let bad = unannounced_returns(&all);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].contains("in silent"), "{bad:?}");
    assert!(bad[1].contains("in returns_after_the_work"), "{bad:?}");
    assert!(
        bad[2].contains("in a_method_named_like_a_helper_is_not_it"),
        "{bad:?}"
    );
}

/// `skip` panics under `DBIO_TESTS_STRICT=1`, and otherwise counts and prints the skip on
/// stderr even though libtest captures the test's output. The test runs itself again in a
/// child process (this test binary, this test alone) with `DBIO_SKIP_PROBE` set, where it
/// is the probe: it skips for a made-up missing precondition.
#[test]
fn skip_behaves_as_documented() {
    if std::env::var_os("DBIO_SKIP_PROBE").is_some() {
        return crate::util::skip("the probe's precondition");
    }
    let run = |strict: Option<&str>| {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args(["--exact", "skips::skip_behaves_as_documented"])
            .env("DBIO_SKIP_PROBE", "1");
        match strict {
            Some(v) => c.env("DBIO_TESTS_STRICT", v),
            None => c.env_remove("DBIO_TESTS_STRICT"),
        };
        let out = c.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, stdout, stderr) = run(None);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stderr.contains("skipped (1 so far): ") && stderr.contains(": the probe's precondition"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = run(Some("1"));
    assert!(
        !ok,
        "a skip under DBIO_TESTS_STRICT=1 fails: {stdout}{stderr}"
    );
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains("precondition missing: the probe's precondition (DBIO_TESTS_STRICT=1)"),
        "{all}"
    );
    let (ok, _, stderr) = run(Some("0"));
    assert!(ok && stderr.contains("skipped (1 so far)"), "{stderr}");
}
