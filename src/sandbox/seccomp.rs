//! The seccomp filter the helper installs after Landlock: what Landlock cannot express.
//!
//! Always refused (`EPERM`): loading kernel modules, kexec, reboot, swap, `open_by_handle_at`
//! (opens files by inode, around path rules), bpf, perf events, userfaultfd, kernel keyrings,
//! io_uring (its operations bypass seccomp), clock setting, mounts (the old and the new mount
//! API, so the namespaces' hidden and read-only mounts cannot be undone), quotas, raw port I/O, and
//! the `TIOCSTI`/`TIOCLINUX` ioctls (keystroke injection into a terminal). Mostly matters when
//! the agent runs as root, where Landlock alone leaves these capabilities usable.
//!
//! With network off: every `socket()` except TCP over IPv4/IPv6 is refused (UDP and so DNS,
//! raw, packet, netlink, and Unix-domain sockets, which reach docker, dbus and other services
//! outside the sandbox); TCP sockets may be created but Landlock refuses their connect and
//! bind; where the kernel has no Landlock TCP rules (ABI < 4) TCP sockets are refused too.
//! `listen()` and TCP fast-open sends (an implicit connect) are refused. `socketpair()` and
//! pipes keep working.

use std::collections::BTreeMap;

/// Why the seccomp filter could not be built or installed (seccompiler's message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FilterError(String);

impl FilterError {
    fn of(error: impl std::fmt::Display) -> Self {
        Self(error.to_string())
    }
}
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// `TIOCSTI` and `TIOCLINUX` from `<asm-generic/ioctls.h>`.
const DENIED_IOCTLS: &[u64] = &[0x5412, 0x541C];
/// `MSG_FASTOPEN` from `<sys/socket.h>`.
const MSG_FASTOPEN: u64 = 0x2000_0000;
/// Socket types other than `SOCK_STREAM` (low 4 bits of `socket()`'s type argument).
const NON_STREAM_TYPES: &[u64] = &[2, 3, 4, 5, 6, 10];

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// Builds and installs the filter on the calling thread (the helper is single-threaded).
///
/// # Errors
/// A message when the architecture is unsupported or the kernel refuses the filter.
pub(crate) fn install(network: bool, tcp_confined: bool) -> Result<(), FilterError> {
    let program = build(network, tcp_confined)?;
    seccompiler::apply_filter(&program).map_err(FilterError::of)
}

/// The filter as BPF for this architecture.
///
/// # Errors
/// A message when the architecture is unsupported or a rule is malformed.
pub(crate) fn build(network: bool, tcp_confined: bool) -> Result<BpfProgram, FilterError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(FilterError::of)?;
    let mut rules = Rules::new();
    for syscall in always_denied() {
        rules.insert(syscall, Vec::new());
    }
    let ioctl = DENIED_IOCTLS
        .iter()
        .map(|request| rule(&[(1, SeccompCmpOp::Eq, *request)]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl);
    if !network {
        network_rules(&mut rules, tcp_confined)?;
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(FilterError::of)?;
    BpfProgram::try_from(filter).map_err(FilterError::of)
}

fn always_denied() -> Vec<i64> {
    let mut syscalls = vec![
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_open_by_handle_at,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_quotactl,
    ];
    #[cfg(target_arch = "x86_64")]
    syscalls.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    syscalls
}

fn network_rules(rules: &mut Rules, tcp_confined: bool) -> Result<(), FilterError> {
    let inet = [libc::AF_INET as u64, libc::AF_INET6 as u64];
    // Any family but IPv4/IPv6 (Unix, netlink, packet, ...).
    let mut socket = vec![rule(&[
        (0, SeccompCmpOp::Ne, inet[0]),
        (0, SeccompCmpOp::Ne, inet[1]),
    ])?];
    for family in inet {
        if tcp_confined {
            for kind in NON_STREAM_TYPES {
                socket.push(rule(&[
                    (0, SeccompCmpOp::Eq, family),
                    (1, SeccompCmpOp::MaskedEq(0xF), *kind),
                ])?);
            }
            socket.push(rule(&[
                (0, SeccompCmpOp::Eq, family),
                (2, SeccompCmpOp::Ne, 0),
                (2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64),
            ])?);
        } else {
            socket.push(rule(&[(0, SeccompCmpOp::Eq, family)])?);
        }
    }
    rules.insert(libc::SYS_socket, socket);
    rules.insert(libc::SYS_listen, Vec::new());
    let fast_open = SeccompCmpOp::MaskedEq(MSG_FASTOPEN);
    rules.insert(
        libc::SYS_sendto,
        vec![rule(&[(3, fast_open.clone(), MSG_FASTOPEN)])?],
    );
    rules.insert(
        libc::SYS_sendmsg,
        vec![rule(&[(2, fast_open.clone(), MSG_FASTOPEN)])?],
    );
    rules.insert(
        libc::SYS_sendmmsg,
        vec![rule(&[(3, fast_open, MSG_FASTOPEN)])?],
    );
    Ok(())
}

/// A rule matching when all `(argument index, operator, value)` conditions hold (32-bit
/// comparisons: every argument tested here is an `int`).
fn rule(conditions: &[(u8, SeccompCmpOp, u64)]) -> Result<SeccompRule, FilterError> {
    let conditions = conditions
        .iter()
        .map(|(arg, op, value)| {
            SeccompCondition::new(*arg, SeccompCmpArgLen::Dword, op.clone(), *value)
                .map_err(FilterError::of)
        })
        .collect::<Result<Vec<_>, _>>()?;
    SeccompRule::new(conditions).map_err(FilterError::of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_build_for_every_network_setting() {
        for (network, tcp) in [(false, true), (false, false), (true, false)] {
            let program = build(network, tcp).unwrap_or_else(|e| panic!("{e}"));
            assert!(!program.is_empty());
        }
    }
}
