//! The files in `examples/` stay usable as they are: the config parses and means what its
//! comments say, the sample skill is discovered.

use std::path::Path;

use agent::config::FileConfig;
use agent::context::skills::Skills;

use crate::support::TestEnv;
use crate::support::env::texts;

fn example(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(path)
}

#[test]
fn example_config_parses() {
    let text = std::fs::read_to_string(example("config.toml")).unwrap();
    let config = FileConfig::parse(&text, Path::new("examples/config.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.default_role.as_deref(), Some("coder"));
    assert_eq!(config.permissions.rules.len(), 4);
}

#[test]
fn example_config_rules_apply() {
    let env = TestEnv::new();
    env.config(&std::fs::read_to_string(example("config.toml")).unwrap());
    let verdict = |command: &str| {
        let output = env.run(&["check", command]);
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        stdout.lines().next().unwrap_or("").to_string()
    };
    assert_eq!(verdict("cargo test --workspace"), "allow");
    assert_eq!(verdict("npm publish"), "deny");
    assert_eq!(verdict("rm -rf target"), "deny");
}

#[test]
fn example_skill_is_discovered() {
    let home = tempfile::tempdir().unwrap();
    let skills_dir = home.path().join("skills/release-notes");
    std::fs::create_dir_all(&skills_dir).unwrap();
    std::fs::copy(
        example("skills/release-notes/SKILL.md"),
        skills_dir.join("SKILL.md"),
    )
    .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (skills, warnings) = Skills::discover(workspace.path(), home.path());
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(skills.list().len(), 1);
    let (body, skill) = skills.body("release-notes").unwrap();
    assert!(skill.description.starts_with("Write release notes"));
    assert!(body.contains("git describe --tags"));
}
