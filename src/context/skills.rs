//! Skills (SPEC §8.2): folders holding a `SKILL.md` whose frontmatter gives `name` and
//! `description` and whose body holds instructions, found under
//! `<workspace>/.agents/skills/` and `$AGENT_HOME/skills/`.
//!
//! Only names and descriptions go into the system prompt; the body is read from disk when
//! the model calls `read_skill`, so an edited skill is picked up without a restart. A
//! project skill with the same name as a user skill wins (the more specific place, as with
//! AGENTS.md). Frontmatter is the small YAML subset skills use: `key: value` lines, values
//! optionally quoted, indented lines continuing the previous value (`>`/`|` blocks).

use std::path::{Path, PathBuf};

use super::Unusable;

/// Longest description shown in the system prompt, in characters.
const DESCRIPTION_CHARS: usize = 200;
/// Most skills listed in the system prompt.
const MAX_LISTED: usize = 100;
/// Largest SKILL.md read, in bytes.
const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub(crate) name: String,
    pub description: String,
    /// The `SKILL.md` file.
    pub(crate) path: PathBuf,
}

/// The skills of a session, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skills {
    list: Vec<Skill>,
}

/// Why a skill body could not be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    #[error("no skill named `{name}`; available: {available}")]
    NotFound { name: String, available: String },
    #[error("cannot read `{}`: {message}; check the file", path.display())]
    Read { path: PathBuf, message: String },
}

impl Skills {
    /// Skills from `<workspace>/.agents/skills/*/SKILL.md` and `$AGENT_HOME/skills/*/SKILL.md`.
    /// Returns warnings for skill files that could not be read.
    pub fn discover(workspace: &Path, agent_home: &Path) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut list: Vec<Skill> = Vec::new();
        for root in [
            workspace.join(".agents").join("skills"),
            agent_home.join("skills"),
        ] {
            for skill in scan(&root, &mut warnings) {
                if !list.iter().any(|s| s.name == skill.name) {
                    list.push(skill);
                }
            }
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        (Self { list }, warnings)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[Skill] {
        &self.list
    }

    /// The names, comma-separated, or `none`.
    pub(crate) fn names(&self) -> String {
        if self.list.is_empty() {
            return "none".to_string();
        }
        let names: Vec<&str> = self.list.iter().map(|s| s.name.as_str()).collect();
        names.join(", ")
    }

    /// The body (instructions after the frontmatter) of skill `name`, read now.
    ///
    /// # Errors
    /// [`SkillError::NotFound`] listing the available skills, or [`SkillError::Read`].
    pub fn body(&self, name: &str) -> Result<(String, &Skill), SkillError> {
        let skill = self
            .list
            .iter()
            .find(|s| s.name == name.trim())
            .ok_or_else(|| SkillError::NotFound {
                name: name.to_string(),
                available: self.names(),
            })?;
        let text = read_capped(&skill.path).map_err(|why| SkillError::Read {
            path: skill.path.clone(),
            message: why.to_string(),
        })?;
        Ok((split_frontmatter(&text).2.trim().to_string(), skill))
    }

    /// The system-prompt section listing the skills; empty when there are none.
    pub(crate) fn prompt_section(&self) -> String {
        if self.list.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Skills\nInstructions for specific tasks. When one fits, load it with read_skill \
             before starting.\n",
        );
        for skill in self.list.iter().take(MAX_LISTED) {
            let description: String = skill.description.chars().take(DESCRIPTION_CHARS).collect();
            out.push_str(&format!("- {}: {}\n", skill.name, description));
        }
        if self.list.len() > MAX_LISTED {
            out.push_str(&format!(
                "- ({} more; read_skill with an unknown name lists all)\n",
                self.list.len() - MAX_LISTED
            ));
        }
        out
    }
}

fn scan(root: &Path, warnings: &mut Vec<String>) -> Vec<Skill> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let path = dir.join("SKILL.md");
        if !path.is_file() {
            continue;
        }
        let text = match read_capped(&path) {
            Ok(text) => text,
            Err(why) => {
                warnings.push(format!("skipping skill `{}`: {why}", path.display()));
                continue;
            }
        };
        let (name, description, body) = split_frontmatter(&text);
        let opened = body
            .trim_start_matches('\u{feff}')
            .strip_prefix("---")
            .is_some_and(|rest| rest.starts_with(['\n', '\r']));
        if description.is_none() && opened {
            warnings.push(format!(
                "skill `{}` has no closing `---` after its frontmatter, so it is listed without a name or description; add the line `---` after them",
                path.display()
            ));
        }
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name.filter(|n| !n.is_empty()).unwrap_or(folder);
        out.push(Skill {
            name,
            description: description.unwrap_or_default(),
            path,
        });
    }
    unique_names(out, warnings)
}

/// One skill per name within one skills folder: the one in a folder of that name, else the
/// first by folder name; each other one is skipped with a warning (a `name:` copied into a
/// second skill would otherwise silently hide one of them).
fn unique_names(mut skills: Vec<Skill>, warnings: &mut Vec<String>) -> Vec<Skill> {
    let in_own_folder = |skill: &Skill| {
        skill
            .path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|folder| folder.to_string_lossy() == skill.name)
    };
    skills.sort_by_key(|skill| !in_own_folder(skill));
    let mut kept: Vec<Skill> = Vec::with_capacity(skills.len());
    for skill in skills {
        match kept.iter().find(|k| k.name == skill.name) {
            Some(first) => warnings.push(format!(
                "skipping skill `{}`: its name `{}` is already used by `{}`; rename one of them",
                skill.path.display(),
                skill.name,
                first.path.display()
            )),
            None => kept.push(skill),
        }
    }
    kept
}

fn read_capped(path: &Path) -> Result<String, Unusable> {
    let size = std::fs::metadata(path)?.len();
    if size > MAX_SKILL_BYTES {
        return Err(Unusable::TooLarge {
            size,
            limit: MAX_SKILL_BYTES,
        });
    }
    let bytes = std::fs::read(path)?;
    let sample = &bytes[..bytes.len().min(crate::tools::textfile::SAMPLE_BYTES)];
    if crate::tools::textfile::looks_binary(sample) {
        return Err(Unusable::Binary);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `(name, description, body)` of a SKILL.md text. Without frontmatter the whole text is
/// the body.
pub(crate) fn split_frontmatter(text: &str) -> (Option<String>, Option<String>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---")
        .filter(|r| r.starts_with(['\n', '\r']))
    else {
        return (None, None, text);
    };
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut offset = text.len() - rest.len();
    let mut closed = false;
    let mut lines = rest.split_inclusive('\n');
    offset += lines.next().map_or(0, str::len);
    for line in lines {
        offset += line.len();
        let trimmed = line.trim_end();
        if trimmed == "---" {
            closed = true;
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = fields.last_mut() {
                if !value.is_empty() {
                    value.push(' ');
                }
                value.push_str(trimmed.trim());
            }
        } else if let Some((key, value)) = trimmed.split_once(':') {
            let value = value.trim();
            let value = if matches!(value, ">" | "|" | ">-" | "|-") {
                ""
            } else {
                value
            };
            fields.push((key.trim().to_string(), unquote(value).to_string()));
        }
    }
    if !closed {
        return (None, None, text);
    }
    let get = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    (
        get("name"),
        get("description"),
        text.get(offset..).unwrap_or(""),
    )
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn frontmatter_fields_and_body() {
        let text = "---\nname: pdf\ndescription: \"Fill PDF forms\"\n---\n\nStep 1.\n";
        assert_eq!(
            split_frontmatter(text),
            (
                Some("pdf".into()),
                Some("Fill PDF forms".into()),
                "\nStep 1.\n"
            )
        );
        let folded = "---\nname: x\ndescription: >\n  one\n  two\n---\nbody";
        assert_eq!(split_frontmatter(folded).1, Some("one two".into()));
        assert_eq!(
            split_frontmatter("no frontmatter"),
            (None, None, "no frontmatter")
        );
        assert_eq!(
            split_frontmatter("---\nname: open"),
            (None, None, "---\nname: open")
        );
    }

    #[test]
    fn project_skills_win_and_missing_lists_available() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let workspace = root.path().join("w");
        let home = root.path().join("h");
        let write = |dir: PathBuf, text: &str| -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("SKILL.md"), text)
        };
        write(
            workspace.join(".agents/skills/a"),
            "---\nname: deploy\ndescription: project\n---\nP",
        )?;
        write(
            home.join("skills/b"),
            "---\nname: deploy\ndescription: user\n---\nU",
        )?;
        write(home.join("skills/lint"), "no frontmatter body")?;
        let (skills, warnings) = Skills::discover(&workspace, &home);
        assert_eq!(warnings, Vec::<String>::new());
        assert_eq!(skills.names(), "deploy, lint");
        assert_eq!(skills.body("deploy").map(|(b, _)| b), Ok("P".to_string()));
        assert_eq!(
            skills.body("nope").map(|(b, _)| b),
            Err(SkillError::NotFound {
                name: "nope".into(),
                available: "deploy, lint".into()
            })
        );
        assert_eq!(
            skills.prompt_section(),
            "# Skills\nInstructions for specific tasks. When one fits, load it with read_skill \
             before starting.\n- deploy: project\n- lint: \n"
        );
        Ok(())
    }

    #[test]
    fn a_duplicate_name_or_a_binary_skill_is_skipped_with_a_warning()
    -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let workspace = root.path().join("w");
        let skills_dir = workspace.join(".agents/skills");
        let write = |folder: &str, text: &[u8]| -> std::io::Result<()> {
            std::fs::create_dir_all(skills_dir.join(folder))?;
            std::fs::write(skills_dir.join(folder).join("SKILL.md"), text)
        };
        write("deploy", b"---\nname: deploy\ndescription: real\n---\nREAL")?;
        // Sorted first, it used to hide the real `deploy` without a word.
        write("copy", b"---\nname: deploy\ndescription: copy\n---\nCOPY")?;
        write("blob", b"\x7fELF\x02\x01\x00\x00")?;
        // Listed as `open` (its folder) with no description; it used to be without a word.
        write(
            "open",
            b"---\nname: opened\ndescription: never closed\nbody",
        )?;
        write("rule", b"--- a ruler, not frontmatter\nbody")?;
        let (skills, warnings) = Skills::discover(&workspace, &root.path().join("h"));
        assert_eq!(skills.names(), "deploy, open, rule");
        assert_eq!(
            skills.body("deploy").map(|(b, _)| b),
            Ok("REAL".to_string())
        );
        assert_eq!(
            warnings,
            vec![
                format!(
                    "skipping skill `{}`: it is binary, not text",
                    skills_dir.join("blob/SKILL.md").display()
                ),
                format!(
                    "skill `{}` has no closing `---` after its frontmatter, so it is listed without a name or description; add the line `---` after them",
                    skills_dir.join("open/SKILL.md").display()
                ),
                format!(
                    "skipping skill `{}`: its name `deploy` is already used by `{}`; rename one of them",
                    skills_dir.join("copy/SKILL.md").display(),
                    skills_dir.join("deploy/SKILL.md").display()
                ),
            ]
        );
        Ok(())
    }
}
