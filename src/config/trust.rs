//! Trusting a workspace (SPEC §2.2, `agent trust`): records it in the user config's
//! `trusted_workspaces`, after which the project config's `allow` rules apply.
//!
//! The user config is edited in place with `toml_edit`, so comments, order and formatting
//! are kept; the file is replaced atomically (temp file + rename) and created with its
//! directory when missing. A symlinked config.toml (dotfiles) keeps its link: the target is
//! replaced. The path written is the canonical workspace root.

use std::path::{Path, PathBuf};

use super::{ConfigError, FileConfig};

/// Adds `workspace` to `trusted_workspaces` in the config file at `path`; `false` when it
/// was already there.
///
/// # Errors
/// [`ConfigError::Read`] when the file cannot be read or written, [`ConfigError::Toml`]
/// when it does not parse or `trusted_workspaces` is not an array of strings.
pub(crate) fn add_trusted(path: &Path, workspace: &Path) -> Result<bool, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(read_error(path, source)),
    };
    let toml_error = |message: String| ConfigError::Toml {
        path: path.to_path_buf(),
        message,
    };
    let mut document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| toml_error(e.to_string()))?;
    let entry = document
        .entry("trusted_workspaces")
        .or_insert_with(|| toml_edit::value(toml_edit::Array::new()));
    let Some(list) = entry.as_array_mut() else {
        return Err(toml_error(
            "`trusted_workspaces` must be an array of paths; fix it and run `agent trust` again"
                .into(),
        ));
    };
    let wanted = workspace.to_string_lossy().into_owned();
    if list.iter().any(|v| v.as_str() == Some(wanted.as_str())) {
        return Ok(false);
    }
    list.push(wanted);
    let updated = document.to_string();
    FileConfig::parse(&updated, path)?;
    write_atomically(path, &updated)?;
    Ok(true)
}

/// Replaces the file at `path` (through symlinks: a config.toml linked from a dotfiles
/// repository stays a link and its target is updated) with `text`.
fn write_atomically(path: &Path, text: &str) -> Result<(), ConfigError> {
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let path = resolved.as_path();
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    std::fs::create_dir_all(&dir).map_err(|e| read_error(&dir, e))?;
    let temp = dir.join(format!(".config.toml.{}.tmp", std::process::id()));
    std::fs::write(&temp, text).map_err(|e| read_error(&temp, e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        read_error(path, e)
    })
}

fn read_error(path: &Path, source: std::io::Error) -> ConfigError {
    ConfigError::Read {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn keeps_comments_and_is_idempotent() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my settings\ndefault_role = \"coder\" # keep\n\n[[permissions.rules]]\ntool = \"bash\"\npattern = \"cargo test*\"\naction = \"allow\"\n",
        )?;
        assert!(add_trusted(&path, Path::new("/w/a"))?);
        assert!(!add_trusted(&path, Path::new("/w/a"))?);
        assert!(add_trusted(&path, Path::new("/w/b"))?);
        let text = std::fs::read_to_string(&path)?;
        assert_eq!(
            text,
            "# my settings\ndefault_role = \"coder\" # keep\ntrusted_workspaces = [\"/w/a\", \"/w/b\"]\n\n[[permissions.rules]]\ntool = \"bash\"\npattern = \"cargo test*\"\naction = \"allow\"\n"
        );
        let parsed = FileConfig::parse(&text, &path)?;
        assert_eq!(parsed.trusted_workspaces.len(), 2);
        Ok(())
    }

    #[test]
    fn a_symlinked_config_stays_a_link_and_its_target_is_updated()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let target = dir.path().join("dotfiles/agent.toml");
        std::fs::create_dir_all(dir.path().join("dotfiles"))?;
        std::fs::write(&target, "default_role = \"coder\"\n")?;
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&target, &link)?;
        assert!(add_trusted(&link, Path::new("/w"))?);
        assert!(std::fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(
            std::fs::read_to_string(&target)?,
            "default_role = \"coder\"\ntrusted_workspaces = [\"/w\"]\n"
        );
        Ok(())
    }

    #[test]
    fn creates_the_file_and_rejects_a_wrong_type() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("home/config.toml");
        assert!(add_trusted(&path, Path::new("/w"))?);
        assert_eq!(
            std::fs::read_to_string(&path)?,
            "trusted_workspaces = [\"/w\"]\n"
        );
        std::fs::write(&path, "trusted_workspaces = \"/w\"\n")?;
        let error = add_trusted(&path, Path::new("/w"))
            .map(|_| ())
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("must be an array")));
        Ok(())
    }
}
