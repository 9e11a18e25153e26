//! Custom roles (SPEC §9.1): TOML files in `$AGENT_HOME/roles/` (user) and
//! `<workspace>/.agents/roles/` (project), resolved with the built-ins into a [`RoleSet`].
//!
//! ```toml
//! [role]
//! name = "security-review"      # default: the file name without `.toml`
//! inherits = "reviewer"         # default: start from `coder`'s tools, shell policy and limits
//! description = "..."
//! shell_policy = "deny"         # track | compress | deny
//! [tools]
//! allowed = ["read_*"]          # globs over tool names; replaces the parent's list
//! denied = ["bash"]             # beats allowed; replaces the parent's list
//! [limits]                      # each inherited when absent
//! max_context_tokens = 100000
//! max_shell_invocations = 0
//! max_cost_usd = 1.5
//! ```
//!
//! Rules: names are `[A-Za-z0-9_-]{1,64}`; the child's fields win over the parent's; a cycle
//! is an error naming it; a user role may replace a built-in (its `inherits = "<same name>"`
//! or a missing `inherits` then means the built-in). Project files come from the repository,
//! which may be hostile: a project role may never shadow a built-in, may replace a user role
//! only in a trusted workspace, may inherit `admin`/`ops` (directly or through other roles)
//! only in a trusted workspace, and in an untrusted one its limits are capped at those of the
//! role it inherits (it may tighten, not loosen, §2.2).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::GovernanceError;
use super::roles::{self, DEFAULT_ROLE, Limits, PRIVILEGED, Role, RoleSource, ShellPolicy};

/// One role file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoleFile {
    #[serde(default)]
    pub(crate) role: RoleSection,
    #[serde(default)]
    pub(crate) tools: ToolsSection,
    #[serde(default)]
    pub(crate) limits: LimitsSection,
}

/// `[role]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoleSection {
    pub(crate) name: Option<String>,
    pub(crate) inherits: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) shell_policy: Option<ShellPolicy>,
}

/// `[tools]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolsSection {
    pub(crate) allowed: Option<Vec<String>>,
    pub(crate) denied: Option<Vec<String>>,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsSection {
    pub(crate) max_context_tokens: Option<u64>,
    pub(crate) max_shell_invocations: Option<u64>,
    pub(crate) max_cost_usd: Option<f64>,
}

/// A parsed, validated role file.
#[derive(Debug, Clone)]
pub(crate) struct Definition {
    pub(crate) name: String,
    pub(crate) file: RoleFile,
    pub(crate) source: RoleSource,
    pub(crate) path: PathBuf,
}

/// Every role available in a session, by name.
#[derive(Debug, Clone)]
pub struct RoleSet {
    roles: BTreeMap<String, Role>,
}

impl Default for RoleSet {
    /// The five built-in roles only.
    fn default() -> Self {
        let roles = roles::BUILTIN_NAMES
            .iter()
            .filter_map(|n| roles::builtin(n))
            .map(|r| (r.name.clone(), r))
            .collect();
        Self { roles }
    }
}

impl RoleSet {
    pub fn get(&self, name: &str) -> Option<&Role> {
        self.roles.get(name)
    }

    /// Names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.roles.keys().cloned().collect()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Role> {
        self.roles.values()
    }

    /// Loads the role files of `user_dir` and `project_dir` (missing directories are empty)
    /// and resolves them with the built-ins. Returns the set and warnings to show once.
    ///
    /// # Errors
    /// Any [`GovernanceError`] about a role file: unreadable, bad TOML or unknown key, bad
    /// name, bad glob, duplicate, cycle, unknown parent, or a project role breaking the rules
    /// in the module doc.
    pub fn load(
        user_dir: &Path,
        project_dir: &Path,
        trusted: bool,
    ) -> Result<(Self, Vec<String>), GovernanceError> {
        let user = load_dir(user_dir, RoleSource::User)?;
        let project = load_dir(project_dir, RoleSource::Project)?;
        Self::resolve(user, project, trusted)
    }

    /// Resolves parsed definitions with the built-ins (see the module doc for the rules).
    ///
    /// # Errors
    /// As for [`RoleSet::load`].
    pub(crate) fn resolve(
        user: Vec<Definition>,
        project: Vec<Definition>,
        trusted: bool,
    ) -> Result<(Self, Vec<String>), GovernanceError> {
        let mut defs: BTreeMap<String, Definition> = BTreeMap::new();
        for def in user {
            insert_unique(&mut defs, def)?;
        }
        let mut project_names: HashMap<String, PathBuf> = HashMap::new();
        for def in project {
            if roles::is_builtin(&def.name) {
                return Err(GovernanceError::ShadowsBuiltin {
                    name: def.name,
                    path: def.path,
                });
            }
            if let Some(first) = project_names.insert(def.name.clone(), def.path.clone()) {
                return Err(GovernanceError::Duplicate {
                    name: def.name,
                    first,
                    second: def.path,
                });
            }
            if let Some(user_def) = defs.get(&def.name).filter(|_| !trusted) {
                return Err(GovernanceError::ShadowsUserRole {
                    name: def.name.clone(),
                    path: def.path.clone(),
                    user_path: user_def.path.clone(),
                });
            }
            defs.insert(def.name.clone(), def);
        }
        let mut resolver = Resolver {
            defs: &defs,
            trusted,
            done: HashMap::new(),
            warnings: Vec::new(),
        };
        let mut set = Self::default();
        for name in defs.keys() {
            let resolved = resolver.resolve(name, &mut Vec::new())?;
            set.roles.insert(name.clone(), resolved.role);
        }
        Ok((set, resolver.warnings))
    }
}

fn insert_unique(
    defs: &mut BTreeMap<String, Definition>,
    def: Definition,
) -> Result<(), GovernanceError> {
    if let Some(first) = defs.get(&def.name) {
        return Err(GovernanceError::Duplicate {
            name: def.name.clone(),
            first: first.path.clone(),
            second: def.path,
        });
    }
    defs.insert(def.name.clone(), def);
    Ok(())
}

/// A resolved role and the built-in at the root of its inheritance chain.
#[derive(Debug, Clone)]
struct Resolved {
    role: Role,
    root: String,
}

struct Resolver<'a> {
    defs: &'a BTreeMap<String, Definition>,
    trusted: bool,
    done: HashMap<String, Resolved>,
    warnings: Vec<String>,
}

impl Resolver<'_> {
    /// Resolves `name` (a definition or a built-in); `stack` holds the chain being resolved.
    fn resolve(
        &mut self,
        name: &str,
        stack: &mut Vec<String>,
    ) -> Result<Resolved, GovernanceError> {
        if let Some(done) = self.done.get(name) {
            return Ok(done.clone());
        }
        if let Some(at) = stack.iter().position(|n| n == name) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(name.to_string());
            return Err(GovernanceError::Cycle { cycle });
        }
        let Some(def) = self.defs.get(name) else {
            let role = roles::builtin(name).ok_or_else(|| GovernanceError::UnknownRole {
                name: name.to_string(),
                available: Vec::new(),
            })?;
            return Ok(Resolved {
                role,
                root: name.to_string(),
            });
        };
        let parent = match def.file.role.inherits.as_deref() {
            Some(parent) if parent == name && roles::is_builtin(name) => builtin_resolved(name),
            Some(parent) => {
                stack.push(name.to_string());
                let parent_role = self.resolve(parent, stack).map_err(|e| match e {
                    GovernanceError::UnknownRole { .. } => self.unknown_parent(def, parent),
                    other => other,
                });
                stack.pop();
                parent_role?
            }
            None if roles::is_builtin(name) => builtin_resolved(name),
            None => builtin_resolved(DEFAULT_ROLE),
        };
        let resolved = self.merge(def, parent)?;
        self.done.insert(name.to_string(), resolved.clone());
        Ok(resolved)
    }

    fn unknown_parent(&self, def: &Definition, parent: &str) -> GovernanceError {
        let mut available: Vec<String> = self.defs.keys().cloned().collect();
        available.extend(roles::BUILTIN_NAMES.iter().map(|s| (*s).to_string()));
        available.sort();
        available.dedup();
        GovernanceError::UnknownParent {
            name: def.name.clone(),
            parent: parent.to_string(),
            path: def.path.clone(),
            available,
        }
    }

    /// Parent fields, then the child's (child wins, lists replace), then the project rules.
    fn merge(&mut self, def: &Definition, parent: Resolved) -> Result<Resolved, GovernanceError> {
        let file = &def.file;
        let base = parent.role;
        let limits = Limits {
            max_context_tokens: file
                .limits
                .max_context_tokens
                .unwrap_or(base.limits.max_context_tokens),
            max_shell_invocations: file
                .limits
                .max_shell_invocations
                .unwrap_or(base.limits.max_shell_invocations),
            max_cost_usd: file.limits.max_cost_usd.unwrap_or(base.limits.max_cost_usd),
        };
        let mut role = Role {
            name: def.name.clone(),
            description: file.role.description.clone().unwrap_or(base.description),
            allowed: file.tools.allowed.clone().unwrap_or(base.allowed),
            denied: file.tools.denied.clone().unwrap_or(base.denied),
            shell_policy: file.role.shell_policy.unwrap_or(base.shell_policy),
            limits,
            source: def.source,
            path: Some(def.path.clone()),
        };
        if def.source == RoleSource::Project && !self.trusted {
            if PRIVILEGED.contains(&parent.root.as_str()) {
                return Err(GovernanceError::UntrustedInherit {
                    name: def.name.clone(),
                    privileged: parent.root,
                    path: def.path.clone(),
                });
            }
            let capped = role.limits.min(base.limits);
            if capped != role.limits {
                self.warnings.push(format!(
                    "project role `{}` ({}) raises limits above the role it inherits; capped \
                     (run `agent trust` to allow)",
                    def.name,
                    def.path.display()
                ));
                role.limits = capped;
            }
        }
        Ok(Resolved {
            role,
            root: parent.root,
        })
    }
}

fn builtin_resolved(name: &str) -> Resolved {
    Resolved {
        role: roles::builtin(name).unwrap_or_else(roles::coder),
        root: name.to_string(),
    }
}

/// Parses every `*.toml` in `dir`, sorted by file name; a missing directory is empty, a
/// dangling symlink is skipped.
///
/// # Errors
/// [`GovernanceError::Read`], [`GovernanceError::Toml`], or a validation error of
/// [`parse_definition`].
pub(crate) fn load_dir(dir: &Path, source: RoleSource) -> Result<Vec<Definition>, GovernanceError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(GovernanceError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    let mut definitions = Vec::with_capacity(paths.len());
    for path in paths {
        // A dangling symlink is no file; a directory or a symlink loop named like a role file
        // is an error rather than a role that silently does not exist.
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(GovernanceError::Read { path, source }),
        };
        definitions.push(parse_definition(&text, &path, source)?);
    }
    Ok(definitions)
}

/// Parses and validates one role file; the name defaults to the file stem.
///
/// # Errors
/// [`GovernanceError::Toml`] (bad TOML, unknown key, unknown shell policy),
/// [`GovernanceError::BadName`] (the role's or its parent's name), [`GovernanceError::BadGlob`],
/// [`GovernanceError::BadLimit`] (a negative or non-finite cost).
pub(crate) fn parse_definition(
    text: &str,
    path: &Path,
    source: RoleSource,
) -> Result<Definition, GovernanceError> {
    let file: RoleFile = toml::from_str(text).map_err(|e| GovernanceError::Toml {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = file.role.name.clone().unwrap_or(stem);
    let bad_name = |name: &str| GovernanceError::BadName {
        name: name.to_string(),
        path: path.to_path_buf(),
    };
    if !roles::valid_name(&name) {
        return Err(bad_name(&name));
    }
    if let Some(parent) = file
        .role
        .inherits
        .as_deref()
        .filter(|p| !roles::valid_name(p))
    {
        return Err(bad_name(parent));
    }
    let globs = file
        .tools
        .allowed
        .iter()
        .chain(file.tools.denied.iter())
        .flatten();
    for pattern in globs {
        if let Err(e) = glob::Pattern::new(pattern) {
            return Err(GovernanceError::BadGlob {
                pattern: pattern.clone(),
                path: path.to_path_buf(),
                message: e.msg.to_string(),
            });
        }
    }
    if let Some(cost) = file
        .limits
        .max_cost_usd
        .filter(|c| !c.is_finite() || *c < 0.0)
    {
        return Err(GovernanceError::BadLimit {
            path: path.to_path_buf(),
            message: format!("max_cost_usd = `{cost}`; use a number of USD, 0 or more"),
        });
    }
    Ok(Definition {
        name,
        file,
        source,
        path: path.to_path_buf(),
    })
}
