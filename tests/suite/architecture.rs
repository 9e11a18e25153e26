//! The crate's layers, checked: every `crate::…` and `super::…` path of every file under
//! `src/` (tests included) is an edge from the file's module to the module it names. Between
//! top-level modules the edges must follow [`LAYERS`] downwards (or stay within a layer),
//! form no cycle, and break none of the [`NEVER`] rules; a new top-level module must be
//! placed in [`LAYERS`]. Inside a module, its files (sibling modules) must not form a cycle
//! either: a helper two of them share goes to a third file or to the parent.
//!
//! The scan is lexical: comments, strings and character literals are skipped; `use` groups
//! (`crate::{a::X, b::{c, d}}`) are expanded; inline `mod name { … }` blocks and `#[path]`
//! files are followed so `super::` resolves to the right module; a call to a
//! `#[macro_export]` macro (`crate::errln!`) is an edge to the module that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the top (the face) to the bottom (leaves). A module may use the
/// modules of its own layer and of every layer below it, never one above.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "face",
        &[
            "run",
            "commands",
            "cli",
            "repl",
            "oneshot",
            "ui",
            "task_input",
            "exit",
        ],
    ),
    ("agent loop", &["agent"]),
    (
        "context, governance, session, MCP servers, checkpoints",
        &["context", "governance", "session", "mcp", "checkpoints"],
    ),
    ("events the face is told", &["events"]),
    ("tools", &["tools"]),
    (
        "permissions, sandbox, model",
        &["permissions", "sandbox", "model"],
    ),
    ("config", &["config"]),
    ("leaves", &["cancel", "clock", "visible"]),
];

/// Edges that must never exist, whatever the layers say (SPEC's "nevers"): the rule engine,
/// the tools, the sandbox and the model client know nothing of the terminal or exit codes,
/// and neither does the loop.
const NEVER: &[(&[&str], &[&str], &str)] = &[
    (
        &["permissions", "tools", "sandbox", "model"],
        &["cli", "ui", "exit"],
        "permissions, tools, sandbox and model import nothing from cli, ui or exit",
    ),
    (
        &["agent"],
        &["cli", "ui", "exit", "repl", "oneshot"],
        "the loop knows no terminal",
    ),
];

#[test]
fn top_level_modules_depend_downwards_without_cycles() {
    let graph = Graph::scan(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let rank = layer_ranks();
    let mut problems = Vec::new();
    let top = graph.children(&[]);
    for module in &top.modules {
        if !rank.contains_key(module.as_str()) {
            problems.push(format!(
                "module `{module}` is not in the layer order; add it to LAYERS in {}",
                file!()
            ));
        }
    }
    for ((from, to), files) in &top.edges {
        let (Some(&a), Some(&b)) = (rank.get(from.as_str()), rank.get(to.as_str())) else {
            continue;
        };
        if b < a {
            problems.push(format!(
                "`{from}` ({}) uses `{to}` ({}), a layer above it, in {}",
                LAYERS[a].0,
                LAYERS[b].0,
                files.join(", ")
            ));
        }
        for (sources, targets, rule) in NEVER {
            if sources.contains(&from.as_str()) && targets.contains(&to.as_str()) {
                problems.push(format!(
                    "`{from}` uses `{to}` in {}: {rule}",
                    files.join(", ")
                ));
            }
        }
    }
    for (parent, level) in &graph.levels {
        for cycle in level.cycles() {
            let within = if parent.is_empty() {
                "top-level modules".to_string()
            } else {
                format!("the files of `{}`", parent.join("::"))
            };
            problems.push(format!("cycle between {within}: {}", cycle.join(" → ")));
        }
    }
    assert!(
        problems.is_empty(),
        "the module layers are broken:\n  {}",
        problems.join("\n  ")
    );
}

/// Crates of the terminal and the command line, which only the face may use: below it the
/// loop, the tools, the rule engine, the sandbox and the model know no terminal (printing
/// is denied crate-wide by `clippy::print_stdout`/`print_stderr` in src/lib.rs).
const FACE_CRATES: &[&str] = &["crossterm", "rustyline", "clap", "clap_complete"];

#[test]
fn only_the_face_uses_terminal_crates() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let face = LAYERS[0].1;
    let mut files = Vec::new();
    collect(&src, &mut files);
    let mut problems = Vec::new();
    for file in files {
        let module = path_module(&src, &file);
        let Some(top) = module.first() else { continue };
        if face.contains(&top.as_str()) {
            continue;
        }
        let text = strip(&std::fs::read_to_string(&file).unwrap_or_default());
        for name in FACE_CRATES {
            if uses_crate(&text, name) {
                problems.push(format!(
                    "{} uses `{name}`, a crate of the face",
                    file.strip_prefix(&src).unwrap_or(&file).display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "below the face:\n  {}",
        problems.join("\n  ")
    );
    assert!(uses_crate("use crossterm::style;", "crossterm"));
    assert!(uses_crate("fn f() { ::clap::Parser::parse(); }", "clap"));
    assert!(!uses_crate(
        "use my_crossterm::x; let clap = 1;",
        "crossterm"
    ));
    assert!(!uses_crate("let clap = 1;", "clap"));
}

/// Whether `text` names the crate `name` in a path (`name::…`).
fn uses_crate(text: &str, name: &str) -> bool {
    let pattern = format!("{name}::");
    text.match_indices(&pattern).any(|(at, _)| {
        text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// The checker itself finds what it must: grouped imports, `super::` escaping the module,
/// macros, sibling edges, and no edges from comments or strings.
#[test]
fn the_scanner_reads_paths_groups_super_and_macros() {
    let text = r#"
        use crate::{agent::Agent, tools::{Registry, dispatch::{self, Dispatcher}}};
        // use crate::ui::nothing;
        /* crate::cli::Nothing */
        const S: &str = "crate::exit::Exit";
        fn f() { crate::errln!("x"); let c = '"'; crate::model::call(); }
        use super::policy::Policy;
        mod tests { use super::super::super::config::Config; }
    "#;
    let macros: BTreeMap<String, String> = [("errln".to_string(), "ui".to_string())].into();
    let module = ["sandbox".to_string(), "helper".to_string()];
    let found: BTreeSet<Vec<String>> = paths(&strip(text), &module, &macros).into_iter().collect();
    let expected: BTreeSet<Vec<String>> = [
        vec!["agent", "Agent"],
        vec!["tools", "Registry"],
        vec!["tools", "dispatch"],
        vec!["tools", "dispatch", "Dispatcher"],
        vec!["ui"],
        vec!["model", "call"],
        vec!["sandbox", "policy", "Policy"],
        vec!["config", "Config"],
    ]
    .iter()
    .map(|p| p.iter().map(|s| s.to_string()).collect())
    .collect();
    assert_eq!(found, expected);

    let mut level = Level::default();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        level.modules.insert(a.to_string());
        level
            .edges
            .insert((a.to_string(), b.to_string()), vec!["x.rs".to_string()]);
    }
    assert_eq!(level.cycles(), vec![vec!["a", "b", "c", "a"]]);
}

fn layer_ranks() -> BTreeMap<&'static str, usize> {
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(rank, (_, modules))| modules.iter().map(move |m| (*m, rank)))
        .collect()
}

/// The edges between the children of one module.
#[derive(Default)]
struct Level {
    modules: BTreeSet<String>,
    /// `(from, to)` → the files (relative to `src/`) where the edge is.
    edges: BTreeMap<(String, String), Vec<String>>,
}

/// The edges of the crate, by the module whose children they join (`[]`: the top level).
#[derive(Default)]
struct Graph {
    levels: BTreeMap<Vec<String>, Level>,
}

impl Graph {
    fn scan(src: &Path) -> Self {
        let mut files = Vec::new();
        collect(src, &mut files);
        files.sort();
        let texts: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).unwrap_or_default();
                (f, strip(&text))
            })
            .collect();
        let mut module_of: BTreeMap<PathBuf, Vec<String>> = texts
            .iter()
            .map(|(f, _)| (f.clone(), path_module(src, f)))
            .collect();
        let mut macros = BTreeMap::new();
        for (file, text) in &texts {
            let module = module_of[file].clone();
            for (target, name) in path_attributes(text) {
                let dir = file.parent().unwrap_or(src);
                let mut inner = module.clone();
                inner.push(name);
                module_of.insert(dir.join(target), inner);
            }
            if let Some(top) = module.first() {
                for name in exported_macros(text) {
                    macros.insert(name, top.clone());
                }
            }
        }
        let known: BTreeSet<Vec<String>> = module_of.values().cloned().collect();
        let mut graph = Graph::default();
        for (file, text) in &texts {
            let module = &module_of[file];
            if module.is_empty() {
                continue; // lib.rs and main.rs: the root may use anything
            }
            let shown = file.strip_prefix(src).unwrap_or(file).display().to_string();
            graph.level(&[]).modules.insert(module[0].clone());
            for target in paths(text, module, &macros) {
                let target = longest_known(&target, &known);
                let common = module
                    .iter()
                    .zip(&target)
                    .take_while(|(a, b)| a == b)
                    .count();
                if common < module.len() && common < target.len() {
                    let level = graph.level(&module[..common]);
                    level.modules.insert(module[common].clone());
                    let files = level
                        .edges
                        .entry((module[common].clone(), target[common].clone()))
                        .or_default();
                    if !files.contains(&shown) {
                        files.push(shown.clone());
                    }
                }
            }
        }
        graph
    }

    fn level(&mut self, parent: &[String]) -> &mut Level {
        self.levels.entry(parent.to_vec()).or_default()
    }

    fn children(&self, parent: &[String]) -> &Level {
        static EMPTY: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
        self.levels
            .get(parent)
            .unwrap_or_else(|| EMPTY.get_or_init(Level::default))
    }
}

/// The longest start of `path` that is a module of the crate (`tools::files::str_arg` →
/// `tools::files`); the first segment when none is (a macro, an item of the root).
fn longest_known(path: &[String], known: &BTreeSet<Vec<String>>) -> Vec<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| known.contains(prefix))
        .unwrap_or_else(|| path.iter().take(1).cloned().collect())
}

impl Level {
    /// One cycle for each group of modules that can reach each other (a strongly connected
    /// component of more than one module).
    fn cycles(&self) -> Vec<Vec<String>> {
        let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (from, to) in self.edges.keys() {
            next.entry(from.as_str()).or_default().push(to.as_str());
        }
        let reach = |from: &str| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from];
            while let Some(m) = stack.pop() {
                for &to in next.get(m).map(Vec::as_slice).unwrap_or(&[]) {
                    if seen.insert(to) {
                        stack.push(to);
                    }
                }
            }
            seen
        };
        let reachable: BTreeMap<&str, BTreeSet<&str>> =
            next.keys().map(|m| (*m, reach(m))).collect();
        let mut reported = BTreeSet::new();
        let mut found = Vec::new();
        for (&start, from_start) in &reachable {
            if reported.contains(start) || !from_start.contains(start) {
                continue;
            }
            let group: BTreeSet<&str> = from_start
                .iter()
                .copied()
                .filter(|m| reachable.get(m).is_some_and(|r| r.contains(start)))
                .collect();
            reported.extend(group.iter().copied());
            found.push(shortest_cycle(&next, start, &group));
        }
        found
    }
}

/// The shortest path from `start` back to itself inside `group` (breadth first).
fn shortest_cycle(
    next: &BTreeMap<&str, Vec<&str>>,
    start: &str,
    group: &BTreeSet<&str>,
) -> Vec<String> {
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(m) = queue.pop_front() {
        for &to in next.get(m).map(Vec::as_slice).unwrap_or(&[]) {
            if to == start {
                let mut cycle = vec![start.to_string()];
                let mut at = m;
                while at != start {
                    cycle.push(at.to_string());
                    at = parent[at];
                }
                cycle.push(start.to_string());
                cycle.reverse();
                return cycle;
            }
            if group.contains(to) && !parent.contains_key(to) {
                parent.insert(to, m);
                queue.push_back(to);
            }
        }
    }
    vec![start.to_string()]
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// `src/a/b.rs` → `[a, b]`; `src/a/mod.rs` → `[a]`; `src/lib.rs` → `[]`.
fn path_module(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    parts
}

/// `#[path = "x.rs"] mod name;` declarations: `(x.rs, name)`.
fn path_attributes(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[path") {
        rest = &rest[at + 6..];
        let Some(end) = rest.find(']') else { break };
        let target = rest[..end]
            .split('"')
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let after = rest[end + 1..].trim_start();
        let after = after.strip_prefix("pub ").unwrap_or(after).trim_start();
        if let Some(decl) = after.strip_prefix("mod ") {
            found.push((target, ident(decl.trim_start()).to_string()));
        }
    }
    found
}

fn exported_macros(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[macro_export]") {
        rest = &rest[at..];
        if let Some(def) = rest.find("macro_rules!") {
            found.push(ident(rest[def + 12..].trim_start()).to_string());
            rest = &rest[def..];
        } else {
            break;
        }
    }
    found
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The absolute paths that `text` (already [`strip`]ped; the file of module `module`) names
/// with `crate::` or `super::`; a `#[macro_export]` macro is its module's path.
fn paths(text: &str, module: &[String], macros: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    // Inline `mod x {` blocks open, with the brace depth they opened at.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !is_ident_byte(bytes[i - 1]) && bytes[i - 1] != b':';
        let rest = &text[i..];
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
            }
            _ if at_word && rest.starts_with("mod ") => {
                let name_start = rest[4..].trim_start();
                let name = ident(name_start);
                let after = name_start[name.len()..].trim_start();
                if !name.is_empty() && after.starts_with('{') {
                    inline.push((depth, name.to_string()));
                }
            }
            _ if at_word && (rest.starts_with("crate::") || rest.starts_with("$crate::")) => {
                let skip = if rest.starts_with('$') { 8 } else { 7 };
                for path in use_tree(&rest[skip..]) {
                    match path.first().and_then(|first| macros.get(first)) {
                        Some(owner) if path.len() == 1 => found.push(vec![owner.clone()]),
                        _ => found.push(path),
                    }
                }
                i += skip;
                continue;
            }
            _ if at_word && rest.starts_with("super::") => {
                let mut here: Vec<String> = module.to_vec();
                here.extend(inline.iter().map(|(_, name)| name.clone()));
                let mut tail = rest;
                while let Some(next) = tail.strip_prefix("super::") {
                    here.pop();
                    tail = next.trim_start();
                }
                for path in use_tree(tail) {
                    let mut full = here.clone();
                    full.extend(path);
                    found.push(full);
                }
                i += rest.len() - tail.len();
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found.retain(|p| !p.is_empty());
    found
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths a use tree (or an expression path) names: `a::b::C` → `[a, b, C]`;
/// `a::{B, c::{D, self}}` → `[a, B]`, `[a, c, D]`, `[a, c]`.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    let mut segments: Vec<String> = Vec::new();
    let mut rest = text.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut found = Vec::new();
            for item in split_group(group) {
                for mut path in use_tree(item) {
                    if path.first().is_some_and(|s| s == "self") {
                        path.remove(0);
                    }
                    let mut full = segments.clone();
                    full.extend(path);
                    found.push(full);
                }
            }
            return found;
        }
        let name = ident(rest);
        if name.is_empty() {
            break;
        }
        segments.push(name.to_string());
        let after = rest[name.len()..].trim_start();
        match after.strip_prefix("::") {
            Some(next) => rest = next.trim_start(),
            None => break,
        }
    }
    if segments.is_empty() {
        Vec::new()
    } else {
        vec![segments]
    }
}

/// The comma-separated items of a `{...}` group, up to its closing brace.
fn split_group(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// `text` with comments removed and string and character literals emptied.
fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r'))
            && !prev_ident
            && matches!(at(i + 1 + usize::from(c == 'b')), '"' | '#')
        {
            let mut j = i + 1 + usize::from(c == 'b');
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (at(i + 2) == '\'' || (at(i + 1) == '\\' && !prev_ident)) {
            // A character literal ('x', '\n', '\u{1F600}'); a lifetime has no closing quote.
            let mut j = i + 1;
            if at(j) == '\\' {
                j += 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
            } else {
                j += 1;
            }
            i = j + 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}
