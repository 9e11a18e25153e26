//! The tree walk: statements and control structures.
//!
//! Every named node kind of tree-sitter-bash is either handled here or in the sibling files
//! (`exprs` for words and expansions, `redirects`, `command`); any other kind becomes an
//! [`super::Opaque`] item, so a grammar change can only make the checker stricter.

use tree_sitter::Node;

use super::words::Word;
use super::{Analysis, Item, Role, SimpleCommand, Stdin, names};

/// Why arithmetic over variables or strings is at least `ask`.
pub(crate) const ARITHMETIC_HAZARD: &str =
    "arithmetic on variables or strings can run commands hidden in their values";

/// Walks one parsed script into an [`Analysis`].
pub(crate) struct Walker<'s, 'o> {
    pub(super) src: &'s str,
    /// `bash -c` / `eval` nesting of this script.
    pub(super) depth: usize,
    /// Current syntax nesting.
    nesting: usize,
    /// Enclosing constructs whose output feeds another command (pipe stages, substitutions).
    feeding: usize,
    pub(super) out: &'o mut Analysis,
    /// Heredoc bodies the parser saw masked (see `coverage::misparsed_heredocs`): their
    /// expansions were not parsed.
    pub(super) masked: Vec<std::ops::Range<usize>>,
}

/// Node kinds that only carry words or expressions.
pub(super) const EXPRESSION_KINDS: &[&str] = &[
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "concatenation",
    "number",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "brace_expression",
    "array",
    "regex",
    "extglob_pattern",
    "variable_name",
    "special_variable_name",
    "string_content",
    "binary_expression",
    "unary_expression",
    "ternary_expression",
    "postfix_expression",
    "parenthesized_expression",
    "subscript",
    "test_operator",
    "heredoc_content",
    "file_descriptor",
];

/// The children of `node` with their field names, in order, in one cursor pass (asking
/// each child for its field name separately is quadratic).
pub(super) fn fields<'t>(node: Node<'t>) -> Vec<(Option<&'t str>, Node<'t>)> {
    let mut cursor = node.walk();
    let mut out = Vec::with_capacity(node.child_count() as usize);
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

impl<'s, 'o> Walker<'s, 'o> {
    pub(crate) fn new(src: &'s str, depth: usize, out: &'o mut Analysis) -> Self {
        Self {
            src,
            depth,
            nesting: 0,
            feeding: 0,
            out,
            masked: Vec::new(),
        }
    }

    /// The source text of `node`.
    pub(super) fn text(&self, node: Node<'_>) -> &'s str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    pub(super) fn opaque(&mut self, node: Node<'_>, reason: impl Into<String>) {
        let text = self.text(node);
        self.out.opaque_item(text, reason);
    }

    pub(super) fn emit_neutral(&mut self, node: Node<'_>, what: &str, floors: Vec<String>) {
        self.push(SimpleCommand {
            words: vec![Word::literal(self.text(node))],
            redirects: Vec::new(),
            floors,
            role: Role::Neutral(what.to_string()),
            deny_aliases: Vec::new(),
            feeds: false,
        });
    }

    pub(super) fn push(&mut self, mut command: SimpleCommand) {
        command.feeds = self.feeding > 0;
        self.out.items.push(Item::Command(command));
    }

    /// Whether the node being walked feeds another command.
    pub(super) fn is_feeding(&self) -> bool {
        self.feeding > 0
    }

    /// Walks `node` with its output feeding another command (see [`SimpleCommand::feeds`]).
    pub(super) fn feeding(&mut self, node: Node<'_>, stdin: &Stdin) {
        self.feeding += 1;
        self.node(node, stdin);
        self.feeding -= 1;
    }

    /// Any named node: statements, control structures, words and expressions.
    pub(crate) fn node(&mut self, node: Node<'_>, stdin: &Stdin) {
        if self.nesting >= super::MAX_NESTING {
            self.opaque(node, "the command is nested too deeply to be analysed");
            return;
        }
        self.nesting += 1;
        self.dispatch(node, stdin);
        self.nesting -= 1;
    }

    fn dispatch(&mut self, node: Node<'_>, stdin: &Stdin) {
        match node.kind() {
            "program" | "subshell" | "do_group" | "else_clause" | "elif_clause"
            | "negated_command" | "ERROR" => self.children(node, stdin),
            "list" => self.list(node, stdin),
            "compound_statement" => {
                if node.child(0).is_some_and(|c| c.kind() == "((") {
                    self.arithmetic(node);
                } else {
                    self.children(node, stdin);
                }
            }
            "pipeline" => self.pipeline(node, stdin),
            "command" => self.command(node, Vec::new(), stdin.clone(), Vec::new()),
            "redirected_statement" => self.redirected(node, stdin),
            "if_statement" | "while_statement" | "for_statement" | "case_statement"
            | "case_item" => self.control(node, stdin),
            "c_style_for_statement" => self.c_style_for(node, stdin),
            "function_definition" => self.function(node),
            "variable_assignment" | "variable_assignments" => self.assignments(node),
            "declaration_command" => self.declaration(node),
            "unset_command" => self.unset(node),
            "test_command" => self.test(node),
            "comment" | "heredoc_start" | "heredoc_end" => {}
            kind if EXPRESSION_KINDS.contains(&kind) => self.expression(node),
            kind => self.opaque(node, format!("`{kind}` syntax is not analysed")),
        }
    }

    /// Named children as statements; unnamed tokens are keywords and operators.
    pub(super) fn children(&mut self, node: Node<'_>, stdin: &Stdin) {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in kids {
            self.node(child, stdin);
        }
    }

    /// `a && b || c ; d &`: nested lists are flattened without recursion so long chains do
    /// not count as deep nesting.
    fn list(&mut self, node: Node<'_>, stdin: &Stdin) {
        let mut pending = vec![node];
        let mut parts = Vec::new();
        while let Some(current) = pending.pop() {
            if current.kind() != "list" {
                parts.push(current);
                continue;
            }
            let mut cursor = current.walk();
            let kids: Vec<Node<'_>> = current.named_children(&mut cursor).collect();
            pending.extend(kids.into_iter().rev());
        }
        for part in parts {
            self.node(part, stdin);
        }
    }

    fn pipeline(&mut self, node: Node<'_>, stdin: &Stdin) {
        let mut cursor = node.walk();
        let stages: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .collect();
        for (i, stage) in stages.iter().enumerate() {
            // Only shells read a script from stdin, and every shell's name contains "sh".
            let input = match i.checked_sub(1).and_then(|p| stages.get(p)) {
                None => stdin.clone(),
                Some(previous)
                    if self.text(*stage).contains("sh") || self.text(*stage).contains("xargs") =>
                {
                    self.output_of(*previous)
                }
                Some(_) => Stdin::Unknown,
            };
            let later = stages.get(i + 1..).unwrap_or_default();
            if !later.is_empty() && !later.iter().all(|s| self.is_data_filter(*s)) {
                self.feeding(*stage, &input);
            } else {
                self.node(*stage, &input);
            }
        }
    }

    /// A pipeline stage that only reads its stdin as data and prints text: output piped
    /// into it does not become arguments or paths (`echo .env | grep env`).
    fn is_data_filter(&self, stage: Node<'_>) -> bool {
        const FILTERS: &[&str] = &[
            "grep", "egrep", "fgrep", "rg", "sort", "uniq", "tr", "head", "tail", "wc", "cut",
            "cat", "nl", "rev", "fold", "column", "less", "more",
        ];
        // `sort`/`wc --files0-from=-` (or an abbreviation) read file names from stdin.
        stage.kind() == "command"
            && !self.text(stage).contains("--f")
            && stage
                .child_by_field_name("name")
                .is_some_and(|name| FILTERS.contains(&super::basename(self.text(name))))
    }

    /// `if`, `while`/`until`, `for`/`select`, `case`: conditions and bodies are statements,
    /// loop values and case patterns are words, loop variables are assignments.
    fn control(&mut self, node: Node<'_>, stdin: &Stdin) {
        let kids = fields(node);
        for (field, child) in kids {
            if !child.is_named() {
                continue;
            }
            if field == Some("value")
                && let Some(name) = node.child_by_field_name("variable")
                && let Some(value) = self.static_text(child)
            {
                let name = self.text(name).to_string();
                self.out.variables.push((name, value));
            }
            if field == Some("variable") {
                let name = self.text(child);
                if let Some(reason) = names::assignment_hazard(name) {
                    self.opaque(child, reason);
                }
                continue;
            }
            let input = if field == Some("body") || child.kind() == "case_item" {
                stdin.clone()
            } else {
                Stdin::Unknown
            };
            self.node(child, &input);
        }
    }

    fn c_style_for(&mut self, node: Node<'_>, stdin: &Stdin) {
        let kids = fields(node);
        let mut hazard = false;
        for (field, child) in kids {
            match field {
                Some("body") => self.node(child, stdin),
                Some(_) if child.is_named() => hazard |= self.arithmetic_scan(child),
                _ => {}
            }
        }
        if hazard {
            self.opaque(node, ARITHMETIC_HAZARD);
        }
    }

    /// A function body is rated where it is defined (calling it is rated by its name).
    fn function(&mut self, node: Node<'_>) {
        if let Some(body) = node.child_by_field_name("body") {
            self.node(body, &Stdin::Unknown);
        }
        let mut cursor = node.walk();
        let redirects: Vec<Node<'_>> = node
            .children_by_field_name("redirect", &mut cursor)
            .collect();
        if !redirects.is_empty() {
            let mut list = Vec::new();
            for redirect in redirects {
                list.extend(self.redirect(redirect));
            }
            self.push(SimpleCommand {
                words: Vec::new(),
                redirects: list,
                floors: Vec::new(),
                role: Role::Neutral("redirects the function's output".into()),
                deny_aliases: Vec::new(),
                feeds: false,
            });
        }
    }

    /// `X=1`, `a[i]=x`, `X=1 Y=$(cmd)` with no command.
    fn assignments(&mut self, node: Node<'_>) {
        let floors = if node.kind() == "variable_assignment" {
            self.assignment(node)
        } else {
            let mut cursor = node.walk();
            let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            kids.into_iter().flat_map(|n| self.assignment(n)).collect()
        };
        self.emit_neutral(node, "sets shell variables", floors);
    }

    /// One `NAME=value`: the value's substitutions are walked; returns the name's floors.
    pub(super) fn assignment(&mut self, node: Node<'_>) -> Vec<String> {
        let mut floors = Vec::new();
        if let Some(name) = node.child_by_field_name("name") {
            if name.kind() == "subscript" {
                self.subscript(name);
            } else if let Some(reason) = names::assignment_hazard(self.text(name)) {
                floors.push(reason);
            }
        }
        let mut cursor = node.walk();
        let values: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
        if let (Some(name), [value]) = (node.child_by_field_name("name"), values.as_slice())
            && let Some(text) = self.static_text(*value)
        {
            let name = self.text(name).to_string();
            self.out.variables.push((name, text));
        }
        for value in values {
            self.expression(value);
        }
        floors
    }

    /// `declare`/`typeset`/`local`/`export`/`readonly`.
    fn declaration(&mut self, node: Node<'_>) {
        let mut floors = Vec::new();
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let mut integer = false;
        let mut options = Vec::new();
        let mut names_given = false;
        for child in kids {
            names_given |= child.kind() != "word" || !self.text(child).starts_with(['-', '+']);
            match child.kind() {
                "variable_assignment" => {
                    floors.extend(self.assignment(child));
                    let numeric = child
                        .child_by_field_name("value")
                        .is_none_or(|v| v.kind() == "number");
                    if integer && !numeric {
                        floors.push(
                            "an integer variable evaluates its value as arithmetic, which can \
                             run commands"
                                .into(),
                        );
                    }
                }
                "variable_name" => {}
                _ => {
                    let word = self.word(child);
                    if word.text.starts_with(['-', '+']) && !word.dynamic {
                        options.push(word.clone());
                        integer |= word.text.contains('i');
                        if word.text.contains('n') {
                            floors.push("a name reference can set any variable".into());
                        }
                    } else if word.dynamic {
                        floors.push(format!("declares `{}`, only known at run time", word.text));
                    } else if let Some((name, _)) = word.text.split_once('=')
                        && let Some(reason) = names::assignment_hazard(name)
                    {
                        floors.push(reason);
                    }
                }
            }
        }
        if !names_given {
            // `export`, `declare -p`: lists variables (the environment included), which is
            // rated like `env`, by the rules.
            let keyword = node.child(0).map_or("declare", |k| self.text(k));
            let mut words = vec![Word::literal(keyword)];
            words.extend(options);
            self.push(SimpleCommand {
                words,
                redirects: Vec::new(),
                floors,
                role: Role::Command,
                deny_aliases: Vec::new(),
                feeds: false,
            });
            return;
        }
        self.emit_neutral(node, "declares shell variables", floors);
    }

    fn unset(&mut self, node: Node<'_>) {
        let mut floors = Vec::new();
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in kids {
            let word = self.word(child);
            if word.text.contains('[') || word.dynamic {
                floors.push(format!(
                    "unset `{}` may evaluate an array index as arithmetic",
                    word.text
                ));
            }
        }
        self.emit_neutral(node, "unsets shell variables", floors);
    }
}
