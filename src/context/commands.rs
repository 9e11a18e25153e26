//! Custom slash commands (issue 18): Markdown prompt files `$AGENT_HOME/commands/NAME.md`
//! and `<workspace>/.agents/commands/NAME.md`, run as `/NAME args` at the REPL and as
//! `agent /NAME args` one-shot. The format is Claude Code's: optional frontmatter with
//! `description` and `argument-hint` (other keys are ignored), then the prompt, where
//! `$ARGUMENTS` is everything after the name and `$1` … `$9` its words (shell-quoted words
//! stay together). A prompt without any of them gets the arguments appended after a blank
//! line. Skills (§8.2) run the same way as `/skill-name args`.
//!
//! A project command wins over a user command of the same name, and a command over a skill;
//! the REPL's built-in commands win over both. The body is read when the command runs, so an
//! edited file is picked up without a restart. A file whose frontmatter is broken is still
//! listed (its whole text is the prompt) with a warning.

use std::path::{Path, PathBuf};

use super::skills::Skills;

/// Largest command file read, in bytes.
const MAX_COMMAND_BYTES: u64 = 256 * 1024;

/// What a custom command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A prompt file.
    File(PathBuf),
    /// A skill: its instructions.
    Skill,
}

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash.
    pub(crate) name: String,
    pub(crate) description: String,
    /// `argument-hint`, e.g. `[issue number]`.
    pub(crate) argument_hint: Option<String>,
    pub(crate) source: Source,
}

/// Why a command could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("cannot read the command file `{}`: {message}; check the file", path.display())]
    Read { path: PathBuf, message: String },
    #[error("cannot load the skill `{name}`: {message}")]
    Skill { name: String, message: String },
}

/// The custom commands of a session, sorted by name.
#[derive(Debug, Clone, Default)]
pub struct Commands {
    list: Vec<CustomCommand>,
    skills: std::sync::Arc<Skills>,
}

impl Commands {
    /// Command files of the workspace and `$AGENT_HOME`, then the skills not shadowed by a
    /// command. Returns warnings for files that could not be used as they are.
    pub fn discover(
        workspace: &Path,
        agent_home: &Path,
        skills: std::sync::Arc<Skills>,
    ) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut list: Vec<CustomCommand> = Vec::new();
        for dir in [
            workspace.join(".agents").join("commands"),
            agent_home.join("commands"),
        ] {
            for command in scan(&dir, &mut warnings) {
                if !list.iter().any(|c| c.name == command.name) {
                    list.push(command);
                }
            }
        }
        for skill in skills.list() {
            if !list.iter().any(|c| c.name == skill.name) {
                list.push(CustomCommand {
                    name: skill.name.clone(),
                    description: format!("(skill) {}", skill.description),
                    argument_hint: None,
                    source: Source::Skill,
                });
            }
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        (Self { list, skills }, warnings)
    }

    pub(crate) fn list(&self) -> &[CustomCommand] {
        &self.list
    }

    /// The command `/name` names, if one does.
    pub(crate) fn get(&self, slash_name: &str) -> Option<&CustomCommand> {
        let name = slash_name.strip_prefix('/')?;
        self.list.iter().find(|c| c.name == name)
    }

    /// The prompt for `line` when it is `/name args` for a custom command; `None` when it
    /// does not name one.
    ///
    /// # Errors
    /// [`CommandError`] when the command's file or skill cannot be read now.
    pub fn expand(&self, line: &str) -> Option<Result<String, CommandError>> {
        let trimmed = line.trim();
        let (name, args) = trimmed
            .split_once(char::is_whitespace)
            .unwrap_or((trimmed, ""));
        let command = self.get(name)?;
        let args = args.trim();
        Some(match &command.source {
            Source::File(path) => read(path).map(|text| {
                let (_, body) = frontmatter(&text).unwrap_or((Vec::new(), &text));
                substitute(body.trim(), args)
            }),
            Source::Skill => self
                .skills
                .body(&command.name)
                .map(|(body, _)| skill_prompt(&command.name, &body, args))
                .map_err(|error| CommandError::Skill {
                    name: command.name.clone(),
                    message: error.to_string(),
                }),
        })
    }
}

/// The `*.md` files of `dir` as commands (a missing directory has none).
fn scan(dir: &Path, warnings: &mut Vec<String>) -> Vec<CustomCommand> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    paths.sort();
    let mut commands = Vec::new();
    for path in paths {
        let Some(name) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            warnings.push(format!(
                "skipping the command file {}: a command name may hold letters, digits, `-` and \
                 `_`; rename the file",
                path.display()
            ));
            continue;
        }
        let text = match read(&path) {
            Ok(text) => text,
            Err(error) => {
                warnings.push(format!("skipping /{name}: {error}"));
                continue;
            }
        };
        let fields = match frontmatter(&text) {
            Ok((fields, _)) => fields,
            Err(why) => {
                warnings.push(format!(
                    "the command file {} has broken frontmatter ({why}); /{name} uses the whole \
                     file as its prompt",
                    path.display()
                ));
                Vec::new()
            }
        };
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        commands.push(CustomCommand {
            description: get("description").unwrap_or_else(|| "custom command".to_string()),
            argument_hint: get("argument-hint"),
            name,
            source: Source::File(path),
        });
    }
    commands
}

fn read(path: &Path) -> Result<String, CommandError> {
    let error = |message: String| CommandError::Read {
        path: path.to_path_buf(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| error(e.to_string()))?;
    if meta.len() > MAX_COMMAND_BYTES {
        return Err(error(format!(
            "it has {} bytes, more than {MAX_COMMAND_BYTES}",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| error("it is not UTF-8 text".to_string()))
}

type Fields = Vec<(String, String)>;

/// The frontmatter's `key: value` fields and the body; no frontmatter is no fields.
///
/// # Errors
/// Why the frontmatter is broken: not closed, or a line that is not `key: value`.
fn frontmatter(text: &str) -> Result<(Fields, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---")
        .filter(|r| r.starts_with(['\n', '\r']))
    else {
        return Ok((Vec::new(), text));
    };
    let mut fields = Vec::new();
    let mut offset = text.len() - rest.len();
    let mut lines = rest.split_inclusive('\n');
    offset += lines.next().map_or(0, str::len);
    for line in lines {
        offset += line.len();
        let trimmed = line.trim();
        if trimmed == "---" {
            return Ok((fields, text.get(offset..).unwrap_or("")));
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match trimmed.split_once(':') {
            Some((key, value)) if !key.trim().is_empty() && !key.contains(' ') => {
                let value = value.trim();
                let value = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                    .unwrap_or(value);
                fields.push((key.trim().to_string(), value.to_string()));
            }
            _ => return Err(format!("`{trimmed}` is not `key: value`")),
        }
    }
    Err("no closing `---`".to_string())
}

/// `body` with `$ARGUMENTS` and `$1` … `$9` replaced; the arguments appended when the body
/// uses none of them.
pub(crate) fn substitute(body: &str, args: &str) -> String {
    let words = shell_words::split(args)
        .unwrap_or_else(|_| args.split_whitespace().map(str::to_string).collect());
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let index = digit as usize - '1' as usize;
            out.push_str(words.get(index).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str("\n\n");
        out.push_str(args);
    }
    out
}

/// The prompt that runs skill `name`: its instructions, then the user's words.
fn skill_prompt(name: &str, body: &str, args: &str) -> String {
    let mut prompt = format!("Use the skill `{name}`. Its instructions:\n\n{body}");
    if !args.is_empty() {
        prompt.push_str(&format!("\n\nThe task: {args}"));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn arguments_are_substituted() {
        assert_eq!(
            substitute("Fix #$1 ($ARGUMENTS) $5.", "42 \"high prio\""),
            "Fix #42 (42 \"high prio\") ."
        );
        assert_eq!(
            substitute("Review $2 then $1", "a 'b c'"),
            "Review b c then a"
        );
        assert_eq!(substitute("Costs $$ and $x", ""), "Costs $$ and $x");
        assert_eq!(
            substitute("Summarize.", "the README"),
            "Summarize.\n\nthe README"
        );
    }

    #[test]
    fn discovery_frontmatter_precedence_and_skills() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let (work, home) = (root.path().join("work"), root.path().join("home"));
        std::fs::create_dir_all(work.join(".agents/commands"))?;
        std::fs::create_dir_all(home.join("commands"))?;
        std::fs::create_dir_all(home.join("skills/deploy"))?;
        std::fs::write(
            work.join(".agents/commands/fix.md"),
            "---\ndescription: Fix an issue\nargument-hint: [number]\nallowed-tools: bash\n---\nFix issue $1.\n",
        )?;
        std::fs::write(home.join("commands/fix.md"), "user version")?;
        std::fs::write(
            home.join("commands/broken.md"),
            "---\ndescription: x\nnot a field\n---\nBody\n",
        )?;
        std::fs::write(home.join("commands/bad name.md"), "x")?;
        std::fs::write(
            home.join("skills/deploy/SKILL.md"),
            "---\nname: deploy\ndescription: Ship it\n---\nRun make deploy.\n",
        )?;
        let (skills, _) = Skills::discover(&work, &home);
        let (commands, warnings) = Commands::discover(&work, &home, Arc::new(skills));
        let names: Vec<(&str, &str)> = commands
            .list()
            .iter()
            .map(|c| (c.name.as_str(), c.description.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("broken", "custom command"),
                ("deploy", "(skill) Ship it"),
                ("fix", "Fix an issue")
            ]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("rename the file"), "{warnings:?}");
        assert!(
            warnings[1].contains("broken frontmatter (`not a field` is not `key: value`)"),
            "{warnings:?}"
        );
        assert_eq!(
            commands
                .get("/fix")
                .and_then(|c| c.argument_hint.as_deref()),
            Some("[number]")
        );
        assert_eq!(
            commands.expand("/fix 7 now").transpose()?,
            Some("Fix issue 7.".to_string())
        );
        assert_eq!(
            commands.expand("/broken").transpose()?,
            Some("---\ndescription: x\nnot a field\n---\nBody".to_string())
        );
        assert_eq!(
            commands.expand("/deploy to staging").transpose()?,
            Some("Use the skill `deploy`. Its instructions:\n\nRun make deploy.\n\nThe task: to staging".to_string())
        );
        assert_eq!(commands.expand("/nope x"), None);
        assert_eq!(commands.expand("fix 7"), None);
        Ok(())
    }
}
