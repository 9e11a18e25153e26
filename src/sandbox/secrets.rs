//! What commands must not see (issue 15, points 1 and 2): the secret locations hidden by the
//! mount namespace, and the environment variables with secret-like names removed from every
//! command's environment.
//!
//! Locations: [`crate::permissions::defaults::SECRET_LOCATIONS`] (the same list the file
//! rules deny) plus `[sandbox] deny_read`, resolved through symlinks, existing at session
//! start, none inside another and none holding the workspace (hiding that would hide the
//! work).
//!
//! Variables (as Codex's default `shell_environment_policy` does): names ending in `_KEY`,
//! `_TOKEN`, `_PAT`, `_CREDENTIALS` or containing `SECRET` or `PASSWORD` (any case), and the
//! cloud credential names in [`CLOUD_NAMES`]; `[sandbox] env_keep` (names or `*` globs) keeps
//! named ones. The agent's own endpoint settings never reach commands either.

use std::path::{Path, PathBuf};

/// Name endings that mark a secret.
const SUFFIXES: &[&str] = &["_KEY", "_TOKEN", "_PAT", "_CREDENTIALS"];
/// Name parts that mark a secret.
const PARTS: &[&str] = &["SECRET", "PASSWORD"];
/// Cloud credential variables the patterns miss.
pub(crate) const CLOUD_NAMES: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_CERTIFICATE_PATH",
];

/// Whether `name` looks like it holds a secret.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SUFFIXES.iter().any(|s| upper.ends_with(s))
        || PARTS.iter().any(|p| upper.contains(p))
        || CLOUD_NAMES.contains(&upper.as_str())
}

/// The names among `names` that look secret and are not kept by `keep` (exact names or `*`
/// globs), sorted.
pub(crate) fn secret_env_names<'a>(
    names: impl Iterator<Item = &'a str>,
    keep: &[String],
) -> Vec<String> {
    let patterns: Vec<glob::Pattern> = keep
        .iter()
        .filter_map(|k| glob::Pattern::new(k).ok())
        .collect();
    let mut found: Vec<String> = names
        .filter(|name| is_secret_name(name))
        .filter(|name| !keep.iter().any(|k| k == name) && !patterns.iter().any(|p| p.matches(name)))
        .map(str::to_string)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The paths to hide: `locations` (`~/` is `home`, `$AGENT_HOME/` is `agent_home`, relative
/// paths are relative to the workspace) resolved through symlinks, existing, deduplicated,
/// none inside another. Entries that hold the workspace are left out with a warning.
pub fn hidden_paths(
    locations: &[String],
    home: Option<&Path>,
    agent_home: &Path,
    workspace: &Path,
) -> (Vec<PathBuf>, Vec<String>) {
    let mut warnings = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for location in locations {
        let Some(path) = expand(location, home, agent_home, workspace) else {
            continue;
        };
        let Ok(real) = path.canonicalize() else {
            continue;
        };
        if workspace.starts_with(&real) {
            warnings.push(format!(
                "[sandbox] deny_read `{location}` holds the workspace; it is not hidden from commands"
            ));
            continue;
        }
        paths.push(real);
    }
    paths.sort();
    paths.dedup();
    let outer: Vec<PathBuf> = paths
        .iter()
        .filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect();
    (outer, warnings)
}

/// `~/x`, `$HOME/x`, `$AGENT_HOME/x`, an absolute path, or a path relative to the workspace.
fn expand(
    location: &str,
    home: Option<&Path>,
    agent_home: &Path,
    workspace: &Path,
) -> Option<PathBuf> {
    let rest = |prefix: &str| {
        location
            .strip_prefix(prefix)
            .map(|r| r.trim_start_matches('/'))
    };
    if location == "~" || location == "$HOME" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = rest("~/").or_else(|| rest("$HOME/")) {
        return home.map(|h| h.join(rest));
    }
    if location == "$AGENT_HOME" {
        return Some(agent_home.to_path_buf());
    }
    if let Some(rest) = rest("$AGENT_HOME/") {
        return Some(agent_home.join(rest));
    }
    let path = Path::new(location);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn secret_names() {
        let names = [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "DB_PASSWORD",
            "client_secret",
            "GITLAB_PAT",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "PATH",
            "HOME",
            "SSH_AUTH_SOCK",
            "KEYBOARD",
            "TOKENIZERS_PARALLELISM",
            "GIT_CONFIG_COUNT",
            "NPM_TOKEN",
        ];
        let keep = vec!["NPM_*".to_string()];
        assert_eq!(
            secret_env_names(names.into_iter(), &keep),
            vec![
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "DB_PASSWORD",
                "GITHUB_TOKEN",
                "GITLAB_PAT",
                "GOOGLE_APPLICATION_CREDENTIALS",
                "OPENAI_API_KEY",
                "client_secret",
            ]
        );
    }

    #[test]
    fn hidden_paths_resolve_dedup_and_spare_the_workspace() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let home = base.join("home");
        let ws = home.join("ws");
        std::fs::create_dir_all(home.join(".ssh"))?;
        std::fs::create_dir_all(home.join("real-aws"))?;
        std::fs::create_dir_all(&ws)?;
        std::os::unix::fs::symlink(home.join("real-aws"), home.join(".aws"))?;
        std::fs::write(home.join(".netrc"), "x")?;
        let locations: Vec<String> = [
            "~/.ssh",
            "~/.ssh/id_rsa",
            "~/.aws",
            "~/.netrc",
            "~/.gnupg",
            "$AGENT_HOME/env",
            "~",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (paths, warnings) = hidden_paths(&locations, Some(&home), &home.join(".agents"), &ws);
        assert_eq!(
            paths,
            vec![
                home.join(".netrc"),
                home.join(".ssh"),
                home.join("real-aws")
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        Ok(())
    }
}
