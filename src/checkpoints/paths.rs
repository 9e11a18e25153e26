//! Workspace-relative paths as bytes (file names may hold newlines or bytes that are not
//! UTF-8), their JSON form, and where a workspace's shadow repository lives.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A path relative to the workspace root, as git stores it: bytes, `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RelPath(pub Vec<u8>);

impl RelPath {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path under `root`.
    pub(crate) fn under(&self, root: &Path) -> PathBuf {
        root.join(OsStr::from_bytes(&self.0))
    }

    /// For the screen: lossy UTF-8, control characters escaped (`\n`, `\x1b`).
    pub(crate) fn shown(&self) -> String {
        let text = String::from_utf8_lossy(&self.0);
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out
    }

    /// The parent directory's path (`None` at the top).
    pub(crate) fn parent(&self) -> Option<RelPath> {
        let at = self.0.iter().rposition(|&b| b == b'/')?;
        Some(RelPath(self.0[..at].to_vec()))
    }

    /// Number of `/`-separated components.
    pub(crate) fn depth(&self) -> usize {
        self.0.iter().filter(|&&b| b == b'/').count() + 1
    }
}

/// JSON form: a string when the bytes are UTF-8, else an array of byte values.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    Bytes(Vec<u8>),
}

impl Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => Wire::Text(text.to_string()),
            Err(_) => Wire::Bytes(self.0.clone()),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Wire::deserialize(deserializer)? {
            Wire::Text(text) => RelPath(text.into_bytes()),
            Wire::Bytes(bytes) => RelPath(bytes),
        })
    }
}

/// `<name>-<16 hex digits>`: the workspace directory's name (letters, digits, `-`, `_`,
/// `.` kept, at most 40 characters) and an FNV-1a 64 hash of its canonical path, so two
/// workspaces with the same name do not share a repository.
pub(crate) fn workspace_id(workspace: &Path) -> String {
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{:016x}", fnv1a(workspace.as_os_str().as_bytes()))
}

/// FNV-1a, 64 bits (a stable hash: the same input gives the same value in every version).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_json_whatever_their_bytes() {
        for bytes in [
            b"src/main.rs".to_vec(),
            b"line\nbreak".to_vec(),
            vec![b'a', 0xff, 0xfe, b'/', b'b'],
        ] {
            let path = RelPath(bytes);
            let json = serde_json::to_string(&path).unwrap();
            assert_eq!(
                serde_json::from_str::<RelPath>(&json).unwrap(),
                path,
                "{json}"
            );
        }
        assert_eq!(
            serde_json::to_string(&RelPath(vec![0xff])).unwrap(),
            "[255]"
        );
    }

    #[test]
    fn shown_paths_have_no_control_characters() {
        assert_eq!(RelPath(b"a\nb\x1b[31m".to_vec()).shown(), "a\\nb\\x1b[31m");
        assert_eq!(
            RelPath(b"a/b/c".to_vec()).parent(),
            Some(RelPath(b"a/b".to_vec()))
        );
        assert_eq!(RelPath(b"a".to_vec()).parent(), None);
        assert_eq!(RelPath(b"a/b/c".to_vec()).depth(), 3);
    }

    #[test]
    fn workspace_ids_are_stable_and_distinct() {
        let a = workspace_id(Path::new("/home/me/my project"));
        assert!(a.starts_with("my_project-"), "{a}");
        assert_eq!(a, workspace_id(Path::new("/home/me/my project")));
        assert_ne!(a, workspace_id(Path::new("/tmp/my project")));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    }
}
