//! The resolved `[sandbox]` settings and what the kernel offers → the session's
//! [`ExecSettings`], and the banner line (§6).
//!
//! Which mode, network and writable roots apply is decided once, in
//! [`crate::config::SandboxSettings`]; this adds the kernel's answer: without Landlock a
//! `required` sandbox refuses to start the session, any other confining mode starts with a
//! loud warning.

use std::path::PathBuf;

use super::{ExecSettings, SandboxMode, SandboxStatus, probe};
use crate::config::SandboxSettings;

/// The session's settings and the warnings to show once at start.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub(crate) exec: ExecSettings,
    pub(crate) warnings: Vec<String>,
}

/// The sandbox is required but the kernel cannot provide it: the session must not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the sandbox is required but unavailable: {reason}; run on a Linux kernel with Landlock, or choose another `--sandbox` mode"
)]
pub(crate) struct Unavailable {
    pub(crate) reason: String,
}

/// The execution settings of a session configured with `settings`, on this kernel.
///
/// # Errors
/// [`Unavailable`] when the sandbox is required and the kernel cannot provide it.
pub(crate) fn resolve(settings: &SandboxSettings) -> Result<Resolved, Unavailable> {
    resolve_with(settings, probe())
}

/// [`resolve`] with a given kernel status (for tests).
///
/// # Errors
/// As [`resolve`].
pub(crate) fn resolve_with(
    settings: &SandboxSettings,
    status: SandboxStatus,
) -> Result<Resolved, Unavailable> {
    let mut warnings = settings.warnings.clone();
    check_available(settings.mode, settings.required, &status, &mut warnings)?;
    let exec = ExecSettings {
        mode: settings.mode,
        required: settings.required,
        network: settings.network,
        writable_roots: settings.writable_roots.clone(),
        env_remove: settings.env_remove.clone(),
        status,
        helper: helper_path(),
        ..ExecSettings::default()
    };
    Ok(Resolved { exec, warnings })
}

fn check_available(
    mode: SandboxMode,
    required: bool,
    status: &SandboxStatus,
    warnings: &mut Vec<String>,
) -> Result<(), Unavailable> {
    let SandboxStatus::Unavailable { reason } = status else {
        return Ok(());
    };
    if required {
        return Err(Unavailable {
            reason: reason.clone(),
        });
    }
    if mode != SandboxMode::Off {
        warnings.push(format!(
            "NO SANDBOX: {reason}. Shell commands will run unconfined and can write anywhere you can. Use `--sandbox required` to refuse to run instead, or `--sandbox off` to acknowledge."
        ));
    }
    Ok(())
}

/// The helper program: this very binary, even if the file was replaced since it started.
fn helper_path() -> PathBuf {
    if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("agent"))
    }
}

/// The one-line description of shell confinement shown when a session starts.
pub(crate) fn banner(exec: &ExecSettings) -> String {
    let network = if exec.network {
        "network on"
    } else {
        "network off"
    };
    match (&exec.status, exec.mode) {
        (_, SandboxMode::Off) => "sandbox off: shell commands are not confined".to_string(),
        (SandboxStatus::Available { abi }, mode) => {
            format!("sandbox {}, {network} (Landlock ABI {abi})", mode.name())
        }
        (SandboxStatus::Unavailable { .. }, _) => {
            "NO SANDBOX: Landlock unavailable, shell commands run unconfined".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const AVAILABLE: SandboxStatus = SandboxStatus::Available { abi: 7 };

    #[test]
    fn the_banner_names_mode_network_and_abi() {
        let resolved =
            resolve_with(&SandboxSettings::default(), AVAILABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            banner(&resolved.exec),
            "sandbox workspace-write, network off (Landlock ABI 7)"
        );
        assert!(resolved.warnings.is_empty());
    }

    #[test]
    fn unavailable_warns_loudly_or_refuses_when_required() {
        let gone = SandboxStatus::Unavailable {
            reason: "no Landlock".into(),
        };
        let resolved = resolve_with(&SandboxSettings::default(), gone.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(resolved.warnings[0].starts_with("NO SANDBOX: no Landlock."));
        assert!(banner(&resolved.exec).starts_with("NO SANDBOX"));
        let required = SandboxSettings {
            required: true,
            ..SandboxSettings::default()
        };
        let error = resolve_with(&required, gone).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the sandbox is required but unavailable: no Landlock; run on a Linux kernel with Landlock, or choose another `--sandbox` mode"
            )
        );
    }

    #[test]
    fn configured_warnings_come_first() {
        let settings = SandboxSettings {
            warnings: vec!["writable root `/x` is not a directory; ignored".into()],
            ..SandboxSettings::default()
        };
        let gone = SandboxStatus::Unavailable {
            reason: "no Landlock".into(),
        };
        let resolved = resolve_with(&settings, gone).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(resolved.warnings.len(), 2);
        assert_eq!(resolved.warnings[0], settings.warnings[0]);
    }
}
