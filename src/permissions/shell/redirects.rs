//! Redirections, here-strings and heredocs.
//!
//! Output redirection targets and input files are recorded on the command so the engine can
//! rate them (a write to anything but `/dev/null` or a descriptor is at least `ask`; a path
//! under a `deny` file rule is `deny`). An unquoted heredoc body expands substitutions, which
//! are walked; a heredoc or here-string feeding a shell is that shell's script.

use tree_sitter::Node;

use super::walk::Walker;
use super::words::Word;
use super::{Redirect, RedirectKind, Role, SimpleCommand, Stdin};

/// What a statement's redirections contribute.
struct Gathered<'t> {
    redirects: Vec<Redirect>,
    input: Stdin,
    /// Words after a heredoc delimiter, which are arguments of the command.
    arguments: Vec<Node<'t>>,
    /// Statements after a heredoc on its line; `true` for pipeline stages.
    after: Vec<(Node<'t>, bool)>,
}

/// What a heredoc contributes to its command.
struct Heredoc<'t> {
    /// The body as the command's standard input.
    stdin: Stdin,
    /// Redirections written after the heredoc operator (`cat <<EOF > out`).
    redirects: Vec<Node<'t>>,
    /// Words written after the delimiter (`cat <<EOF file`), which are arguments.
    arguments: Vec<Node<'t>>,
    /// Pipeline stages after the heredoc (`cat <<EOF | bash`).
    stages: Vec<Node<'t>>,
    /// A statement after `&&` / `||` on the heredoc line.
    right: Option<Node<'t>>,
}

impl Walker<'_, '_> {
    /// A `file_redirect` (or a here-string, which only has substitutions to walk).
    pub(super) fn redirect(&mut self, node: Node<'_>) -> Vec<Redirect> {
        if node.kind() == "herestring_redirect" {
            self.children(node, &Stdin::Unknown);
            return Vec::new();
        }
        if node.kind() != "file_redirect" {
            self.opaque(
                node,
                format!("`{}` redirection is not analysed", node.kind()),
            );
            return Vec::new();
        }
        let mut operator = String::new();
        let mut target = None;
        let kids = super::walk::fields(node);
        for (field, child) in kids {
            match field {
                Some("destination") => target = Some((child, self.word(child))),
                Some("descriptor") => operator.push_str(self.text(child)),
                _ if !child.is_named() => operator.push_str(self.text(child)),
                _ => self.expression(child),
            }
        }
        let kind = match operator.trim_start_matches(|c: char| c.is_ascii_digit()) {
            "<" => RedirectKind::Read,
            ">&-" | "<&-" => RedirectKind::Descriptor,
            ">&" | "<&" => match &target {
                Some((node, word)) if node.kind() == "number" || word.text == "-" => {
                    RedirectKind::Descriptor
                }
                _ if operator.ends_with("<&") => RedirectKind::Read,
                _ => RedirectKind::Write,
            },
            ">" | ">>" | ">|" | "&>" | "&>>" => RedirectKind::Write,
            _ => {
                self.opaque(
                    node,
                    format!("the `{operator}` redirection is not analysed"),
                );
                RedirectKind::Write
            }
        };
        let target = target.map_or_else(|| Word::literal(""), |(_, word)| word);
        vec![Redirect {
            operator,
            target,
            kind,
        }]
    }

    /// A here-string's text when it is a literal.
    pub(super) fn herestring(&self, node: Node<'_>) -> Stdin {
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        match kids.as_slice() {
            [only] => self
                .static_text(*only)
                .map_or(Stdin::Unknown, |text| Stdin::Known(text + "\n")),
            _ => Stdin::Unknown,
        }
    }

    /// A statement with redirections: `cmd > out`, `{ ...; } 2>&1`, `cat <<EOF ... EOF`.
    pub(super) fn redirected(&mut self, node: Node<'_>, stdin: &Stdin) {
        let written_body = node.child_by_field_name("body");
        let body = self.redirected_command(written_body, stdin);
        let gathered = self.gather(node, written_body, stdin);
        let piped = match (body, &gathered.input) {
            (Some(b), Stdin::Known(text)) if self.is_plain_cat(b) => Stdin::Known(text.clone()),
            _ => Stdin::Unknown,
        };
        match body {
            Some(b) if b.kind() == "command" => {
                self.command(b, gathered.redirects, gathered.input, gathered.arguments);
            }
            Some(b) => {
                self.node(b, &gathered.input);
                self.redirect_only(gathered.redirects);
            }
            None => self.redirect_only(gathered.redirects),
        }
        let mut first_stage = true;
        for (next, stage) in gathered.after {
            let input = if stage && first_stage {
                piped.clone()
            } else {
                Stdin::Unknown
            };
            first_stage &= !stage;
            self.node(next, &input);
        }
    }

    /// The command a statement's redirections bind to. `a && cat <<EOF | bash` and
    /// `a | cat <<EOF | bash` come out as a list or pipeline carrying the heredoc; bash binds
    /// the redirection to the last command (`!` aside), so the other parts are walked here.
    fn redirected_command<'t>(
        &mut self,
        body: Option<Node<'t>>,
        stdin: &Stdin,
    ) -> Option<Node<'t>> {
        let unnegate = |mut node: Option<Node<'t>>| {
            while let Some(negated) = node.filter(|b| b.kind() == "negated_command") {
                node = negated.named_child(0);
            }
            node
        };
        let mut body = unnegate(body);
        while let Some(list) = body.filter(|b| matches!(b.kind(), "list" | "pipeline")) {
            let mut cursor = list.walk();
            let parts: Vec<Node<'t>> = list.named_children(&mut cursor).collect();
            let Some((last, rest)) = parts.split_last() else {
                break;
            };
            for (i, part) in rest.iter().enumerate() {
                let first = i == 0 || list.kind() == "list";
                self.node(*part, if first { stdin } else { &Stdin::Unknown });
            }
            body = unnegate(Some(*last));
        }
        body
    }

    /// The redirections of a statement (those nested in a heredoc line included), the
    /// standard input they give, and what follows a heredoc on its line.
    fn gather<'t>(
        &mut self,
        node: Node<'t>,
        body: Option<Node<'t>>,
        stdin: &Stdin,
    ) -> Gathered<'t> {
        let mut gathered = Gathered {
            redirects: Vec::new(),
            input: stdin.clone(),
            arguments: Vec::new(),
            after: Vec::new(),
        };
        let mut cursor = node.walk();
        let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for child in kids.into_iter().filter(|c| Some(*c) != body) {
            match child.kind() {
                "heredoc_redirect" => {
                    let heredoc = self.heredoc(child);
                    gathered.input = heredoc.stdin;
                    for redirect in heredoc.redirects {
                        gathered.redirects.extend(self.redirect(redirect));
                    }
                    gathered.arguments.extend(heredoc.arguments);
                    gathered
                        .after
                        .extend(heredoc.stages.into_iter().map(|s| (s, true)));
                    gathered.after.extend(heredoc.right.map(|r| (r, false)));
                }
                "herestring_redirect" => {
                    gathered.input = self.herestring(child);
                    self.redirect(child);
                }
                _ => gathered.redirects.extend(self.redirect(child)),
            }
        }
        gathered
    }

    fn redirect_only(&mut self, redirects: Vec<Redirect>) {
        if redirects.is_empty() {
            return;
        }
        let floors = super::command::redirect_floors(&redirects);
        self.push(SimpleCommand {
            words: Vec::new(),
            redirects,
            floors,
            role: Role::Neutral("redirects a compound command".into()),
            deny_aliases: Vec::new(),
            feeds: false,
        });
    }

    fn heredoc<'t>(&mut self, node: Node<'t>) -> Heredoc<'t> {
        let mut heredoc = Heredoc {
            stdin: Stdin::Unknown,
            redirects: Vec::new(),
            arguments: Vec::new(),
            stages: Vec::new(),
            right: None,
        };
        let mut quoted = false;
        let mut strip_tabs = false;
        let kids = super::walk::fields(node);
        for (field, child) in kids {
            match (field, child.kind()) {
                (_, "<<-") => strip_tabs = true,
                (_, "heredoc_start") => quoted = self.text(child).contains(['\'', '"', '\\']),
                (_, "heredoc_body") => heredoc.stdin = self.heredoc_body(child, quoted, strip_tabs),
                (Some("redirect"), _) => heredoc.redirects.push(child),
                (Some("argument"), _) => heredoc.arguments.push(child),
                (Some("right"), _) => heredoc.right = Some(child),
                (_, "pipeline") => {
                    let mut c = child.walk();
                    heredoc.stages.extend(
                        child
                            .named_children(&mut c)
                            .filter(|n| n.kind() != "comment"),
                    );
                }
                (_, "heredoc_end" | "file_descriptor") => {}
                _ if child.is_named() => self.node(child, &Stdin::Unknown),
                _ => {}
            }
        }
        heredoc
    }

    /// A heredoc body as standard input: literal when the delimiter is quoted or nothing in
    /// it expands; substitutions of an unquoted body are walked.
    fn heredoc_body(&mut self, node: Node<'_>, quoted: bool, strip_tabs: bool) -> Stdin {
        let raw = self.text(node);
        if quoted {
            return Stdin::Known(tabs(raw, strip_tabs));
        }
        let masked = self
            .masked
            .iter()
            .any(|r| r.start <= node.start_byte() && node.end_byte() <= r.end.max(r.start));
        if masked && raw.contains(['$', '`']) {
            self.opaque(node, "the expansions of this heredoc could not be checked");
            return Stdin::Unknown;
        }
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let mut expands = raw.contains(['$', '`', '\\']);
        for child in kids {
            if child.kind() != "heredoc_content" {
                expands = true;
                self.expression(child);
            }
        }
        if expands {
            Stdin::Unknown
        } else {
            Stdin::Known(tabs(raw, strip_tabs))
        }
    }

    /// `cat` with no file operands: its output is its input.
    fn is_plain_cat(&self, node: Node<'_>) -> bool {
        if node.kind() != "command" {
            return false;
        }
        let mut cursor = node.walk();
        let words: Vec<Option<String>> = node
            .named_children(&mut cursor)
            .map(|n| match n.kind() {
                "command_name" => n.named_child(0).and_then(|w| self.static_text(w)),
                _ => self.static_text(n),
            })
            .collect();
        matches!(words.first(), Some(Some(name)) if name == "cat")
            && words[1..]
                .iter()
                .all(|w| w.as_deref().is_some_and(|w| w.starts_with('-')))
    }

    /// What a pipeline stage writes to the next one, when it is statically known:
    /// `echo`/`printf` of literals, or `cat` of a literal heredoc.
    pub(super) fn output_of(&self, node: Node<'_>) -> Stdin {
        match node.kind() {
            "command" => {
                let mut cursor = node.walk();
                let mut words = Vec::new();
                for child in node.named_children(&mut cursor) {
                    let target = match child.kind() {
                        "command_name" => child.named_child(0),
                        "variable_assignment" => continue,
                        _ => Some(child),
                    };
                    match target.and_then(|t| self.static_text(t)) {
                        Some(text) => words.push(text),
                        None => return Stdin::Unknown,
                    }
                }
                match words.split_first() {
                    Some((name, rest)) if name == "echo" || name == "printf" => {
                        Stdin::Known(rest.join(" ") + "\n")
                    }
                    _ => Stdin::Unknown,
                }
            }
            "redirected_statement" => self.heredoc_output(node),
            _ => Stdin::Unknown,
        }
    }

    fn heredoc_output(&self, node: Node<'_>) -> Stdin {
        let Some(body) = node.child_by_field_name("body") else {
            return Stdin::Unknown;
        };
        if !self.is_plain_cat(body) {
            return Stdin::Unknown;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() != "heredoc_redirect" {
                continue;
            }
            let mut c = child.walk();
            let start = child
                .named_children(&mut c)
                .find(|n| n.kind() == "heredoc_start")
                .map(|n| self.text(n));
            let mut c = child.walk();
            let body = child
                .named_children(&mut c)
                .find(|n| n.kind() == "heredoc_body");
            if let (Some(start), Some(body)) = (start, body) {
                let raw = self.text(body);
                let quoted = start.contains(['\'', '"', '\\']);
                if quoted || !raw.contains(['$', '`', '\\']) {
                    return Stdin::Known(raw.to_string());
                }
            }
        }
        Stdin::Unknown
    }
}

/// `<<-` removes leading tabs from every line.
fn tabs(body: &str, strip_tabs: bool) -> String {
    if !strip_tabs {
        return body.to_string();
    }
    body.lines()
        .map(|line| line.trim_start_matches('\t'))
        .collect::<Vec<_>>()
        .join("\n")
}
