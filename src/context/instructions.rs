//! Project instructions (SPEC §8.1): `AGENTS.md` from `$AGENT_HOME`, then from the workspace
//! root down to the current directory, appended to the system prompt in that order (later
//! files are more specific and take precedence).
//!
//! Cap: 32 KiB of file content in total. When the files are larger, the most specific ones
//! keep their full text and the less specific ones are cut (the user's global file first),
//! each cut marked in the prompt and reported as a warning. An `AGENTS.md` that is not a
//! readable regular text file (a directory, a FIFO, a symlink loop, binary) is left out with
//! a warning; at most the cap is read from any file. The text is read once per
//! session, so the system prompt stays byte-identical between requests.

use std::path::{Path, PathBuf};

use super::Unusable;
use super::skills::Skills;

/// Total bytes of AGENTS.md content included (§8.1).
pub(crate) const AGENTS_MD_CAP: usize = 32 * 1024;
/// The file name looked for.
pub(crate) const FILE_NAME: &str = "AGENTS.md";

/// One included file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InstructionFile {
    pub(crate) path: PathBuf,
    /// The text included (possibly cut).
    pub(crate) text: String,
    /// Bytes left out by the cap.
    pub(crate) cut_bytes: usize,
}

/// The AGENTS.md files of a session, least specific first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Instructions {
    pub(crate) files: Vec<InstructionFile>,
}

impl Instructions {
    /// Reads `$AGENT_HOME/AGENTS.md`, then `AGENTS.md` in each directory from `workspace`
    /// down to `cwd`, keeping at most `cap` bytes in total. Returns warnings for cut or
    /// unreadable files.
    pub(crate) fn load(
        agent_home: &Path,
        workspace: &Path,
        cwd: &Path,
        cap: usize,
    ) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut found: Vec<(PathBuf, String, usize)> = Vec::new();
        for dir in search_dirs(agent_home, workspace, cwd) {
            let path = dir.join(FILE_NAME);
            if found.iter().any(|(p, _, _)| same_file(p, &path)) {
                continue;
            }
            match read_text(&path, cap) {
                Ok(Some((text, unread))) => found.push((path, text, unread)),
                Ok(None) => {}
                Err(why) => warnings.push(format!(
                    "ignoring `{}`: {why}; AGENTS.md must be a readable text file",
                    path.display()
                )),
            }
        }
        let mut left = cap;
        let mut files: Vec<InstructionFile> = Vec::with_capacity(found.len());
        for (path, text, unread) in found.into_iter().rev() {
            let keep = floor_char_boundary(&text, left);
            left -= keep;
            let cut_bytes = text.len() - keep + unread;
            if cut_bytes > 0 {
                warnings.push(format!(
                    "`{}` was cut by {cut_bytes} bytes: AGENTS.md files are limited to {} KiB in total; shorten them",
                    path.display(),
                    cap / 1024
                ));
            }
            files.push(InstructionFile {
                text: text[..keep].to_string(),
                path,
                cut_bytes,
            });
        }
        files.reverse();
        files.retain(|f| !f.text.trim().is_empty() || f.cut_bytes > 0);
        (Self { files }, warnings)
    }

    /// The system-prompt section; empty when there are no files.
    pub(crate) fn prompt_section(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Project instructions (AGENTS.md)\nFollow them; later files are more specific and take precedence.\n",
        );
        for file in &self.files {
            out.push_str(&format!(
                "\n## {}\n{}\n",
                file.path.display(),
                file.text.trim_end()
            ));
            if file.cut_bytes > 0 {
                out.push_str(&format!(
                    "[... {} more bytes cut: AGENTS.md content is limited to {} KiB ...]\n",
                    file.cut_bytes,
                    AGENTS_MD_CAP / 1024
                ));
            }
        }
        out
    }
}

/// The text of the AGENTS.md at `path` (at most `cap` bytes read) and the bytes left unread;
/// `None` when there is none.
///
/// # Errors
/// Why the file is not used: not a regular file (a directory, a FIFO that would block, a
/// device), unreadable (a symlink loop, no permission), or binary.
fn read_text(path: &Path, cap: usize) -> Result<Option<(String, usize)>, Unusable> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if !meta.is_file() {
        return Err(Unusable::NotAFile);
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|file| file.take(cap as u64).read_to_end(&mut bytes))?;
    let sample = &bytes[..bytes.len().min(crate::tools::textfile::SAMPLE_BYTES)];
    if crate::tools::textfile::looks_binary(sample) {
        return Err(Unusable::Binary);
    }
    let unread = usize::try_from(meta.len())
        .unwrap_or(usize::MAX)
        .saturating_sub(bytes.len());
    Ok(Some((String::from_utf8_lossy(&bytes).into_owned(), unread)))
}

/// `$AGENT_HOME`, then the workspace root and each directory below it down to `cwd`.
fn search_dirs(agent_home: &Path, workspace: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![agent_home.to_path_buf(), workspace.to_path_buf()];
    if let Ok(relative) = cwd.strip_prefix(workspace) {
        let mut at = workspace.to_path_buf();
        for part in relative.components() {
            at.push(part);
            dirs.push(at.clone());
        }
    }
    dirs
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The largest index ≤ `max` that is a character boundary of `text` (≤ its length).
fn floor_char_boundary(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The sections appended to the base system prompt: AGENTS.md, then the skills listing.
pub(crate) fn system_prompt_sections(instructions: &Instructions, skills: &Skills) -> String {
    let mut out = String::new();
    for section in [instructions.prompt_section(), skills.prompt_section()] {
        if !section.is_empty() {
            out.push_str("\n\n");
            out.push_str(section.trim_end());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn order_is_home_then_root_down_to_cwd() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let home = root.path().join("home");
        let ws = root.path().join("ws");
        let cwd = ws.join("a/b");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&cwd)?;
        std::fs::write(home.join(FILE_NAME), "global")?;
        std::fs::write(ws.join(FILE_NAME), "root")?;
        std::fs::write(cwd.join(FILE_NAME), "leaf")?;
        let (instructions, warnings) = Instructions::load(&home, &ws, &cwd, AGENTS_MD_CAP);
        assert_eq!(warnings, Vec::<String>::new());
        let texts: Vec<&str> = instructions.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, vec!["global", "root", "leaf"]);
        Ok(())
    }

    #[test]
    fn cap_cuts_the_least_specific_first() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let home = root.path().join("home");
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&ws)?;
        std::fs::write(home.join(FILE_NAME), "g".repeat(100))?;
        std::fs::write(ws.join(FILE_NAME), "r".repeat(80))?;
        let (instructions, warnings) = Instructions::load(&home, &ws, &ws, 100);
        let sizes: Vec<(usize, usize)> = instructions
            .files
            .iter()
            .map(|f| (f.text.len(), f.cut_bytes))
            .collect();
        assert_eq!(sizes, vec![(20, 80), (80, 0)]);
        assert_eq!(warnings.len(), 1);
        assert!(
            instructions
                .prompt_section()
                .contains("[... 80 more bytes cut")
        );
        Ok(())
    }

    #[test]
    fn a_directory_a_loop_or_a_binary_file_is_skipped_with_a_warning()
    -> Result<(), Box<dyn std::error::Error>> {
        // The binary file went into the system prompt NUL bytes and all; the others were
        // skipped without a word.
        let root = tempfile::tempdir()?;
        let home = root.path().join("home");
        let ws = root.path().join("ws");
        let cwd = ws.join("a/b");
        std::fs::create_dir_all(home.join(FILE_NAME))?;
        std::fs::create_dir_all(&cwd)?;
        std::fs::write(ws.join(FILE_NAME), b"\x7fELF\x02\x01\x00\x00binary")?;
        std::os::unix::fs::symlink(ws.join("a").join(FILE_NAME), ws.join("a").join(FILE_NAME))?;
        std::fs::write(cwd.join(FILE_NAME), "leaf")?;
        let (instructions, warnings) = Instructions::load(&home, &ws, &cwd, AGENTS_MD_CAP);
        let texts: Vec<&str> = instructions.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, vec!["leaf"]);
        let expected = |path: PathBuf, why: &str| {
            format!(
                "ignoring `{}`: {why}; AGENTS.md must be a readable text file",
                path.display()
            )
        };
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert_eq!(
            warnings[0],
            expected(home.join(FILE_NAME), "it is not a regular file")
        );
        assert_eq!(
            warnings[1],
            expected(ws.join(FILE_NAME), "it is binary, not text")
        );
        assert!(
            warnings[2].starts_with(&format!(
                "ignoring `{}`: ",
                ws.join("a").join(FILE_NAME).display()
            )),
            "{warnings:?}"
        );
        Ok(())
    }
}
