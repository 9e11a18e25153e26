//! Words and expressions: quote removal, substitutions, parameter expansions, arithmetic.
//!
//! Substitution bodies are walked as statements wherever they appear (arguments, double
//! quotes, assignment values, redirection targets, heredoc bodies, case patterns). Bash
//! evaluates arithmetic recursively on variable values, and an array index inside such a value
//! can run a command substitution (`x='a[$(cmd)]'; echo $((x))`), so arithmetic that involves
//! anything but number literals is at least `ask`; so are indirect (`${!x}`) and transforming
//! (`${x@P}`) expansions.

use tree_sitter::Node;

use super::Stdin;
use super::walk::{ARITHMETIC_HAZARD, EXPRESSION_KINDS, Walker};
use super::words::{Segment, Word, WordBuilder, decode_ansi_c, unescape_double_quoted};

/// Node kinds that make arithmetic depend on values we cannot see.
const ARITHMETIC_UNSAFE: &[&str] = &[
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "simple_expansion",
    "expansion",
    "variable_name",
    "subscript",
    "command_substitution",
    "word",
    "concatenation",
];

impl Walker<'_, '_> {
    /// Evaluates a word node (walking any substitutions in it).
    pub(super) fn word(&mut self, node: Node<'_>) -> Word {
        let mut builder = WordBuilder::default();
        self.segments(node, &mut builder, false);
        builder.finish()
    }

    fn segments(&mut self, node: Node<'_>, b: &mut WordBuilder, quoted: bool) {
        let text = self.text(node);
        match node.kind() {
            "word" | "command_name" if node.named_child_count() == 0 => b.unquoted(text),
            "raw_string" => b.literal(strip(text, "'", "'"), true),
            "string" => self.string_segments(node, b),
            "string_content" => b.literal(&unescape_double_quoted(text), true),
            "ansi_c_string" => match decode_ansi_c(strip(text, "$'", "'")) {
                Some(decoded) => b.literal(&decoded, true),
                None => b.push(Segment::Dynamic {
                    source: text.to_string(),
                    quoted: true,
                }),
            },
            "translated_string" => {
                let mut cursor = node.walk();
                let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in kids {
                    self.segments(child, b, true);
                }
            }
            "concatenation" | "command_name" => {
                self.spans(node, b, quoted, |w, child, b| w.segments(child, b, quoted));
            }
            "number" if node.named_child_count() == 0 => b.unquoted(text),
            "simple_expansion" | "expansion" if variable_name(text).is_some() => {
                b.push(Segment::Var {
                    name: variable_name(text).unwrap_or_default().to_string(),
                    source: text.to_string(),
                    quoted,
                });
            }
            "command_substitution" => {
                self.substitution(node);
                match self.echo_output(node) {
                    Some(out)
                        if quoted
                            || !out.contains(|c: char| c.is_whitespace() || "*?[".contains(c)) =>
                    {
                        b.literal(&out, true);
                    }
                    _ => b.push(Segment::Dynamic {
                        source: text.to_string(),
                        quoted,
                    }),
                }
            }
            "process_substitution" => {
                self.substitution(node);
                b.push(Segment::Pipe {
                    source: text.to_string(),
                });
            }
            "brace_expression" => b.literal(text, quoted),
            _ => {
                self.expression(node);
                b.push(Segment::Dynamic {
                    source: text.to_string(),
                    quoted,
                });
            }
        }
    }

    /// `"..."`: content between the quotes; text the tree does not cover is literal.
    fn string_segments(&mut self, node: Node<'_>, b: &mut WordBuilder) {
        let range = node.byte_range();
        let inner = (range.start + 1)..range.end.saturating_sub(1).max(range.start + 1);
        let mut pos = inner.start;
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in kids {
            let r = child.byte_range();
            if r.start < inner.start || r.end > inner.end {
                continue;
            }
            if r.start > pos {
                let gap = self.src.get(pos..r.start).unwrap_or("");
                b.literal(&unescape_double_quoted(gap), true);
            }
            if child.is_named() {
                self.segments(child, b, true);
            } else {
                b.literal(self.text(child), true);
            }
            pos = pos.max(r.end);
        }
        if inner.end > pos {
            let gap = self.src.get(pos..inner.end).unwrap_or("");
            b.literal(&unescape_double_quoted(gap), true);
        }
    }

    /// Children of a concatenation-like node in order, with uncovered text as literal.
    fn spans(
        &mut self,
        node: Node<'_>,
        b: &mut WordBuilder,
        quoted: bool,
        mut each: impl FnMut(&mut Self, Node<'_>, &mut WordBuilder),
    ) {
        let mut pos = node.start_byte();
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in kids {
            if child.start_byte() > pos {
                let gap = self.src.get(pos..child.start_byte()).unwrap_or("");
                add_text(b, gap, quoted);
            }
            if child.is_named() {
                each(self, child, b);
            } else {
                add_text(b, self.text(child), quoted);
            }
            pos = pos.max(child.end_byte());
        }
        if node.end_byte() > pos {
            add_text(b, self.src.get(pos..node.end_byte()).unwrap_or(""), quoted);
        }
    }

    /// Walks an expression for substitutions and unsafe expansions.
    pub(super) fn expression(&mut self, node: Node<'_>) {
        match node.kind() {
            "command_substitution" | "process_substitution" => self.substitution(node),
            "arithmetic_expansion" => self.arithmetic(node),
            "expansion" => self.expansion(node),
            "subscript" => self.subscript(node),
            kind if EXPRESSION_KINDS.contains(&kind) => {
                let mut cursor = node.walk();
                let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in kids {
                    self.expression(child);
                }
            }
            _ => self.node(node, &Stdin::Unknown),
        }
    }

    /// `$(...)`, backticks, `<(...)`, `>(...)`: the body is a script of its own.
    pub(super) fn substitution(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in kids {
            if child.kind() == "file_redirect" {
                let redirects = self.redirect(child);
                self.push(super::SimpleCommand {
                    words: Vec::new(),
                    redirects,
                    floors: Vec::new(),
                    role: super::Role::Neutral("reads a file into the command line".into()),
                    deny_aliases: Vec::new(),
                    feeds: false,
                });
            } else {
                self.feeding(child, &Stdin::Unknown);
            }
        }
    }

    /// `$((...))`, `((...))`: at least `ask` unless only number literals are involved.
    pub(super) fn arithmetic(&mut self, node: Node<'_>) {
        if self.arithmetic_scan(node) {
            self.opaque(node, ARITHMETIC_HAZARD);
        }
    }

    /// Walks substitutions under `node`; true when the arithmetic involves unsafe values.
    pub(super) fn arithmetic_scan(&mut self, node: Node<'_>) -> bool {
        if node.kind() == "command_substitution" {
            self.substitution(node);
            return true;
        }
        let mut unsafe_value = ARITHMETIC_UNSAFE.contains(&node.kind());
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in kids {
            unsafe_value |= self.arithmetic_scan(child);
        }
        unsafe_value
    }

    /// `${...}`: plain, default-value and pattern forms are fine; indirect, transforming,
    /// substring (arithmetic offsets) and computed-index forms are at least `ask`.
    pub(super) fn expansion(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut substring = false;
        for child in kids {
            match (child.is_named(), child.kind()) {
                (false, "!") => self.opaque(
                    node,
                    "an indirect expansion reads a variable named at run time",
                ),
                (false, "@") => self.opaque(node, "`${x@...}` transformations can run commands"),
                (false, ":") => substring = true,
                (true, "subscript") => self.subscript(child),
                (true, "number") if substring => {}
                (true, _) if substring => self.opaque(node, ARITHMETIC_HAZARD),
                (true, _) => self.expression(child),
                _ => {}
            }
        }
    }

    /// `a[index]`: the index of an indexed array is arithmetic.
    pub(super) fn subscript(&mut self, node: Node<'_>) {
        let Some(index) = node.child_by_field_name("index") else {
            return;
        };
        let text = self.text(index);
        let plain = text == "@" || text == "*" || text.chars().all(|c| c.is_ascii_digit());
        if !plain {
            self.arithmetic_scan(index);
            self.opaque(
                node,
                "an array index is evaluated as arithmetic, which can run commands",
            );
        }
    }

    /// `[ ... ]` and `[[ ... ]]`: rated as a neutral part; `[[` arithmetic comparisons and
    /// `-v` on array elements are at least `ask`.
    pub(super) fn test(&mut self, node: Node<'_>) {
        let double = node.child(0).is_some_and(|c| c.kind() == "[[");
        let mut floors = Vec::new();
        self.test_scan(node, double, &mut floors);
        self.emit_neutral(node, "tests a condition", floors);
    }

    fn test_scan(&mut self, node: Node<'_>, double: bool, floors: &mut Vec<String>) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let operator = node
            .child_by_field_name("operator")
            .map(|o| self.text(o))
            .unwrap_or("");
        let arithmetic = double && ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"].contains(&operator);
        for child in kids {
            match child.kind() {
                "binary_expression" | "unary_expression" | "parenthesized_expression" => {
                    self.test_scan(child, double, floors);
                }
                "test_operator" => {}
                "number" if arithmetic => {}
                _ if arithmetic => {
                    self.arithmetic_scan(child);
                    floors.push(ARITHMETIC_HAZARD.to_string());
                }
                _ => {
                    if operator == "-v" && self.text(child).contains('[') {
                        floors.push("`-v` on an array element evaluates its index".into());
                    }
                    self.expression(child);
                }
            }
        }
    }

    /// What `$(echo literal...)` prints, when that is certain (no options but `-n`, no
    /// backslashes, no unquoted `~` or glob): such a substitution is as good as the literal
    /// for rules and paths.
    fn echo_output(&self, node: Node<'_>) -> Option<String> {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let [command] = kids.as_slice() else {
            return None;
        };
        if command.kind() != "command" {
            return None;
        }
        let mut cursor = command.walk();
        let mut words = Vec::new();
        for child in command.named_children(&mut cursor) {
            let target = match child.kind() {
                "command_name" => child.named_child(0)?,
                _ => child,
            };
            // An unquoted `~` or glob is expanded by bash before echo prints it.
            let text = self.text(target);
            if target.kind() == "word" && (text.starts_with('~') || text.contains(['*', '?', '[']))
            {
                return None;
            }
            words.push(self.static_text(target)?);
        }
        let (name, mut args) = words.split_first()?;
        if name != "echo" || args.iter().any(|a| a.contains('\\')) {
            return None;
        }
        if args.first().is_some_and(|a| a == "-n") {
            args = &args[1..];
        }
        if args.first().is_some_and(|a| a.starts_with('-')) {
            return None;
        }
        Some(args.join(" ").trim_end_matches('\n').to_string())
    }

    /// A node's text if it is a literal word (no expansion of any kind); nothing is walked.
    pub(super) fn static_text(&self, node: Node<'_>) -> Option<String> {
        let text = self.text(node);
        match node.kind() {
            "word" | "number" if node.named_child_count() == 0 => {
                let mut b = WordBuilder::default();
                b.unquoted(text);
                let word = b.finish();
                (!word.dynamic).then_some(word.text)
            }
            "raw_string" => Some(strip(text, "'", "'").to_string()),
            "string"
                if node
                    .named_children(&mut node.walk())
                    .all(|c| c.kind() == "string_content") =>
            {
                Some(unescape_double_quoted(strip(text, "\"", "\"")))
            }
            "ansi_c_string" => decode_ansi_c(strip(text, "$'", "'")),
            "concatenation" => {
                let mut cursor = node.walk();
                let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                kids.into_iter().map(|k| self.static_text(k)).collect()
            }
            _ => None,
        }
    }
}

fn add_text(b: &mut WordBuilder, text: &str, quoted: bool) {
    if quoted {
        b.literal(text, true);
    } else {
        b.unquoted(text);
    }
}

/// `NAME` of a plain `$NAME` or `${NAME}`.
fn variable_name(text: &str) -> Option<&str> {
    let name = match text.strip_prefix("${") {
        Some(rest) => rest.strip_suffix('}')?,
        None => text.strip_prefix('$')?,
    };
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(name)
}

/// `text` without `prefix` and `suffix` (each only if present).
pub(super) fn strip<'a>(text: &'a str, prefix: &str, suffix: &str) -> &'a str {
    let text = text.strip_prefix(prefix).unwrap_or(text);
    text.strip_suffix(suffix).unwrap_or(text)
}
