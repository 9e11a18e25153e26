//! How programs spell options: GNU long options may be abbreviated to any unambiguous
//! prefix (`--exec` for `--exec-path`), so a dangerous long option is recognised by prefix.
//! Shared by the option tables of [`super::hazards`], [`super::git`] and [`super::sed`].

/// The dangerous long option that `name` (without `--`) spells or abbreviates.
pub(crate) fn long_match<'a>(
    long: &'a [(&'a str, &'a str)],
    name: &str,
) -> Option<(&'a str, &'a str)> {
    if name.is_empty() {
        return None;
    }
    long.iter()
        .find(|(option, _)| {
            option
                .strip_prefix("--")
                .is_some_and(|o| o.starts_with(name))
        })
        .copied()
}
