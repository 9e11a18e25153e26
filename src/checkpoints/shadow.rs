//! The shadow repository of one workspace: `$AGENT_HOME/checkpoints/<workspace id>/`.
//!
//! Layout: `git/` (a bare repository: objects, refs, the shadow index, `info/attributes`),
//! `ledger.jsonl` ([`super::ledger`]), `last` (the newest snapshot and its key, so an
//! unchanged workspace reuses it), `lock` (held while a snapshot or restore runs, so two
//! sessions in one workspace take turns), `workspace` (the workspace path, for people).
//!
//! A snapshot is a root commit whose tree is the workspace and whose message holds the
//! [`Meta`] (what was not captured, exact permission bits). Every commit gets a ref
//! `refs/checkpoints/<commit>`, the only roots [`super::prune`] keeps. The shadow index's
//! stat cache makes a snapshot of an unchanged tree cost a walk and reading the index: git
//! only sees new and changed files, and a new commit is made only when the tree or the meta
//! changed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::CheckpointError;
use super::git::{ATTRIBUTES, Git, GitError};
use super::index;
use super::paths::{RelPath, fnv1a};
use super::walk::{self, Skipped};

/// At most this many `update-index` calls while isolating files git refuses one by one.
const MAX_ADD_CALLS: usize = 64;
/// A git `index.lock` older than this, found while holding the store's lock, was left by a
/// git that died (a live `git update-index` of a whole tree takes seconds).
const STALE_GIT_LOCK: Duration = Duration::from_secs(120);
/// Waiting this long for the store's lock, the user is told what holds it.
const LOCK_NOTICE_AFTER: Duration = Duration::from_secs(1);
/// Waiting this long for the store's lock ends in [`CheckpointError::Busy`] (a `git gc` of
/// a large shadow repository on a loaded machine takes a minute at most).
const LOCK_PATIENCE: Duration = Duration::from_secs(180);
/// Files handed to git at a time while warming the index, so a stop is seen between batches.
const WARM_BATCH: usize = 1_000;

/// What a snapshot's commit message holds besides the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// Paths that were not captured, and why.
    #[serde(default)]
    pub(crate) skipped: Vec<Skipped>,
    /// Permission bits of files whose bits are not the default for their git mode.
    #[serde(default, with = "perm_list")]
    pub(crate) perms: BTreeMap<RelPath, u32>,
}

impl Meta {
    /// The permission bits of a captured file with git mode `mode`.
    pub(crate) fn perms_of(&self, path: &RelPath, mode: u32) -> u32 {
        self.perms
            .get(path)
            .copied()
            .unwrap_or_else(|| walk::default_perms(mode == 0o100_755))
    }

    /// What identifies the meta for "did anything change" (sizes of skipped files do not).
    fn key(&self) -> u64 {
        let mut bytes = Vec::new();
        for skipped in &self.skipped {
            bytes.extend_from_slice(skipped.path.as_bytes());
            bytes.push(0);
        }
        bytes.push(1);
        for (path, perms) in &self.perms {
            bytes.extend_from_slice(path.as_bytes());
            bytes.extend_from_slice(&perms.to_le_bytes());
        }
        fnv1a(&bytes)
    }
}

/// `perms` as a list of `[path, bits]` pairs (JSON object keys must be strings).
mod perm_list {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::RelPath;

    pub(crate) fn serialize<S: Serializer>(
        map: &BTreeMap<RelPath, u32>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        map.iter().collect::<Vec<_>>().serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<RelPath, u32>, D::Error> {
        Ok(Vec::<(RelPath, u32)>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

/// One saved state of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The commit in the shadow repository.
    pub(crate) commit: String,
    /// Files and links captured.
    pub files: usize,
    pub(crate) skipped: Vec<Skipped>,
    /// This was the workspace's first snapshot (every file was hashed).
    pub(crate) first: bool,
    /// A new commit was made (the workspace differed from the last snapshot).
    pub created: bool,
    pub(crate) took: Duration,
}

/// One entry of a snapshot's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Git's mode: `0o100644`, `0o100755`, `0o120000` (link), `0o160000` (never made here).
    pub(crate) mode: u32,
    /// The blob's object id.
    pub(crate) oid: String,
}

impl Entry {
    pub(crate) fn is_link(&self) -> bool {
        self.mode == 0o120_000
    }
}

/// The shadow repository of one workspace.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    git: Git,
    dir: PathBuf,
    workspace: PathBuf,
    max_file_bytes: u64,
}

/// Held while the store is in use; released when dropped, and by every process it was
/// handed to ([`Lock::hand_to`]) when that exits.
pub(crate) struct Lock(File);

impl Lock {
    /// Writes what holds the lock into the lock file, for whoever waits for it.
    pub(crate) fn describe(&self, holder: &str) {
        use std::os::unix::fs::FileExt;
        let _ = self.0.set_len(0);
        let _ = self.0.write_all_at(holder.as_bytes(), 0);
    }

    /// Makes `command`'s process hold the lock too: its descriptor is inherited, and a
    /// `flock` lasts while any process holds the descriptor, so the lock outlives this
    /// process while the child (and its own children) run.
    pub(crate) fn hand_to(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let fd = self.0.as_raw_fd();
        // SAFETY: between fork and exec only `fcntl` runs, which is async-signal-safe; it
        // clears close-on-exec on a descriptor this guard keeps open.
        unsafe {
            command.pre_exec(move || {
                if libc::fcntl(fd, libc::F_SETFD, 0) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
}

/// How a wait for the store's lock goes.
pub(crate) struct Wait<'a> {
    /// Asked every 10 ms while waiting; `true` ends the wait
    /// ([`CheckpointError::Interrupted`]).
    pub(crate) stop: &'a (dyn Fn() -> bool + Sync),
    /// Told once, after [`LOCK_NOTICE_AFTER`] of waiting, what holds the lock.
    pub(crate) notice: &'a (dyn Fn(&str) + Sync),
}

#[cfg(test)]
impl Wait<'static> {
    /// Never stops early, says nothing.
    pub(crate) const QUIET: Wait<'static> = Wait {
        stop: &|| false,
        notice: &|_| {},
    };
}

/// What the lock file says holds the lock.
fn holder(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "another agent process".into())
}

impl Store {
    /// The store for `workspace` in `dir`, using the `git` program at `git`. Nothing is
    /// created until the first snapshot.
    pub(crate) fn new(git: PathBuf, dir: PathBuf, workspace: PathBuf, max_file_bytes: u64) -> Self {
        Self {
            git: Git::new(git, dir.join("git"), workspace.clone()),
            dir,
            workspace,
            max_file_bytes,
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    pub(crate) fn git(&self) -> &Git {
        &self.git
    }

    /// Whether the workspace has had a snapshot (the shadow index exists).
    pub(crate) fn is_warm(&self) -> bool {
        self.git.git_dir().join("index").exists()
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> CheckpointError {
        let path = path.to_path_buf();
        move |e| CheckpointError::Io {
            path: path.clone(),
            message: e.to_string(),
        }
    }

    /// Takes the store's lock, creating the directory (mode 0700) when needed. Waits while
    /// another holder has it (another session's snapshot or restore, a `git gc` started
    /// after a turn): `wait.stop` is asked every 10 ms, so the user's Ctrl-C is not held up
    /// by it, and after [`LOCK_NOTICE_AFTER`] `wait.notice` is told once what holds the
    /// lock (its holder writes that into the lock file, [`Lock::describe`]). Holding it,
    /// removes a git `index.lock` older than [`STALE_GIT_LOCK`]: every git that writes the
    /// shadow index runs under this lock, so such a file is left by a git killed mid-write
    /// (`kill -9`, the OOM killer), and would otherwise make every later snapshot fail.
    ///
    /// # Errors
    /// [`CheckpointError::Io`] when the directory or lock file cannot be made;
    /// [`CheckpointError::Interrupted`] when `stop` said so; [`CheckpointError::Busy`]
    /// after [`LOCK_PATIENCE`] of waiting.
    pub(crate) fn lock_with(&self, wait: &Wait<'_>) -> Result<Lock, CheckpointError> {
        self.lock_within(wait, LOCK_NOTICE_AFTER, LOCK_PATIENCE)
    }

    /// [`Self::lock_with`], quiet and never stopped early (tests).
    #[cfg(test)]
    pub(crate) fn lock(&self) -> Result<Lock, CheckpointError> {
        self.lock_with(&Wait::QUIET)
    }

    /// [`Self::lock_with`], quiet, stopped by `stop` (tests).
    #[cfg(test)]
    pub(crate) fn lock_until(
        &self,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Lock, CheckpointError> {
        self.lock_with(&Wait {
            stop,
            notice: &|_| {},
        })
    }

    fn lock_within(
        &self,
        wait: &Wait<'_>,
        notice_after: Duration,
        patience: Duration,
    ) -> Result<Lock, CheckpointError> {
        create_private_dir(&self.dir).map_err(self.io(&self.dir))?;
        let path = self.dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(self.io(&path))?;
        let started = Instant::now();
        let mut told = false;
        loop {
            // SAFETY: flock on a descriptor owned by `file`, which the returned guard keeps
            // open.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                break;
            }
            let error = std::io::Error::last_os_error();
            if !matches!(error.raw_os_error(), Some(libc::EWOULDBLOCK | libc::EINTR)) {
                return Err(self.io(&path)(error));
            }
            if (wait.stop)() {
                return Err(CheckpointError::Interrupted);
            }
            // The notice comes first, so a wait that ends in `Busy` has always said what it
            // waited for (also when one slow try already used up the patience).
            let waited = started.elapsed();
            if !told && waited >= notice_after {
                told = true;
                (wait.notice)(&format!(
                    "waiting for {} to finish with the checkpoints ({})…",
                    holder(&path),
                    self.dir.display()
                ));
            }
            if waited >= patience {
                return Err(CheckpointError::Busy {
                    holder: holder(&path),
                    secs: waited.as_secs(),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let lock = Lock(file);
        lock.describe(&format!(
            "agent process {} (a snapshot or restore)",
            std::process::id()
        ));
        let git_lock = self.git.git_dir().join("index.lock");
        let stale = std::fs::symlink_metadata(&git_lock)
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > STALE_GIT_LOCK));
        if stale {
            let _ = std::fs::remove_file(&git_lock);
        }
        Ok(lock)
    }

    /// Creates the repository on first use; `true` when it was created now.
    fn init(&self) -> Result<bool, CheckpointError> {
        let git_dir = self.git.git_dir();
        if git_dir.join("HEAD").exists() {
            return Ok(false);
        }
        self.git.init()?;
        let info = git_dir.join("info");
        std::fs::create_dir_all(&info).map_err(self.io(&info))?;
        let attributes = info.join("attributes");
        std::fs::write(&attributes, ATTRIBUTES).map_err(self.io(&attributes))?;
        let note = self.dir.join("workspace");
        let _ = std::fs::write(&note, format!("{}\n", self.workspace.display()));
        Ok(true)
    }

    /// Records the workspace as it is now. Call with the lock held.
    ///
    /// Only paths that are new or whose stat data differ from the shadow index's are handed
    /// to git ([`super::index`]); with none, and the index as the last snapshot left it,
    /// the last tree is reused and git is not run at all.
    ///
    /// # Errors
    /// [`CheckpointError`] when the repository cannot be written (a full disk, a read-only
    /// directory) or git fails for the whole tree; nothing is recorded then. Files git
    /// refuses one by one are listed in [`Snapshot::skipped`] instead.
    pub(crate) fn snapshot(
        &self,
        _lock: &Lock,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Snapshot, CheckpointError> {
        let started = Instant::now();
        let first = self.init()? || !self.is_warm();
        let walk = walk::walk(&self.workspace, self.max_file_bytes, stop)
            .ok_or(CheckpointError::Interrupted)?;
        let index_file = self.git.git_dir().join("index");
        let cache = if first {
            None
        } else {
            index::read(&index_file)
        };
        let mut skipped = walk.skipped;
        let mut candidates = Vec::new();
        for (path, stat) in walk.paths.iter().zip(&walk.stats) {
            if cache
                .as_ref()
                .is_some_and(|c| c.unchanged(path.as_bytes(), stat))
            {
                continue;
            }
            if stat.mode != 0o120_000 && !walk::readable(&path.under(&self.workspace)) {
                skipped.push(Skipped {
                    path: path.clone(),
                    reason: walk::SkipReason::Unreadable {
                        message: "permission denied".into(),
                    },
                });
                continue;
            }
            candidates.push(path.clone());
        }
        let old: Vec<RelPath> = match (&cache, first) {
            (Some(cache), _) => cache.paths().map(|p| RelPath(p.clone())).collect(),
            (None, true) => Vec::new(),
            (None, false) => self.index_paths()?,
        };
        let mut calls = 0;
        let mut refused = Vec::new();
        self.add(&candidates, &mut refused, &mut calls)?;
        skipped.extend(refused);
        let left_out: HashSet<&[u8]> = skipped.iter().map(|s| s.path.as_bytes()).collect();
        let captured: HashSet<&[u8]> = walk
            .paths
            .iter()
            .map(RelPath::as_bytes)
            .filter(|p| !left_out.contains(p))
            .collect();
        let stale: Vec<&RelPath> = old
            .iter()
            .filter(|p| !captured.contains(p.as_bytes()))
            .collect();
        if !stale.is_empty() {
            calls += 1;
            self.git.run(
                &["update-index", "--force-remove", "-z", "--stdin"],
                Some(&nul_list(stale.iter().copied())),
            )?;
        }
        let files = captured.len();
        let mut perms = walk.perms;
        perms.retain(|path, _| captured.contains(path.as_bytes()));
        let meta = Meta { skipped, perms };
        let last = Last::read(&self.dir);
        let index_now = IndexStamp::of(&index_file);
        let tree = match last.as_ref() {
            Some(last) if calls == 0 && index_now.is_some() && last.index == index_now => {
                last.tree.clone()
            }
            _ => self.git.text(&["write-tree"], None)?,
        };
        let (commit, created) = self.commit(&tree, &meta, last.as_ref())?;
        Ok(Snapshot {
            commit,
            files,
            skipped: meta.skipped,
            first,
            created,
            took: started.elapsed(),
        })
    }

    /// Builds the shadow index from the workspace without recording a snapshot, so the
    /// first snapshot only stats files (see [`super::warm`]). Call with the lock held. Files
    /// go to git [`WARM_BATCH`] at a time and `stop` is asked before each batch; an index
    /// left half built is still correct (a snapshot hands git every file it lacks). Files
    /// git refuses are left out here; the snapshot finds them again and says so.
    ///
    /// # Errors
    /// [`CheckpointError::Interrupted`] when `stop` said so; otherwise as [`Self::snapshot`].
    pub(crate) fn warm(
        &self,
        _lock: &Lock,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<(), CheckpointError> {
        self.init()?;
        if self.is_warm() {
            return Ok(());
        }
        let walk = walk::walk(&self.workspace, self.max_file_bytes, stop)
            .ok_or(CheckpointError::Interrupted)?;
        let readable: Vec<RelPath> = walk
            .paths
            .iter()
            .zip(&walk.stats)
            .filter(|(path, stat)| {
                stat.mode == 0o120_000 || walk::readable(&path.under(&self.workspace))
            })
            .map(|(path, _)| path.clone())
            .collect();
        for batch in readable.chunks(WARM_BATCH) {
            if stop() {
                return Err(CheckpointError::Interrupted);
            }
            self.add(batch, &mut Vec::new(), &mut 0)?;
        }
        Ok(())
    }

    /// The paths in the shadow index.
    fn index_paths(&self) -> Result<Vec<RelPath>, GitError> {
        let out = self.git.run(&["ls-files", "-z"], None)?;
        Ok(split_nul(&out).map(|p| RelPath(p.to_vec())).collect())
    }

    /// Adds `paths` to the shadow index (unchanged files cost a `stat`). When git refuses
    /// the list, the paths are halved until the refused ones are isolated, each becoming a
    /// [`Skipped`] entry with git's message, within [`MAX_ADD_CALLS`] calls.
    fn add(
        &self,
        paths: &[RelPath],
        refused: &mut Vec<Skipped>,
        calls: &mut usize,
    ) -> Result<(), CheckpointError> {
        if paths.is_empty() {
            return Ok(());
        }
        *calls += 1;
        let result = self.git.run(
            &["update-index", "--add", "--remove", "-z", "--stdin"],
            Some(&nul_list(paths.iter())),
        );
        match result {
            Ok(_) => Ok(()),
            Err(error) if *calls >= MAX_ADD_CALLS => Err(error.into()),
            Err(error) if paths.len() == 1 => {
                refused.push(Skipped {
                    path: paths[0].clone(),
                    reason: walk::SkipReason::Unreadable {
                        message: error.message,
                    },
                });
                Ok(())
            }
            Err(_) => {
                let (a, b) = paths.split_at(paths.len() / 2);
                self.add(a, refused, calls)?;
                self.add(b, refused, calls)
            }
        }
    }

    /// The commit for `tree` + `meta`: the last one when both are unchanged, else a new
    /// root commit with a ref. `true` when a commit was made.
    fn commit(
        &self,
        tree: &str,
        meta: &Meta,
        last: Option<&Last>,
    ) -> Result<(String, bool), CheckpointError> {
        let key = format!("{:016x}", meta.key());
        let index = IndexStamp::of(&self.git.git_dir().join("index"));
        if let Some(last) = last
            && last.tree == tree
            && last.meta == key
        {
            if last.index != index {
                Last {
                    index,
                    ..last.clone()
                }
                .write(&self.dir)
                .map_err(self.io(&self.dir))?;
            }
            return Ok((last.commit.clone(), false));
        }
        let json = serde_json::to_string(meta).map_err(|e| CheckpointError::Io {
            path: self.dir.clone(),
            message: e.to_string(),
        })?;
        let message = format!("agent checkpoint\n\n{json}\n");
        let commit = self
            .git
            .text(&["commit-tree", tree], Some(message.as_bytes()))?;
        let name = format!("refs/checkpoints/{commit}");
        self.git.run(&["update-ref", &name, &commit], None)?;
        Last {
            tree: tree.to_string(),
            meta: key,
            commit: commit.clone(),
            index,
        }
        .write(&self.dir)
        .map_err(self.io(&self.dir))?;
        Ok((commit, true))
    }

    /// Every file and link of snapshot `commit`, by path.
    ///
    /// # Errors
    /// [`GitError`] when the commit cannot be read.
    pub(crate) fn entries(&self, commit: &str) -> Result<BTreeMap<RelPath, Entry>, GitError> {
        let out = self
            .git
            .run(&["ls-tree", "-r", "-z", "--full-tree", commit], None)?;
        let mut entries = BTreeMap::new();
        for record in split_nul(&out) {
            // `<mode> SP <type> SP <object> TAB <path>`
            let Some(tab) = record.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let head = String::from_utf8_lossy(&record[..tab]);
            let mut fields = head.split(' ');
            let (Some(mode), Some(_), Some(oid)) = (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Ok(mode) = u32::from_str_radix(mode, 8) else {
                continue;
            };
            entries.insert(
                RelPath(record[tab + 1..].to_vec()),
                Entry {
                    mode,
                    oid: oid.to_string(),
                },
            );
        }
        Ok(entries)
    }

    /// The [`Meta`] of snapshot `commit` (empty for a commit without one).
    ///
    /// # Errors
    /// [`GitError`] when the commit cannot be read.
    pub(crate) fn meta(&self, commit: &str) -> Result<Meta, GitError> {
        let out = self.git.run(&["cat-file", "commit", commit], None)?;
        let text = String::from_utf8_lossy(&out);
        let body = text.split_once("\n\n").map_or("", |(_, body)| body);
        let json = body.split_once("\n\n").map_or("", |(_, json)| json);
        Ok(serde_json::from_str(json.trim()).unwrap_or_default())
    }

    /// Paths whose file or link differs between snapshots `a` and `b` (content, kind or
    /// executable bit; renames are a removal and an addition).
    ///
    /// # Errors
    /// [`GitError`] when a commit cannot be read.
    pub(crate) fn changed(&self, a: &str, b: &str) -> Result<BTreeSet<RelPath>, GitError> {
        if a == b {
            return Ok(BTreeSet::new());
        }
        let out = self.git.run(
            &["diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b],
            None,
        )?;
        Ok(split_nul(&out).map(|p| RelPath(p.to_vec())).collect())
    }

    /// The contents of the blobs `oids`.
    ///
    /// # Errors
    /// [`GitError`] when git cannot read them (a missing object).
    pub(crate) fn blobs(&self, oids: &[&str]) -> Result<HashMap<String, Vec<u8>>, GitError> {
        let mut wanted: Vec<&str> = oids.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let input: String = wanted.iter().map(|oid| format!("{oid}\n")).collect();
        let out = self
            .git
            .run(&["cat-file", "--batch"], Some(input.as_bytes()))?;
        parse_batch(&out).ok_or_else(|| GitError {
            command: "cat-file --batch".into(),
            message: "unexpected output".into(),
        })
    }

    /// Bytes used by the store on disk.
    pub(crate) fn disk_use(&self) -> u64 {
        dir_size(&self.dir)
    }
}

/// The index file's mtime and size, to tell whether anything wrote it since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct IndexStamp {
    secs: i64,
    nanos: i64,
    size: u64,
}

impl IndexStamp {
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(Self {
            secs: meta.mtime(),
            nanos: meta.mtime_nsec(),
            size: meta.len(),
        })
    }
}

/// The newest snapshot (`last`): reused while the workspace does not change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Last {
    tree: String,
    /// [`Meta`]'s key, hex.
    meta: String,
    commit: String,
    /// The index as this snapshot left it.
    index: Option<IndexStamp>,
}

impl Last {
    fn read(dir: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(dir.join("last")).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn write(&self, dir: &Path) -> std::io::Result<()> {
        let json = serde_json::to_string(self).map_err(std::io::Error::other)?;
        write_atomic(&dir.join("last"), json.as_bytes())
    }
}

/// The commit of the newest snapshot, if any (kept by pruning).
pub(crate) fn last_commit(dir: &Path) -> Option<String> {
    Last::read(dir).map(|last| last.commit)
}

/// `cat-file --batch` output: `<oid> <type> <size>\n<bytes>\n` per object.
fn parse_batch(mut out: &[u8]) -> Option<HashMap<String, Vec<u8>>> {
    let mut blobs = HashMap::new();
    while !out.is_empty() {
        let end = out.iter().position(|&b| b == b'\n')?;
        let header = String::from_utf8_lossy(&out[..end]).into_owned();
        out = &out[end + 1..];
        let mut fields = header.split(' ');
        let oid = fields.next()?.to_string();
        if fields.next()? == "missing" {
            return None;
        }
        let size: usize = fields.next()?.parse().ok()?;
        let bytes = out.get(..size)?.to_vec();
        out = out.get(size + 1..)?;
        blobs.insert(oid, bytes);
    }
    Some(blobs)
}

fn split_nul(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|&b| b == 0).filter(|p| !p.is_empty())
}

fn nul_list<'a>(paths: impl Iterator<Item = &'a RelPath>) -> Vec<u8> {
    let mut out = Vec::new();
    for path in paths {
        out.extend_from_slice(path.as_bytes());
        out.push(0);
    }
    out
}

/// Creates `dir` and its parents, the last one private to the user.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn dir_size(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_size(&entry.path()),
            Ok(meta) => meta.blocks() * 512,
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_output_is_parsed_by_size_not_by_lines() {
        let out = b"aaa blob 3\na\nb\nbbb blob 0\n\n";
        let blobs = parse_batch(out).unwrap();
        assert_eq!(blobs["aaa"], b"a\nb");
        assert_eq!(blobs["bbb"], b"");
        assert_eq!(parse_batch(b"ccc missing\n"), None);
    }

    #[test]
    fn meta_key_ignores_sizes_of_skipped_files() {
        let skipped = |bytes| Meta {
            skipped: vec![Skipped {
                path: RelPath(b"big".to_vec()),
                reason: walk::SkipReason::TooLarge { bytes, cap: 10 },
            }],
            perms: BTreeMap::new(),
        };
        assert_eq!(skipped(20).key(), skipped(30).key());
        assert_ne!(skipped(20).key(), Meta::default().key());
        let json = serde_json::to_string(&skipped(20)).unwrap();
        assert_eq!(serde_json::from_str::<Meta>(&json).unwrap(), skipped(20));
    }
}

#[cfg(test)]
mod store_tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::sync::Mutex;

    fn store(home: &Path, ws: &Path) -> Option<Store> {
        let path = std::env::var("PATH").ok();
        let Some(git) = super::super::git::find(path.as_deref()) else {
            eprintln!("skipped: no git on PATH");
            return None;
        };
        Some(Store::new(
            git,
            home.join("cp"),
            ws.to_path_buf(),
            1_000_000,
        ))
    }

    #[test]
    fn a_stale_git_index_lock_is_removed_and_a_fresh_one_is_respected() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a"), "one").unwrap();
        let Some(store) = store(home.path(), ws.path()) else {
            return;
        };
        store.snapshot(&store.lock().unwrap(), &|| false).unwrap();
        std::fs::write(ws.path().join("a"), "two").unwrap();
        // A fresh lock may belong to a git still running: left alone, the snapshot fails.
        let git_lock = store.git.git_dir().join("index.lock");
        std::fs::write(&git_lock, "").unwrap();
        let refused = store.snapshot(&store.lock().unwrap(), &|| false);
        assert!(
            matches!(refused, Err(CheckpointError::Git(_))),
            "{refused:?}"
        );
        assert!(git_lock.exists());
        // Left by a git killed an hour ago: removed when the lock is taken.
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&git_lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let lock = store.lock().unwrap();
        assert!(!git_lock.exists());
        // While the lock is held, a waiter that is told to stop gives up.
        let waiting = store.lock_until(&|| true);
        assert!(matches!(waiting, Err(CheckpointError::Interrupted)));
        assert!(store.snapshot(&lock, &|| false).unwrap().created);
    }

    #[test]
    fn a_long_wait_for_the_lock_says_what_holds_it_then_gives_up() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let Some(store) = store(home.path(), ws.path()) else {
            return;
        };
        let held = store.lock().unwrap();
        let told = Mutex::new(Vec::new());
        let notice = |message: &str| told.lock().unwrap().push(message.to_string());
        let wait = Wait {
            stop: &|| false,
            notice: &notice,
        };
        let busy = store.lock_within(&wait, Duration::ZERO, Duration::from_millis(50));
        let me = format!("agent process {}", std::process::id());
        match busy {
            Err(CheckpointError::Busy { holder, .. }) => assert!(holder.contains(&me), "{holder}"),
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("locked twice"),
        }
        let told = told.lock().unwrap().clone();
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(
            told[0].starts_with(&format!("waiting for {me}")),
            "{told:?}"
        );
        drop(held);
        // Not a zero wait: a process another test forks at this moment holds a copy of the
        // lock's descriptor until it execs.
        assert!(
            store
                .lock_within(&wait, Duration::from_secs(5), Duration::from_secs(5))
                .is_ok()
        );
    }

    #[test]
    fn a_lock_handed_to_a_child_is_held_until_the_child_exits() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let Some(store) = store(home.path(), ws.path()) else {
            return;
        };
        let lock = store.lock().unwrap();
        let mut command = std::process::Command::new("sleep");
        command.arg("30");
        lock.hand_to(&mut command);
        let mut child = command.spawn().unwrap();
        lock.describe("a sleeping child");
        // As when this process exits: only the child holds it now.
        drop(lock);
        match store.lock_until(&|| true) {
            Err(CheckpointError::Interrupted) => {}
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("the child's lock was taken"),
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(store.lock().is_ok());
    }

    #[test]
    fn snapshots_reuse_an_unchanged_tree_and_see_every_kind_of_change() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path();
        std::fs::write(ws.join("a"), "one").unwrap();
        std::fs::write(ws.join("b"), "two").unwrap();
        let Some(store) = store(home.path(), ws) else {
            return;
        };
        let lock = store.lock().unwrap();
        let first = store.snapshot(&lock, &|| false).unwrap();
        assert!(first.first && first.created);
        assert_eq!(first.files, 2);
        let again = store.snapshot(&lock, &|| false).unwrap();
        assert_eq!(
            (again.commit.as_str(), again.created),
            (first.commit.as_str(), false)
        );
        // Same size, written right away: the stat data still tell.
        std::fs::write(ws.join("a"), "ONE").unwrap();
        let edited = store.snapshot(&lock, &|| false).unwrap();
        assert!(edited.created);
        let entries = store.entries(&edited.commit).unwrap();
        let oid = entries[&RelPath(b"a".to_vec())].oid.clone();
        assert_eq!(store.blobs(&[&oid]).unwrap()[&oid], b"ONE");
        std::fs::remove_file(ws.join("b")).unwrap();
        std::fs::set_permissions(ws.join("a"), PermissionsExt::from_mode(0o600)).unwrap();
        let later = store.snapshot(&lock, &|| false).unwrap();
        let entries = store.entries(&later.commit).unwrap();
        assert_eq!(
            entries.keys().collect::<Vec<_>>(),
            vec![&RelPath(b"a".to_vec())]
        );
        let meta = store.meta(&later.commit).unwrap();
        assert_eq!(meta.perms_of(&RelPath(b"a".to_vec()), 0o100_644), 0o600);
        assert_eq!(
            store.changed(&first.commit, &later.commit).unwrap().len(),
            2
        );
    }
}
